"""The scripted 200-turn support conversation through the local provider, in-process."""

from __future__ import annotations

from collections import Counter

from devstack.memory import conversation, memory
from events.facts import (
    EntitiesExtracted,
    EntityMerged,
    RelationshipAsserted,
    RelationshipInvalidated,
)

EXPECTED_ENTITIES = [
    ("address", "12 Oak Street"),
    ("address", "48 Elm Road"),
    ("email", "robert.smith@example.com"),
    ("issue", "TCK-4821"),
    ("order", "#A-1001"),
    ("order", "#A-1002"),
    ("person", "Alice Smith"),
    ("person", "Dana"),
    ("person", "Robert Smith"),
    ("plan", "Premium plan"),
    ("product", "Apollo Router"),
    ("product", "Zephyr Hub"),
]


async def test_conversation_yields_expected_entities_aliases_and_one_replaced_fact() -> None:
    m = memory()
    episodes, facts, summaries = await m.run(conversation("acme:support-1"))
    assert len(episodes) == 200
    assert sum(isinstance(f, EntitiesExtracted) for f in facts) == 200
    entities = m.extractor.fold.dedup.groups["acme:support-1"].entities.values()
    assert sorted((e.entity_type, e.name) for e in entities) == EXPECTED_ENTITIES

    raw_names = {
        e.entity_id: e.name for f in facts if isinstance(f, EntitiesExtracted) for e in f.entities
    }
    merged = [f for f in facts if isinstance(f, EntityMerged)]
    aliases = {(raw_names[f.merged_entity_id], f.stage) for f in merged if f.stage != "exact"}
    assert aliases == {
        ("Robert", "rule"),
        ("Bob", "rule"),
        ("Bobby", "rule"),
        ("Robert Smyth", "fuzzy"),
    }
    robert = next(e for e in entities if e.name == "Robert Smith")
    assert {f.existing_entity_id for f in merged if f.stage != "exact"} == {robert.entity_id}
    assert all(f.score is not None for f in merged)

    invalidated = [f for f in facts if isinstance(f, RelationshipInvalidated)]
    lives = [
        f for f in facts if isinstance(f, RelationshipAsserted) and f.relation_type == "lives_at"
    ]
    assert len(invalidated) == 1
    assert len(lives) == 2
    old, new = lives
    names = {e.entity_id: e.name for e in entities}
    assert (names[old.target_entity_id], names[new.target_entity_id]) == (
        "12 Oak Street",
        "48 Elm Road",
    )
    assert invalidated[0].relationship_id == old.relationship_id
    assert invalidated[0].valid_to == new.valid_from
    assert invalidated[0].invalidated_by == new.relationship_id
    assert old.source_entity_id == new.source_entity_id == robert.entity_id
    assert Counter(f.relation_type for f in facts if isinstance(f, RelationshipAsserted)) == {
        "contains": 1, "placed": 1, "lives_at": 2, "email": 1, "plan": 1,
        "uses": 1, "ordered": 1,
        "owns": 1,  # the learned reader: "I also ordered a Zephyr Hub" (delivered)
    }  # fmt: skip

    kinds = [s.summary_type for s in summaries]
    assert kinds.count("window") == 10
    assert kinds.count("meta") == 2
    for s in summaries:
        ratio = len(s.content) / s.source_length
        assert (0.3 <= ratio <= 0.5) if s.summary_type == "window" else (0.5 <= ratio <= 0.7)
    meta = [s for s in summaries if s.summary_type == "meta"]
    windows = [s.summary_id for s in summaries if s.summary_type == "window"]
    assert [list(s.summary_ids) for s in meta] == [windows[:5], windows[5:]]
    assert all(s.summaries_covered == 5 for s in meta)
    assert all(
        s.episodes_covered == 20 and len(s.episode_ids) == 20
        for s in summaries[:5]
        if s.summary_type == "window"
    )


async def test_conversation_is_deterministic_with_the_local_provider() -> None:
    first = await memory().run(conversation("acme:support-1"))
    second = await memory().run(conversation("acme:support-1"))
    strip = {"occurred_at"}
    for a, b in zip(first[1], second[1], strict=True):
        assert a.model_dump(exclude=strip) == b.model_dump(exclude=strip)
    assert [s.content for s in first[2]] == [s.content for s in second[2]]


async def test_redelivered_episodes_change_nothing() -> None:
    m = memory()
    turns = conversation("acme:support-1", limit=30)
    episodes, _facts, _summaries = await m.run(turns)
    again = [e.event for e in await m.episoder(turns)]
    assert [e.model_dump(exclude={"embedding"}) for e in again] == [
        e.model_dump(exclude={"embedding"}) for e in episodes
    ]
    assert await m.extractor.process(episodes) == []
    assert await m.summarizer.process(episodes) == []
