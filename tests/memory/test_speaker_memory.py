"""A conversation's later turns know who its speaker is, and a change of value closes
the old one: the local extractor in the real lanes, on the issue's own example."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import NAMESPACE_URL, uuid5

from devstack.memory import memory
from events.facts import EntitiesExtracted, RelationshipAsserted, RelationshipInvalidated
from events.memory import TurnRecorded

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TURNS = [
    "Hi, I'm Priya Raman, I work at Globex as a data engineer.",
    "My email is priya@globex.example.",
    "I live in Leeds.",
    "I moved to Bristol last month.",
    "I now work at Initech instead of Globex.",
]


def turns(group_id: str) -> list[TurnRecorded]:
    return [
        TurnRecorded(
            event_id=uuid5(NAMESPACE_URL, f"{group_id}/{n}"),
            occurred_at=START + timedelta(days=3 * n),
            group_id=group_id,
            user_message=text,
            agent_response="Thanks, noted.",
        )
        for n, text in enumerate(TURNS)
    ]


async def test_later_turns_relate_the_introduced_speaker_and_changes_close_old_values() -> None:
    m = memory()
    _, facts, _ = await m.run(turns("acme:priya"))
    raws = [f for f in facts if isinstance(f, EntitiesExtracted)]
    names = {e.entity_id: e.name for r in raws for e in r.entities}
    merged = {
        e.entity_id: e.name for e in m.extractor.fold.dedup.groups["acme:priya"].entities.values()
    }
    names |= merged
    asserted = [f for f in facts if isinstance(f, RelationshipAsserted)]
    said = {
        (names[f.source_entity_id], f.relation_type, names[f.target_entity_id]) for f in asserted
    }
    assert {
        ("Priya Raman", "works_at", "Globex"),
        ("Priya Raman", "email", "priya@globex.example"),
        ("Priya Raman", "lives_in", "Leeds"),
        ("Priya Raman", "lives_in", "Bristol"),
        ("Priya Raman", "works_at", "Initech"),
    } <= said
    closed = {f.relationship_id for f in facts if isinstance(f, RelationshipInvalidated)}
    old = {names[f.target_entity_id] for f in asserted if f.relationship_id in closed}
    assert old == {"Leeds", "Globex"}
    assert m.extractor.established["acme:priya"] == {
        "speaker": "Priya Raman",
        "organisation": "Initech",
        "organisations": "Globex|Initech",
    }


async def test_a_replay_rebuilds_who_the_speaker_is() -> None:
    first = memory()
    _, facts, _ = await first.run(turns("acme:priya")[:1])
    again = memory()
    again.extractor.reset(0, facts)
    assert again.extractor.established["acme:priya"]["speaker"] == "Priya Raman"


async def test_a_switch_closes_the_named_old_value_of_a_many_valued_relation() -> None:
    m = memory()
    said = [
        "Hi, this is Tom Berg from Acme.",
        "We use Square for card payments.",
        "We switched from Square to Stripe last week.",
    ]
    conversation = [
        TurnRecorded(
            event_id=uuid5(NAMESPACE_URL, f"acme:tom/{n}"),
            occurred_at=START + timedelta(days=n),
            group_id="acme:tom",
            user_message=text,
            agent_response="Thanks.",
        )
        for n, text in enumerate(said)
    ]
    _, facts, _ = await m.run(conversation)
    names = {
        e.entity_id: e.name for e in m.extractor.fold.dedup.groups["acme:tom"].entities.values()
    }
    uses = {
        f.relationship_id: names[f.target_entity_id]
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == "uses"
    }
    closed = [f for f in facts if isinstance(f, RelationshipInvalidated)]
    assert sorted(uses.values()) == ["Square", "Stripe"]
    assert [uses[f.relationship_id] for f in closed] == ["Square"]
    assert closed[0].reason == "replaced: uses Square"
