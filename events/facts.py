"""Entity and relationship events on ``tribal.memory.facts`` (key ``group_id``).

World time is ``valid_from``/``valid_to``; system time (``recorded_at``/``expired_at``
in the graph) is the ``occurred_at`` of the event that recorded or expired a fact.
"""

from __future__ import annotations

from typing import ClassVar
from uuid import UUID

from pydantic import Field

from events.base import MemoryEvent, Value
from events.types import UtcDatetime


class Entity(Value):
    """A person, product, order, issue or concept mentioned in an episode."""

    entity_id: UUID
    name: str
    entity_type: str
    attributes: dict[str, str] = Field(default_factory=dict)
    confidence: str = Field(default="medium", description="'high', 'medium' or 'low'.")
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None


class ExtractedRelationship(Value):
    """A relationship as extracted, between two entities of the same extraction."""

    relationship_id: UUID
    source_entity_id: UUID
    target_entity_id: UUID
    relation_type: str
    fact: str | None = None
    confidence: str = Field(default="medium", description="'high', 'medium' or 'low'.")
    valid_from: UtcDatetime | None = Field(
        default=None, description="When it became true (default: the episode's time)."
    )
    replaces: str | None = Field(
        default=None,
        description='The value the statement says this one replaces ("switched from Square '
        'to Stripe": Square): its open fact is closed even for a many-valued relation.',
    )


class EntitiesExtracted(MemoryEvent):
    """Entities (and relationships) found in one episode, before deduplication.

    This is the raw extraction: the extractor folds these events, in log order, into
    its per-group state (dedup, temporal facts), so a restart or a rebuild replays
    them instead of calling the LLM again.
    """

    avro_name: ClassVar[str] = "tribal.memory.EntitiesExtracted"

    episode_id: UUID
    entities: tuple[Entity, ...]
    generated_by: str
    model: str
    relationships: tuple[ExtractedRelationship, ...] = ()
    extraction_error: str | None = Field(
        default=None, description="Why the extraction is empty (graceful degradation)."
    )


class EntityMerged(MemoryEvent):
    """A newly extracted entity was a duplicate of an existing one and merged into it."""

    avro_name: ClassVar[str] = "tribal.memory.EntityMerged"

    existing_entity_id: UUID = Field(description="Kept: its id and valid_from survive.")
    merged_entity_id: UUID = Field(description="The duplicate that was folded in.")
    stage: str = Field(description="Dedup stage that matched: exact, fuzzy, embedding, rule.")
    score: float | None = None
    entity: Entity = Field(description="The merged result.")
    episode_id: UUID | None = Field(
        default=None, description="The episode whose extraction produced the duplicate."
    )


class RelationshipAsserted(MemoryEvent):
    """A relationship between two entities holds from ``valid_from``."""

    avro_name: ClassVar[str] = "tribal.memory.RelationshipAsserted"

    relationship_id: UUID
    source_entity_id: UUID
    target_entity_id: UUID
    relation_type: str
    fact: str | None = Field(default=None, description="The statement in plain words.")
    attributes: dict[str, str] = Field(default_factory=dict)
    confidence: str = "medium"
    episode_id: UUID | None = None
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None


class RelationshipInvalidated(MemoryEvent):
    """A relationship stopped being true at ``valid_to`` (it is kept, not deleted)."""

    avro_name: ClassVar[str] = "tribal.memory.RelationshipInvalidated"

    relationship_id: UUID
    valid_to: UtcDatetime
    invalidated_by: UUID | None = Field(
        default=None, description="The relationship that superseded this one, if any."
    )
    reason: str | None = None
    episode_id: UUID | None = Field(
        default=None, description="The episode whose statement invalidated it, if any."
    )
