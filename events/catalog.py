"""Every event type, by Avro full name, and which topic carries which events."""

from __future__ import annotations

from events.base import Event
from events.chunks import ChunksEmbedded, DocumentChunked, DocumentRetracted
from events.deadletter import DeadLettered
from events.documents import DomainDocumented, TableDocumented
from events.facts import (
    EntitiesExtracted,
    EntityMerged,
    RelationshipAsserted,
    RelationshipInvalidated,
)
from events.files import FileChanged, FileDeleted, FileSkipped
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.memory import (
    EpisodeRecorded,
    MemoryForgotten,
    SummaryCreated,
    SystemEventRecorded,
    TurnRecorded,
)
from events.schema import TableDropped, TableObserved
from runtime.topics import TOPICS

_EVENTS: tuple[type[Event], ...] = (
    TableObserved, TableDropped, FileChanged, FileDeleted, FileSkipped,
    KbArticleUpserted, KbArticleDeleted,
    TurnRecorded, SystemEventRecorded, MemoryForgotten, EpisodeRecorded, SummaryCreated,
    TableDocumented, DomainDocumented, DocumentChunked, DocumentRetracted, ChunksEmbedded,
    EntitiesExtracted, EntityMerged, RelationshipAsserted, RelationshipInvalidated,
    DeadLettered,
)  # fmt: skip
_BY_CLASS_NAME = {event_type.__name__: event_type for event_type in _EVENTS}

TOPIC_EVENTS: dict[str, tuple[type[Event], ...]] = {
    f"tribal.{spec.name}": tuple(_BY_CLASS_NAME[name] for name in spec.events) for spec in TOPICS
}
"""Topic (with the default ``tribal.`` prefix) -> the event types it carries, read from
the one topic table (:data:`runtime.topics.TOPICS`)."""

EVENT_TYPES: dict[str, type[Event]] = {
    event_type.avro_name: event_type
    for event_types in TOPIC_EVENTS.values()
    for event_type in event_types
}
"""Avro full name -> event class."""
