"""Each dedup stage alone, the order of stages, config switches and merging."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

import pytest

from devstack.memory import HashEmbedder
from events.facts import Entity
from streams.memory.config import EntityDeduplicationConfig
from streams.memory.dedup import EntityDeduplicator, merge_entities

T0 = datetime(2026, 1, 1, tzinfo=UTC)
G = "acme:s1"


def entity(name: str, kind: str = "person", **attributes: str) -> Entity:
    return Entity(entity_id=uuid4(), name=name, entity_type=kind, attributes=attributes,
                  valid_from=T0)  # fmt: skip


def vec(name: str) -> list[float]:
    return HashEmbedder().encode([name])[0]


def dedup(*known: Entity, **config: object) -> EntityDeduplicator:
    d = EntityDeduplicator(EntityDeduplicationConfig.model_validate(config))
    for e in known:
        d.add(G, e, vec(e.name))
    return d


@pytest.mark.parametrize(
    ("existing", "new", "stage"),
    [
        ("Robert Smith", "  robert   SMITH ", "exact"),
        ("Robert Smith", "Robert Smyth", "fuzzy"),
        ("Robert Smith", "Bob", "rule"),
        ("Robert Smith", "Bobby Smith", "rule"),
    ],
)
def test_each_stage_finds_its_duplicate(existing: str, new: str, stage: str) -> None:
    kept = entity(existing)
    found = dedup(kept).match(entity(new), G, vec(new))
    assert found is not None
    assert (found.entity.entity_id, found.stage) == (kept.entity_id, stage)


def test_embedding_stage_matches_when_fuzzy_is_off() -> None:
    kept = entity("Customer Care Portal", "concept")
    found = dedup(kept, fuzzy_match_enabled=False).match(
        entity("customer-care portal!", "concept"), G, vec("customer care portals")
    )
    assert found is not None
    assert found.stage in ("exact", "embedding")
    found = dedup(kept, fuzzy_match_enabled=False, exact_match_enabled=False).match(
        entity("Customer Care Portals", "concept"), G, vec("Customer Care Portals")
    )
    assert found is not None
    assert found.stage == "embedding"
    assert found.score >= 0.8


def test_stages_run_in_order_and_stop_at_the_first_match() -> None:
    kept = entity("Robert Smith")
    found = dedup(kept).match(entity("Robert Smith"), G, vec("Robert Smith"))
    assert found is not None
    assert found.stage == "exact"


def test_each_stage_can_be_switched_off() -> None:
    kept = entity("Robert Smith")
    off = {"exact_match_enabled": False, "fuzzy_match_enabled": False,
           "embedding_match_enabled": False, "rule_based_enabled": False}  # fmt: skip
    assert dedup(kept, **off).match(entity("Robert Smith"), G, vec("Robert Smith")) is None
    assert (
        dedup(kept, fuzzy_match_enabled=False, embedding_match_enabled=False).match(
            entity("Robert Smyth"), G, vec("Robert Smyth")
        )
        is None
    )
    assert dedup(kept, rule_based_enabled=False).match(entity("Bob"), G, vec("Bob")) is None


def test_identifiers_only_merge_on_exact_match() -> None:
    d = dedup(entity("#A-1001", "order"), entity("12 Oak Street", "address"))
    assert d.match(entity("#A-1002", "order"), G, vec("#A-1002")) is None
    assert d.match(entity("14 Oak Street", "address"), G, vec("14 Oak Street")) is None
    found = d.match(entity("#a1001", "order"), G)
    assert found is not None
    assert found.stage == "exact"


def test_ambiguous_first_names_and_other_types_do_not_merge() -> None:
    d = dedup(entity("Robert Smith"), entity("Robert Jones"))
    assert d.match(entity("Bob"), G) is None
    assert dedup(entity("Apollo", "product")).match(entity("Apollo", "person"), G) is None


def test_shared_identifying_attribute_is_a_rule_match() -> None:
    kept = entity("R. Smith", email="r@example.com")
    found = dedup(kept).match(entity("Customer 42", email="R@example.com"), G)
    assert found is not None
    assert (found.stage, found.score) == ("rule", 1.0)


def test_search_stays_within_one_group() -> None:
    d = dedup(entity("Robert Smith"))
    assert d.match(entity("Robert Smith"), "globex:s1", vec("Robert Smith")) is None


async def test_merge_keeps_id_and_valid_from_and_new_attributes_win() -> None:
    old = entity("Bob", plan="basic", city="Springfield")
    new = Entity(entity_id=uuid4(), name="Robert Smith", entity_type="person",
                 attributes={"plan": "premium"}, confidence="high",
                 valid_from=datetime(2026, 2, 1, tzinfo=UTC))  # fmt: skip
    merged = await EntityDeduplicator().merge_entities(old, new)
    assert merged == merge_entities(old, new)
    assert (merged.entity_id, merged.valid_from) == (old.entity_id, old.valid_from)
    assert merged.attributes == {"plan": "premium", "city": "Springfield"}
    assert (merged.name, merged.confidence) == ("Robert Smith", "high")
    assert await dedup(old).find_duplicate(entity("Bob"), G) == old
