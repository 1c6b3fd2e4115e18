"""Every event type, by Avro full name, and which topic carries which events."""

from __future__ import annotations

from events import chunks, deadletter, documents, facts, files, kb, memory, schema
from events.base import Event
from runtime.topics import TOPICS

_EVENTS: tuple[type[Event], ...] = (
    schema.TableObserved, schema.TableDropped,
    files.FileChanged, files.FileDeleted, files.FileSkipped,
    kb.KbArticleUpserted, kb.KbArticleDeleted,
    memory.TurnRecorded, memory.SystemEventRecorded, memory.MemoryForgotten,
    memory.EpisodeRecorded, memory.SummaryCreated,
    documents.TableDocumented, documents.DomainDocumented,
    chunks.DocumentChunked, chunks.DocumentRetracted, chunks.ChunksEmbedded,
    facts.EntitiesExtracted, facts.EntityMerged, facts.RelationshipAsserted,
    facts.RelationshipInvalidated,
    deadletter.DeadLettered,
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
