"""``EntityDeduplicator`` (seed 003): four stages, first match wins, one group at a time.

1. exact — normalised name (identifiers: letters and digits only);
2. fuzzy — rapidfuzz ``ratio`` ≥ ``fuzzy_threshold``;
3. embedding — cosine of name vectors ≥ ``embedding_threshold``;
4. rule — domain rules: a nickname or bare first name of exactly one known person
   (``Bob`` → ``Robert Smith``), or a shared identifying attribute (email, phone).

Names with a digit or an ``@`` are identifiers (orders, tickets, addresses, emails):
``#A-1001`` and ``#A-1002`` are 90% alike and still different orders, so only stage
1 applies to them. Candidates are always of the same entity type and always of the
same ``group_id``: each group has its own :class:`GroupEntities`, and nothing looks
across them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from uuid import UUID

import numpy as np
from rapidfuzz import fuzz, process

from events.facts import Entity
from streams.memory import metrics
from streams.memory.config import CONFIDENCE_RANK, EntityDeduplicationConfig
from streams.memory.names import canonical_first_name

IDENTIFYING_ATTRIBUTES = ("email", "phone", "customer_id")
_PUNCT = re.compile(r"[^\w@.\s-]")


def is_identifier(name: str) -> bool:
    """Orders, tickets, addresses, emails: only an exact match may merge them."""
    return "@" in name or any(c.isdigit() for c in name)


def normalise(name: str) -> str:
    """Case-folded, punctuation-free, single-spaced; identifiers keep letters and digits."""
    text = name.casefold().strip()
    if is_identifier(text) and "@" not in text:
        return "".join(c for c in text if c.isalnum())
    text = " ".join(_PUNCT.sub(" ", text).split())
    return text[4:] if text.startswith("the ") else text


@dataclass(frozen=True)
class DuplicateMatch:
    """The existing entity a candidate duplicates, and which stage said so."""

    entity: Entity
    stage: str
    score: float


class _Vectors:
    """A growable matrix of unit vectors, one row per name."""

    def __init__(self, dims: int) -> None:
        self.rows = np.zeros((16, dims), dtype=np.float32)
        self.ids: list[UUID] = []

    def add(self, entity_id: UUID, vector: np.ndarray) -> None:
        if len(self.ids) == len(self.rows):
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
        self.rows[len(self.ids)] = vector
        self.ids.append(entity_id)

    def best(self, vector: np.ndarray) -> tuple[UUID, float] | None:
        if not self.ids:
            return None
        scores = self.rows[: len(self.ids)] @ vector
        i = int(np.argmax(scores))
        return self.ids[i], float(scores[i])


def _unit(vector: list[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(v))
    return v / norm if norm else v


@dataclass
class GroupEntities:
    """The entities of one group, indexed for each stage."""

    entities: dict[UUID, Entity] = field(default_factory=dict)
    by_name: dict[tuple[str, str], UUID] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)
    name_ids: dict[str, list[UUID]] = field(default_factory=dict)
    vectors: dict[str, _Vectors] = field(default_factory=dict)
    people: dict[str, set[UUID]] = field(default_factory=dict)
    identifying: dict[tuple[str, str], UUID] = field(default_factory=dict)

    def index(self, entity: Entity, name: str, vector: list[float] | None) -> None:
        """Remember ``entity`` under ``name`` (its own, or an alias merged into it)."""
        self.entities[entity.entity_id] = entity
        kind, norm = entity.entity_type, normalise(name)
        if (kind, norm) in self.by_name:
            return
        self.by_name[(kind, norm)] = entity.entity_id
        if not is_identifier(name):
            self.names.setdefault(kind, []).append(norm)
            self.name_ids.setdefault(kind, []).append(entity.entity_id)
            if vector is not None:
                unit = _unit(vector)
                self.vectors.setdefault(kind, _Vectors(len(unit))).add(entity.entity_id, unit)
        if kind == "person":
            self.people.setdefault(canonical_first_name(entity.name), set()).add(entity.entity_id)
        for key in IDENTIFYING_ATTRIBUTES:
            if key in entity.attributes:
                self.identifying[(key, entity.attributes[key].casefold())] = entity.entity_id


class EntityDeduplicator:
    """Finds the existing entity a new one duplicates, within its group only."""

    def __init__(self, config: EntityDeduplicationConfig | None = None) -> None:
        self.config = config or EntityDeduplicationConfig()
        self.groups: dict[str, GroupEntities] = {}

    def group(self, group_id: str) -> GroupEntities:
        return self.groups.setdefault(group_id, GroupEntities())

    def match(
        self, entity: Entity, group_id: str, vector: list[float] | None = None
    ) -> DuplicateMatch | None:
        """The first stage that finds a duplicate of ``entity`` in ``group_id``."""
        g = self.groups.get(group_id)
        if g is None or not g.entities:
            return None
        c, kind = self.config, entity.entity_type
        norm, identifier = normalise(entity.name), is_identifier(entity.name)
        found: tuple[UUID, str, float] | None = None
        if c.exact_match_enabled and (hit := g.by_name.get((kind, norm))) is not None:
            found = (hit, "exact", 1.0)
        if found is None and c.fuzzy_match_enabled and not identifier and g.names.get(kind):
            best = process.extractOne(
                norm, g.names[kind], scorer=fuzz.ratio, score_cutoff=c.fuzzy_threshold * 100
            )
            if best is not None:
                found = (g.name_ids[kind][best[2]], "fuzzy", round(best[1] / 100, 4))
        if found is None and c.embedding_match_enabled and not identifier and vector is not None:
            best_vec = g.vectors[kind].best(_unit(vector)) if kind in g.vectors else None
            if best_vec is not None and best_vec[1] >= c.embedding_threshold:
                found = (best_vec[0], "embedding", round(best_vec[1], 4))
        if found is None and c.rule_based_enabled:
            found = self._rule(g, entity)
        if found is None:
            return None
        metrics.DEDUP_MATCHES.labels(found[1]).inc()
        return DuplicateMatch(g.entities[found[0]], found[1], found[2])

    def _rule(self, g: GroupEntities, entity: Entity) -> tuple[UUID, str, float] | None:
        for key in IDENTIFYING_ATTRIBUTES:
            value = entity.attributes.get(key)
            if value and (hit := g.identifying.get((key, value.casefold()))) is not None:
                return hit, "rule", 1.0
        if entity.entity_type != "person" or not entity.name.split():
            return None
        tokens = entity.name.split()
        candidates = [
            g.entities[i]
            for i in sorted(g.people.get(canonical_first_name(entity.name), ()))
            if len(tokens) == 1
            or len(g.entities[i].name.split()) == 1
            or g.entities[i].name.split()[-1].casefold() == tokens[-1].casefold()
        ]
        # Ambiguity (two Roberts) is not a match: a wrong merge is worse than none.
        return (candidates[0].entity_id, "rule", 0.9) if len(candidates) == 1 else None

    def add(self, group_id: str, entity: Entity, vector: list[float] | None = None) -> None:
        """Remember a new (non-duplicate) entity of ``group_id``."""
        self.group(group_id).index(entity, entity.name, vector)

    def record_merge(
        self, group_id: str, merged: Entity, alias: str, vector: list[float] | None = None
    ) -> None:
        """Remember ``merged`` and that ``alias`` names it from now on."""
        g = self.group(group_id)
        g.index(merged, merged.name, None)
        g.index(merged, alias, vector)

    async def find_duplicate(self, entity: Entity, group_id: str) -> Entity | None:
        """Seed 003's signature: the existing duplicate of ``entity`` in ``group_id``."""
        with metrics.span("memory.deduplicate_entity", group_id=group_id):
            found = self.match(entity, group_id)
        return found.entity if found else None

    async def merge_entities(self, existing: Entity, new: Entity) -> Entity:
        """Seed 003's signature for :func:`merge_entities` (not persisted)."""
        return merge_entities(existing, new)


def merge_entities(existing: Entity, new: Entity) -> Entity:
    """``existing`` with ``new`` folded in: id and ``valid_from`` kept, new attributes win.

    The fuller name survives (``Robert Smith`` over ``Bob``); on a tie the existing one.
    ``valid_from`` is the earlier of the two: the existing one, unless a turn said before
    it arrived after it (an import, a late producer).
    """
    name = new.name if len(new.name.split()) > len(existing.name.split()) else existing.name
    confidence = max(existing.confidence, new.confidence, key=lambda c: CONFIDENCE_RANK.get(c, 0))
    return existing.model_copy(
        update={
            "name": name,
            "attributes": {**existing.attributes, **new.attributes},
            "confidence": confidence,
            "valid_from": min(existing.valid_from, new.valid_from),
        }
    )
