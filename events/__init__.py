"""What happened: immutable, versioned event contracts and their wire format."""

from events.base import Event, MemoryEvent, TenantEvent, Value
from events.catalog import EVENT_TYPES, TOPIC_EVENTS
from events.serde import DecodeError, EventSerde, subject_name

__all__ = [
    "EVENT_TYPES",
    "TOPIC_EVENTS",
    "DecodeError",
    "Event",
    "EventSerde",
    "MemoryEvent",
    "TenantEvent",
    "Value",
    "subject_name",
]
