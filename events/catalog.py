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

TOPIC_EVENTS: dict[str, tuple[type[Event], ...]] = {
    "tribal.schema.changes": (TableObserved, TableDropped),
    "tribal.files.changes": (FileChanged, FileDeleted, FileSkipped),
    "tribal.kb.articles": (KbArticleUpserted, KbArticleDeleted),
    "tribal.memory.turns": (TurnRecorded, SystemEventRecorded, MemoryForgotten),
    "tribal.tables.documented": (TableDocumented, DomainDocumented),
    "tribal.chunks": (DocumentChunked, DocumentRetracted),
    "tribal.chunks.bulk": (DocumentChunked, DocumentRetracted),
    "tribal.embeddings": (ChunksEmbedded,),
    "tribal.memory.episodes": (EpisodeRecorded,),
    "tribal.memory.facts": (
        EntitiesExtracted,
        EntityMerged,
        RelationshipAsserted,
        RelationshipInvalidated,
    ),
    "tribal.memory.summaries": (SummaryCreated,),
    "tribal.deadletter": (DeadLettered,),
}
"""Topic (with the default ``tribal.`` prefix) -> the event types it carries."""

EVENT_TYPES: dict[str, type[Event]] = {
    event_type.avro_name: event_type
    for event_types in TOPIC_EVENTS.values()
    for event_type in event_types
}
"""Avro full name -> event class."""
