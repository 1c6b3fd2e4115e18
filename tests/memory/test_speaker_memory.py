"""A conversation's later turns know who its speaker is, and a change of value closes
the old one: the local extractor in the real lanes, on the issue's own example."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import NAMESPACE_URL, UUID, uuid5

import pytest

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
    established = m.extractor.established["acme:priya"]
    assert {k: established[k] for k in ("speaker", "organisation", "organisations")} == {
        "speaker": "Priya Raman",
        "organisation": "Initech",
        "organisations": "Globex|Initech",
    }
    assert set(established["relations"].split("|")) >= {"works_at", "email", "lives_in"}


async def test_a_replay_rebuilds_who_the_speaker_is() -> None:
    first = memory()
    _, facts, _ = await first.run(turns("acme:priya")[:1])
    again = memory()
    again.extractor.reset(0, facts)
    assert again.extractor.established["acme:priya"]["speaker"] == "Priya Raman"


def conversation_of(group_id: str, said: list[str]) -> list[TurnRecorded]:
    return [
        TurnRecorded(
            event_id=uuid5(NAMESPACE_URL, f"{group_id}/{n}"),
            occurred_at=START + timedelta(days=n),
            group_id=group_id,
            user_message=text,
            agent_response="Thanks.",
        )
        for n, text in enumerate(said)
    ]


async def facts_of(group_id: str, said: list[str]) -> tuple[dict[UUID, str], list[object]]:
    """What the real lanes make of ``said``: the fact ids with their values as named at the
    end, and every fact event."""
    m = memory()
    _, facts, _ = await m.run(conversation_of(group_id, said))
    names = {e.entity_id: e.name for e in m.extractor.fold.dedup.groups[group_id].entities.values()}
    return names, list(facts)


async def holding(group_id: str, said: list[str], relation: str) -> dict[str, bool]:
    """Each value of ``relation`` the real lanes asserted from ``said``, and whether it
    still holds at the end."""
    names, facts = await facts_of(group_id, said)
    closed = {f.relationship_id for f in facts if isinstance(f, RelationshipInvalidated)}
    return {
        names[f.target_entity_id]: f.relationship_id not in closed
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == relation
    }


@pytest.mark.parametrize(
    ("change", "relation", "old", "new"),
    [
        ("We switched from Square to Stripe last week.", "uses", "Square", "Stripe"),
        ("We're leaving Square for Stripe at the end of the month.", "uses", "Square", "Stripe"),
        ("We replaced Square with Stripe.", "uses", "Square", "Stripe"),
    ],
)
async def test_a_switch_closes_the_named_old_value_of_a_many_valued_relation(
    change: str, relation: str, old: str, new: str
) -> None:
    names, facts = await facts_of(
        "acme:tom", ["Hi, this is Tom Berg from Acme.", "We use Square for card payments.", change]
    )
    values = {
        f.relationship_id: names[f.target_entity_id]
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == relation
    }
    closed = [f for f in facts if isinstance(f, RelationshipInvalidated)]
    assert sorted(values.values()) == sorted([old, new])
    assert [values[f.relationship_id] for f in closed] == [old]
    assert closed[0].reason == f"replaced: {relation} {old}"


async def test_a_replaced_value_is_found_by_one_of_its_words_even_with_a_digit() -> None:
    names, facts = await facts_of(
        "acme:ana",
        [
            "Hi, Ana Ruiz here. I bought a Lenovo ThinkPad T14 from you last year.",
            "IT replaced my ThinkPad with a Surface Laptop 6 yesterday.",
        ],
    )
    owned = {
        f.relationship_id: names[f.target_entity_id]
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == "owns"
    }
    closed = {f.relationship_id for f in facts if isinstance(f, RelationshipInvalidated)}
    assert {v for rid, v in owned.items() if rid in closed} == {"Lenovo ThinkPad T14"}
    assert "Surface Laptop 6" in {v for rid, v in owned.items() if rid not in closed}


async def test_an_organisation_read_in_one_turn_is_the_same_one_in_the_next() -> None:
    names, facts = await facts_of(
        "acme:tamar",
        [
            "Hi all, our website (hosted with you on Managed Basic) is slow. We're a group of "
            "three cafés in Melbourne, Olive & Fig. Cheers, Tamar Levi",
            "Much faster, thanks! Online ordering runs through Square, by the way.",
            "We've opened café number four, please move us up to Managed Pro.",
        ],
    )
    subjects = {
        names[f.source_entity_id]
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type in ("plan", "uses")
    }
    closed = {f.relationship_id for f in facts if isinstance(f, RelationshipInvalidated)}
    plans = {
        names[f.target_entity_id]: f.relationship_id in closed
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relation_type == "plan"
    }
    assert subjects == {"Olive & Fig"}
    assert plans == {"Managed Basic": True, "Managed Pro": False}


async def test_a_move_closes_every_site_held_before_but_none_named_with_it() -> None:
    sites = await holding(
        "acme:lena",
        [
            "Hi, Lena Hoffmann here from Atelier Cedre, a small design studio in Beirut.",
            "We've relocated the studio to Limassol, Cyprus.",
        ],
        "located_in",
    )
    assert sites == {"Beirut": False, "Limassol": True, "Cyprus": True}


async def test_a_value_said_gone_after_its_name_is_replaced() -> None:
    _, facts = await facts_of(
        "acme:sam",
        [
            "Hi, Sam Okoro from Sankofa Builds. We do our books in Sage 50.",
            "Sage is gone, we have been on QuickBooks since the start of the month.",
        ],
    )
    closed = [f for f in facts if isinstance(f, RelationshipInvalidated)]
    assert [f.reason for f in closed] == ["replaced: uses Sage"]


@pytest.mark.parametrize(
    ("said", "closed"),
    [
        (["Our data warehouse is Snowflake."], ["Snowflake"]),
        (["Our data warehouse is Snowflake.", "We use Slack for chat."], []),
    ],
)
async def test_a_switch_naming_only_the_new_value_replaces_the_one_thing_used_before(
    said: list[str], closed: list[str]
) -> None:
    names, facts = await facts_of(
        "acme:priya2",
        [
            "Hi, I'm Priya Raman, I work at Globex as a data engineer.",
            *said,
            "The migration finished today, everything is on BigQuery now.",
        ],
    )
    gone = {f.relationship_id for f in facts if isinstance(f, RelationshipInvalidated)}
    assert [
        names[f.target_entity_id]
        for f in facts
        if isinstance(f, RelationshipAsserted) and f.relationship_id in gone
    ] == closed


@pytest.mark.parametrize(
    ("said", "relation", "old", "new"),
    [
        (["Hello, I'm Joy Bakare, I have two lines on your Family 20GB bundle. We live in "
          "Croydon.", "Right, we finally got the keys and we're settled in Sutton now."],
         "lives_in", "Croydon", "Sutton"),
        (["Hi, Lena Brandt here, office manager at Kite Studio. We've got your Corporate 50 "
          "plan.", "Just checked the portal, it shows Corporate 100 now. Thanks!"],
         "plan", "Corporate 50", "Corporate 100"),
    ],
)  # fmt: skip
async def test_a_change_said_in_passing_fills_the_slot_the_conversation_already_had(
    said: list[str], relation: str, old: str, new: str
) -> None:
    assert await holding("acme:slot", said, relation) == {old: False, new: True}
