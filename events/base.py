"""The base classes every event and every nested value derives from."""

from __future__ import annotations

from typing import Any, ClassVar
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, field_validator

from events.types import GroupId, TenantId, UtcDatetime, utcnow

NOTES_DOC = (
    "What the source changed to make its input valid text, one note per field, e.g. "
    "'content: removed 2 control characters (U+0000 x2)' (see events.text)."
)
"""The description of the ``notes`` field of events from sources that cannot refuse input."""


class Value(BaseModel):
    """An immutable value nested inside an event (a column, a chunk, an entity)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Event(Value):
    """Something that happened. Immutable, past tense, versioned.

    ``schema_version`` defaults to the version the code knows; a class bumps its
    version by overriding that default and registering an upcaster for the previous
    one (see :mod:`events.upcasting`). Constructing an event with any other version
    fails, so old payloads must be upcast before they become models.
    """

    avro_name: ClassVar[str]
    """The Avro full name, e.g. ``tribal.kb.KbArticleUpserted``."""

    event_id: UUID = Field(default_factory=uuid4, description="Unique id of this event.")
    occurred_at: UtcDatetime = Field(
        default_factory=utcnow, description="When it happened (UTC, microseconds)."
    )
    schema_version: int = Field(
        default=1,
        description="Version of this event's contract; bumped with an upcaster on change.",
    )

    @classmethod
    def current_version(cls) -> int:
        """The schema version this code writes and reads into models."""
        default: int = cls.model_fields["schema_version"].default
        return default

    @field_validator("schema_version")
    @classmethod
    def _is_current_version(cls, value: int) -> int:
        current = cls.current_version()
        if value != current:
            raise ValueError(
                f"{cls.__name__} is at schema_version {current}, got {value}; "
                "upcast older payloads first"
            )
        return value

    @classmethod
    def namespace(cls) -> str:
        """The Avro namespace, e.g. ``tribal.kb``."""
        return cls.avro_name.rpartition(".")[0]

    def to_avro_dict(self) -> dict[str, Any]:
        """The plain values fastavro writes (UUIDs, datetimes and bytes stay native)."""
        return self.model_dump()


class TenantEvent(Event):
    """An event that belongs to one tenant (sources, documents, chunks)."""

    tenant: TenantId = Field(default="default", description="Owning tenant.")


class MemoryEvent(Event):
    """An event in one conversation's memory, isolated by ``group_id``."""

    group_id: GroupId = Field(description="Isolation key 'tenant:session'.")

    @property
    def tenant(self) -> str:
        """The tenant part of ``group_id``."""
        return self.group_id.partition(":")[0]

    @property
    def session_id(self) -> str:
        """The session part of ``group_id``."""
        return self.group_id.partition(":")[2]
