"""The temporal graph: what was true then, what was known then, merges, replays, forgetting."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from uuid import UUID, uuid5

import pytest

from events.base import Event
from events.facts import (
    EntitiesExtracted,
    Entity,
    EntityMerged,
    RelationshipAsserted,
    RelationshipInvalidated,
)
from events.memory import MemoryForgotten
from projections.graph import GraphProjection, graph_projection
from projections.graph import queries as q
from tests.projections.feed import opened
from tests.projections.test_runner import fresh_database
from tests.projections.topic_feed import TopicFeed

GROUP = "acme:s1"
NS = UUID("0b7c1a52-8f43-4f0e-9a39-1d9c1b0f6d11")
ALICE, ACME, GLOBEX, BOB, ROBERT = (uuid5(NS, n) for n in ("alice", "acme", "globex", "bob", "rob"))
AT_ACME, AT_GLOBEX, KNOWS = (uuid5(NS, n) for n in ("r-acme", "r-globex", "r-knows"))
EPISODE = {n: uuid5(NS, f"episode-{n}") for n in (1, 10, 20)}


def day(n: int) -> datetime:
    """System time: the n-th day on which the memory learned something."""
    return datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=n)


def year(y: int, month: int = 1) -> datetime:
    """World time."""
    return datetime(y, month, 1, tzinfo=UTC)


def entity(entity_id: UUID, name: str, kind: str, **attributes: str) -> Entity:
    return Entity(
        entity_id=entity_id, name=name, entity_type=kind, attributes=attributes,
        valid_from=year(2020),
    )  # fmt: skip


def works_at(rel: UUID, company: UUID, since: datetime, at: int, group: str = GROUP) -> Event:
    return RelationshipAsserted(
        group_id=group, relationship_id=rel, source_entity_id=ALICE, target_entity_id=company,
        relation_type="works_at", fact="Alice works there", valid_from=since,
        episode_id=EPISODE.get(at), occurred_at=day(at),
    )  # fmt: skip


def left_acme(until: datetime, at: int) -> Event:
    return RelationshipInvalidated(
        group_id=GROUP, relationship_id=AT_ACME, valid_to=until, invalidated_by=AT_GLOBEX,
        reason="moved to Globex", episode_id=EPISODE[at], occurred_at=day(at),
    )  # fmt: skip


def people(group: str = GROUP, at: int = 1) -> Event:
    return EntitiesExtracted(
        group_id=group, episode_id=EPISODE[1], generated_by="local", model="rules",
        entities=(entity(ALICE, "Alice", "person"), entity(ACME, "Acme", "company"),
                  entity(GLOBEX, "Globex", "company")),
        occurred_at=day(at),
    )  # fmt: skip


def career() -> list[Event]:
    """Alice at Acme from 2020 (day 1); at Globex from 2023 (day 10); corrected on day 20:
    she actually moved in July 2023."""
    return [
        people(),
        works_at(AT_ACME, ACME, year(2020), at=1),
        works_at(AT_GLOBEX, GLOBEX, year(2023), at=10),
        left_acme(year(2023), at=10),
        works_at(AT_GLOBEX, GLOBEX, year(2023, 7), at=20),
        left_acme(year(2023, 7), at=20),
    ]


@pytest.fixture
async def graph(postgres_dsn: str) -> AsyncIterator[GraphProjection]:
    async with opened(graph_projection(await fresh_database(postgres_dsn))) as projection:
        yield projection


async def employers(
    graph: GraphProjection, as_of: datetime | None = None, known_at: datetime | None = None
) -> list[str | None]:
    facts = await q.facts_for(graph.pool, GROUP, as_of=as_of, known_at=known_at)
    return [f.target_name for f in facts]


async def test_as_of_answers_with_the_fact_that_was_valid_then(graph: GraphProjection) -> None:
    await TopicFeed(graph)(*career())
    assert await employers(graph, as_of=year(2019)) == []
    assert await employers(graph, as_of=year(2021)) == ["Acme"]
    assert await employers(graph, as_of=year(2023, 3)) == ["Acme"]  # after the correction
    assert await employers(graph, as_of=year(2023, 8)) == ["Globex"]
    assert await employers(graph) == ["Globex"]  # now


async def test_known_at_answers_with_what_was_known_then(graph: GraphProjection) -> None:
    await TopicFeed(graph)(*career())
    march_2023 = year(2023, 3)
    assert await employers(graph, as_of=march_2023, known_at=day(0)) == []
    assert await employers(graph, as_of=march_2023, known_at=day(5)) == ["Acme"]
    assert await employers(graph, as_of=march_2023, known_at=day(15)) == ["Globex"]
    assert await employers(graph, as_of=march_2023, known_at=day(25)) == ["Acme"]
    [believed] = await q.facts_for(graph.pool, GROUP, known_at=day(5), as_of=year(2030))
    assert (believed.target_name, believed.valid_to) == ("Acme", None)  # not yet invalidated


async def test_history_keeps_every_version_with_its_four_timestamps_and_provenance(
    graph: GraphProjection,
) -> None:
    await TopicFeed(graph)(*career())
    history = await q.entity_with_history(graph.pool, GROUP, ALICE)
    assert history is not None
    acme = [f for f in history.relationships if f.relationship_id == AT_ACME]
    assert [(f.version, f.valid_from, f.valid_to, f.recorded_at, f.expired_at) for f in acme] == [
        (1, year(2020), None, day(1), day(10)),
        (2, year(2020), year(2023), day(10), day(20)),
        (3, year(2020), year(2023, 7), day(20), None),
    ]
    assert [(f.provenance.change, f.provenance.episode_id, f.provenance.offset) for f in acme] == [
        ("asserted", EPISODE[1], 1),
        ("invalidated", EPISODE[10], 3),
        ("invalidated", EPISODE[20], 5),
    ]
    assert {f.provenance.topic for f in acme} == {"tribal.memory.facts"}
    assert acme[-1].invalidated_by == AT_GLOBEX
    assert [(v.provenance.change, v.provenance.episode_id) for v in history.versions] == [
        ("extracted", EPISODE[1])
    ]


async def test_replaying_the_same_batch_twice_changes_nothing(graph: GraphProjection) -> None:
    feed = TopicFeed(graph)
    batch = feed.batch(*career())
    assert await graph.apply(batch) == 6
    before = await q.entity_with_history(graph.pool, GROUP, ALICE)
    assert await graph.apply(batch) == 0
    # The same facts produced again upstream (new event ids, new offsets) add no versions.
    again = [e.model_copy(update={"event_id": uuid5(NS, str(e.event_id))}) for e in career()]
    await feed(*again[:3])
    after = await q.entity_with_history(graph.pool, GROUP, ALICE)
    assert before is not None
    assert after is not None
    assert after.relationships == before.relationships


async def test_a_merge_keeps_the_existing_id_and_valid_from_and_overwrites_attributes(
    graph: GraphProjection,
) -> None:
    feed = TopicFeed(graph)
    robert = entity(ROBERT, "Robert", "person", role="engineer", city="Oslo")
    bob = entity(BOB, "Bob", "person", role="manager").model_copy(update={"valid_from": year(2022)})
    await feed(
        EntitiesExtracted(group_id=GROUP, episode_id=EPISODE[1], generated_by="local",
                          model="rules", entities=(robert, bob), occurred_at=day(1)),
        RelationshipAsserted(group_id=GROUP, relationship_id=KNOWS, source_entity_id=BOB,
                             target_entity_id=ALICE, relation_type="knows",
                             valid_from=year(2021), occurred_at=day(1)),
        EntityMerged(group_id=GROUP, existing_entity_id=ROBERT, merged_entity_id=BOB,
                     stage="fuzzy", score=0.9, entity=robert.model_copy(
                         update={"attributes": {"role": "manager"}}), occurred_at=day(2)),
    )  # fmt: skip
    [found] = await q.search_entities(graph.pool, GROUP, "bob")
    assert (found.entity_id, found.name, found.aliases) == (ROBERT, "Robert", ("Bob",))
    assert found.valid_from == year(2020)
    assert found.attributes == {"role": "manager", "city": "Oslo"}
    [fact] = await q.facts_for(graph.pool, GROUP)
    assert (fact.source_entity_id, fact.source_name) == (ROBERT, "Robert")
    history = await q.entity_with_history(graph.pool, GROUP, BOB)  # an alias resolves
    assert history is not None
    assert history.entity.entity_id == ROBERT
    assert [a.alias_id for a in history.aliases] == [BOB]
    assert {v.extracted_id for v in history.versions} == {ROBERT, BOB}
    assert [f.relationship_id for f in history.relationships] == [KNOWS]


async def test_forgetting_a_group_or_a_tenant_erases_it_and_replays_cannot_bring_it_back(
    graph: GraphProjection,
) -> None:
    feed = TopicFeed(graph)
    groups = ("acme:s1", "acme:s2", "globex:s1")
    facts = [e for g in groups for e in (people(g), works_at(AT_ACME, ACME, year(2020), 1, g))]
    await feed(*facts)
    await feed(MemoryForgotten(group_id="acme:s1", occurred_at=day(30)))
    remaining = {g: len(await q.facts_for(graph.pool, g)) for g in groups}
    assert remaining == {"acme:s1": 0, "acme:s2": 1, "globex:s1": 1}

    await feed(MemoryForgotten(group_id="acme:_tenant", scope="tenant", occurred_at=day(31)))
    remaining = {g: len(await q.facts_for(graph.pool, g)) for g in groups}
    assert remaining == {"acme:s1": 0, "acme:s2": 0, "globex:s1": 1}
    assert await q.search_entities(graph.pool, "acme:s2", "alice") == []

    await feed(*facts)  # delivered again after the forget, e.g. another topic replayed later
    assert [len(await q.facts_for(graph.pool, g)) for g in groups] == [0, 0, 1]
    await feed(works_at(AT_ACME, ACME, year(2020), 40, "acme:s1"))  # learned anew afterwards
    assert len(await q.facts_for(graph.pool, "acme:s1")) == 1
