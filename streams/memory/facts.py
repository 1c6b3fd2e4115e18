"""Extraction results → facts: the raw ``EntitiesExtracted``, then dedup and time.

:func:`extracted_event` turns one extraction into the raw event (ids derived from the
episode, so the same answer always gives the same event). :class:`FactsFold` folds raw
events, in log order, into per-group state and returns the derived events
(``EntityMerged``, ``RelationshipInvalidated``, ``RelationshipAsserted``). It is
deterministic: the derived events' ids and times come from the raw event, so folding
the log again after a restart re-derives exactly the same events.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID, uuid5

from events.base import Event
from events.facts import (
    EntitiesExtracted,
    Entity,
    EntityMerged,
    ExtractedRelationship,
    RelationshipAsserted,
    RelationshipInvalidated,
)
from events.memory import EpisodeRecorded
from streams.memory import metrics
from streams.memory.dedup import EntityDeduplicator, merge_entities, normalise
from streams.memory.extraction import EntityExtractionResult
from streams.memory.temporal import Interval, Statement, intervals

FACTS_NAMESPACE = UUID("0b7c9f52-51d4-5a52-8d0e-3f6c2f1a9e77")


def _id(*parts: object) -> UUID:
    return uuid5(FACTS_NAMESPACE, "|".join(map(str, parts)))


def _relation(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.casefold()).strip("_") or "related_to"


def extracted_event(
    episode: EpisodeRecorded, result: EntityExtractionResult, at: datetime | None = None
) -> EntitiesExtracted:
    """The raw event of one extraction; entities are valid from the episode's time."""
    entities: dict[UUID, Entity] = {}
    by_name: dict[str, UUID] = {}
    for e in result.entities:
        entity_id = _id(episode.episode_id, "entity", e.entity_type, normalise(e.name))
        by_name.setdefault(e.name.casefold(), entity_id)
        if entity_id not in entities:
            entities[entity_id] = Entity(
                entity_id=entity_id, name=e.name, entity_type=e.entity_type,
                attributes=e.attributes, confidence=e.confidence,
                valid_from=episode.occurred_at,
            )  # fmt: skip
    relationships: dict[UUID, ExtractedRelationship] = {}
    for r in result.relationships:
        source, target = by_name.get(r.source.casefold()), by_name.get(r.target.casefold())
        if source is None or target is None or source == target:
            continue
        relation = _relation(r.relation)
        rid = _id(episode.episode_id, "rel", source, relation, target)
        relationships.setdefault(
            rid,
            ExtractedRelationship(
                relationship_id=rid, source_entity_id=source, target_entity_id=target,
                relation_type=relation, fact=r.fact, confidence=r.confidence,
                valid_from=episode.occurred_at, replaces=r.replaces,
            ),
        )  # fmt: skip
    extra = {} if at is None else {"occurred_at": at}
    return EntitiesExtracted(
        event_id=_id(episode.episode_id, "extracted"),
        group_id=episode.group_id,
        episode_id=episode.episode_id,
        entities=tuple(entities.values()),
        relationships=tuple(relationships.values()),
        generated_by=result.provider or "unknown",
        model=result.model or "unknown",
        extraction_error=result.error,
        **extra,
    )


@dataclass
class GroupFacts:
    """What one group knows beyond its entities: every statement of each relationship
    timeline, the facts published from them, episodes seen."""

    statements: dict[tuple[UUID, str], list[Statement]] = field(default_factory=dict)
    said: dict[UUID, RelationshipAsserted] = field(default_factory=dict)
    """Each statement as the fact it asserts (its content, episode and start)."""
    published: dict[UUID, Interval] = field(default_factory=dict)
    """Each fact as the events so far have told it."""
    episodes: set[UUID] = field(default_factory=set)


class FactsFold:
    """Per-group entities (via the deduplicator) and timelines, advanced event by event."""

    def __init__(
        self,
        dedup: EntityDeduplicator | None = None,
        single_valued: tuple[str, ...] = ("lives_at", "works_at", "status"),
    ) -> None:
        self.dedup = dedup or EntityDeduplicator()
        self.single_valued = frozenset(single_valued)
        self.groups: dict[str, GroupFacts] = {}

    def seen(self, group_id: str, episode_id: UUID) -> bool:
        """True when this episode's extraction is already folded (a redelivery)."""
        g = self.groups.get(group_id)
        return g is not None and episode_id in g.episodes

    def apply(
        self, raw: EntitiesExtracted, vectors: Mapping[str, list[float]] | None = None
    ) -> list[Event]:
        """The events derived from ``raw``; none if its episode was folded before."""
        g = self.groups.setdefault(raw.group_id, GroupFacts())
        if raw.episode_id in g.episodes:
            return []
        g.episodes.add(raw.episode_id)
        out: list[Event] = []
        canonical: dict[UUID, UUID] = {}
        for entity in raw.entities:
            vector = (vectors or {}).get(entity.name)
            found = self.dedup.match(entity, raw.group_id, vector)
            if found is None:
                self.dedup.add(raw.group_id, entity, vector)
                canonical[entity.entity_id] = entity.entity_id
                continue
            merged = merge_entities(found.entity, entity)
            self.dedup.record_merge(raw.group_id, merged, entity.name, vector)
            canonical[entity.entity_id] = merged.entity_id
            out.append(
                EntityMerged(
                    group_id=raw.group_id, existing_entity_id=merged.entity_id,
                    merged_entity_id=entity.entity_id, stage=found.stage, score=found.score,
                    entity=merged, episode_id=raw.episode_id,
                )
            )  # fmt: skip
        for rel in raw.relationships:
            out += self._relate(g, raw, rel, canonical)
        # Ids and times from the raw event: a re-fold yields identical events.
        return [
            e.model_copy(update={"event_id": _id(raw.event_id, i), "occurred_at": raw.occurred_at})
            for i, e in enumerate(out)
        ]

    def _relate(
        self,
        g: GroupFacts,
        raw: EntitiesExtracted,
        rel: ExtractedRelationship,
        canonical: dict[UUID, UUID],
    ) -> list[Event]:
        source = canonical.get(rel.source_entity_id, rel.source_entity_id)
        target = canonical.get(rel.target_entity_id, rel.target_entity_id)
        if source == target or rel.relationship_id in g.said:
            return []
        valid_from = rel.valid_from or raw.occurred_at
        seq = len(g.said)  # arrival order: a fact keeps the id of its first statement
        g.said[rel.relationship_id] = RelationshipAsserted(
            group_id=raw.group_id, relationship_id=rel.relationship_id,
            source_entity_id=source, target_entity_id=target,
            relation_type=rel.relation_type, fact=rel.fact, confidence=rel.confidence,
            episode_id=raw.episode_id, valid_from=valid_from,
        )  # fmt: skip
        key = (source, rel.relation_type)
        timeline = g.statements.setdefault(key, [])
        timeline.append(
            Statement(rel.relationship_id, target, valid_from, seq, replaces=rel.replaces)
        )
        return self._publish(g, raw.group_id, timeline, rel.relation_type)

    def _publish(
        self, g: GroupFacts, group_id: str, timeline: list[Statement], relation: str
    ) -> list[Event]:
        """The events that bring the published facts of ``timeline`` to what its
        statements now make: new facts and corrected starts (asserted), then ends."""
        names = self.dedup.groups.get(group_id)

        def named(target: UUID, name: str) -> bool:
            entity = names.entities.get(target) if names is not None else None
            return entity is not None and _names_same(_words(entity.name), _words(name))

        asserted: list[Event] = []
        closed: list[Event] = []
        for fact in intervals(timeline, relation in self.single_valued, named):
            old = g.published.get(fact.relationship_id)
            g.published[fact.relationship_id] = fact
            said = g.said[fact.relationship_id]
            if (
                old is None
                or old.valid_from != fact.valid_from
                or (fact.valid_to is None and old.valid_to is not None)
            ):
                if old is None:
                    metrics.RELATIONSHIPS_CREATED.labels(relation).inc()
                asserted.append(
                    said.model_copy(
                        update={"valid_from": fact.valid_from, "valid_to": fact.valid_to}
                    )
                )
            elif fact.valid_to is not None and (old.valid_to, old.invalidated_by) != (
                fact.valid_to, fact.invalidated_by,
            ):  # fmt: skip
                closed.append(self._closed(g, group_id, fact, relation))
        return [*asserted, *closed]

    @staticmethod
    def _closed(g: GroupFacts, group_id: str, fact: Interval, relation: str) -> Event:
        by = fact.closed_by
        assert by is not None
        assert fact.valid_to is not None
        reason = (
            f"replaced: {relation} {by.replaces}" if fact.replaced else f"superseded: {relation}"
        )
        return RelationshipInvalidated(
            group_id=group_id, relationship_id=fact.relationship_id, valid_to=fact.valid_to,
            invalidated_by=fact.invalidated_by, reason=reason,
            episode_id=g.said[by.relationship_id].episode_id,
        )  # fmt: skip


def _words(name: str) -> str:
    """A name as its case-folded words: unlike :func:`normalise`, a name with a digit
    keeps its spaces ("Lenovo ThinkPad T14" holds "ThinkPad")."""
    return " ".join(re.sub(r"[^\w@.+-]+", " ", name.casefold()).split())


def _names_same(held: str, named: str) -> bool:
    """ "Illustrator" names "Adobe Illustrator": equal, or one holds the other as whole
    words."""
    if held == named:
        return True
    short, long = sorted((held, named), key=len)
    return bool(short) and f" {short} " in f" {long} "
