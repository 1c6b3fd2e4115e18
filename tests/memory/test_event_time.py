"""Memory keeps the time a turn was said, not the time it arrived: episodes, facts and
summaries carry the turn's ``occurred_at``, and turns that arrive out of order (an
import, a late producer) end in the same facts as the same turns in order."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from uuid import NAMESPACE_URL, UUID, uuid5

from devstack.memory import Memory, config, memory
from events.base import Event
from events.facts import RelationshipAsserted, RelationshipInvalidated
from events.memory import TurnRecorded
from projections.graph import GraphProjection
from projections.graph import queries as q
from streams.memory.config import SummarizationConfig
from tests.projections import test_graph
from tests.projections.topic_feed import TopicFeed

START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
SAID = [
    ("Caroline", "I live in Leeds."),
    ("Melanie", "My email is mel@example.org."),
    ("Caroline", "I work at Initech."),
    ("Melanie", "I live in York."),
    ("Caroline", "I moved to Bristol last month."),
    ("Melanie", "I use Square for card payments."),
    ("Caroline", "My email is caroline@example.com."),
    ("Melanie", "I switched from Square to Stripe last week."),
    ("Caroline", "I now work at Hooli instead of Initech."),
    ("Melanie", "I moved to Leeds."),
    ("Caroline", "I live in Bristol."),
]
Fact = tuple[str, str, str, date, date | None]


def week(n: int) -> datetime:
    return START + timedelta(weeks=n)


def turns(group_id: str) -> list[TurnRecorded]:
    """Two people, one turn a week, each in their own name."""
    return [
        TurnRecorded(
            event_id=uuid5(NAMESPACE_URL, f"{group_id}/{n}"), occurred_at=week(n),
            group_id=group_id, user_message=text, agent_response="", speaker=who,
        )
        for n, (who, text) in enumerate(SAID)
    ]  # fmt: skip


async def facts_of(m: Memory, arriving: Sequence[TurnRecorded], batch: int = 1) -> list[Event]:
    out: list[Event] = []
    for i in range(0, len(arriving), batch):
        _, facts, _ = await m.run(arriving[i : i + batch])
        out += facts
    return out


def told(m: Memory, group_id: str, facts: Sequence[Event]) -> list[Fact]:
    """Every fact as the events tell it in the end: who, relation, what, from, until."""
    names = {e.entity_id: e.name for e in m.extractor.fold.dedup.groups[group_id].entities.values()}
    state: dict[UUID, list[object]] = {}
    for f in facts:
        if isinstance(f, RelationshipAsserted):
            state[f.relationship_id] = [
                names[f.source_entity_id], f.relation_type, names[f.target_entity_id],
                f.valid_from.date(), f.valid_to.date() if f.valid_to else None,
            ]  # fmt: skip
        elif isinstance(f, RelationshipInvalidated):
            state[f.relationship_id][4] = f.valid_to.date()
    return sorted(tuple(s) for s in state.values())  # type: ignore[misc]


def known_since(m: Memory, group_id: str) -> dict[str, datetime]:
    return {e.name: e.valid_from for e in m.extractor.fold.dedup.groups[group_id].entities.values()}


async def test_shuffled_turns_end_in_the_same_facts_as_in_order() -> None:
    in_order = memory()
    expected = told(in_order, "acme:t", await facts_of(in_order, turns("acme:t")))
    since = known_since(in_order, "acme:t")
    assert since["Bristol"] == week(4)
    assert ("Caroline", "lives_in", "Bristol", week(4).date(), None) in expected
    assert ("Caroline", "works_at", "Initech", week(2).date(), week(8).date()) in expected
    assert ("Melanie", "uses", "Square", week(5).date(), week(7).date()) in expected
    for seed in range(6):
        arriving = turns("acme:t")
        random.Random(seed).shuffle(arriving)
        shuffled = memory()
        got = told(shuffled, "acme:t", await facts_of(shuffled, arriving, batch=1 + seed % 3))
        assert got == expected, f"arrival order {seed}"
        assert known_since(shuffled, "acme:t") == since, f"arrival order {seed}"


async def test_an_older_statement_arriving_late_never_closes_the_newer_value() -> None:
    m = memory()
    moved, lived = turns("acme:late")[4], turns("acme:late")[0]  # Bristol (week 4), Leeds (0)
    facts = await facts_of(m, [moved, lived])
    assert not any(isinstance(f, RelationshipInvalidated) for f in facts)
    assert told(m, "acme:late", facts) == [
        ("Caroline", "lives_in", "Bristol", week(4).date(), None),
        ("Caroline", "lives_in", "Leeds", week(0).date(), week(4).date()),
    ]


async def test_episodes_facts_and_summaries_carry_the_time_the_turns_were_said() -> None:
    cfg = config()
    cfg = cfg.model_copy(
        update={"summarization": SummarizationConfig.model_validate({"window": {
            "turns_per_summary": 4}})}
    )  # fmt: skip
    m = memory(cfg)
    said = turns("acme:when")
    episodes, facts, summaries = await m.run(said)
    assert [e.occurred_at for e in episodes] == [t.occurred_at for t in said]
    starts = {f.valid_from for f in facts if isinstance(f, RelationshipAsserted)}
    assert starts <= {t.occurred_at for t in said}
    ends = {f.valid_to for f in facts if isinstance(f, RelationshipInvalidated)}
    assert ends
    assert ends <= {t.occurred_at for t in said}
    assert [s.occurred_at for s in summaries] == [week(3), week(7)]


graph = test_graph.graph  # the same fixture: a graph projection on a fresh database


async def graph_facts(graph: GraphProjection, group_id: str, as_of: datetime) -> list[Fact]:
    facts = await q.facts_for(graph.pool, group_id, as_of=as_of)
    return sorted(
        (str(f.source_name), f.relation_type, str(f.target_name), f.valid_from.date(),
         f.valid_to.date() if f.valid_to else None)
        for f in facts
    )  # fmt: skip


async def graph_entities(graph: GraphProjection, group_id: str) -> dict[str, datetime]:
    return {e.name: e.valid_from for e in await q.search_entities(graph.pool, group_id, "")}


async def test_the_graph_holds_the_same_facts_whatever_order_the_turns_arrived_in(
    graph: GraphProjection,
) -> None:
    feed = TopicFeed(graph)
    await feed(*await facts_of(memory(), turns("acme:ordered")))
    arriving = turns("acme:shuffled")
    random.Random(7).shuffle(arriving)
    await feed(*await facts_of(memory(), arriving))
    for moment in (week(3), week(6), datetime.now(UTC)):
        ordered = await graph_facts(graph, "acme:ordered", moment)
        assert ordered
        assert await graph_facts(graph, "acme:shuffled", moment) == ordered
    now = await graph_facts(graph, "acme:shuffled", datetime.now(UTC))
    assert ("Caroline", "lives_in", "Bristol", week(4).date(), None) in now
    ordered_since = await graph_entities(graph, "acme:ordered")
    assert await graph_entities(graph, "acme:shuffled") == ordered_since
    assert ordered_since["Bristol"] == week(4)
