"""Conversation memory events (seed 003), all keyed and isolated by ``group_id``.

``tribal.memory.turns``: TurnRecorded, SystemEventRecorded, MemoryForgotten.
``tribal.memory.episodes``: EpisodeRecorded.
``tribal.memory.summaries``: SummaryCreated.
"""

from __future__ import annotations

from typing import ClassVar, Self
from uuid import UUID, uuid4, uuid5

from pydantic import Field, model_validator

from events.base import MemoryEvent
from events.limits import EVENT_TYPE_MAX, SPEAKER_MAX
from events.text import CleanText
from events.types import Metadata, Vector


class TurnRecorded(MemoryEvent):
    """A conversation turn: what someone said (``user_message``) and the agent's response.

    ``occurred_at`` is when the turn was said (world time), which an import or a late
    producer sets to the past; ``speaker`` names who said ``user_message`` when a
    conversation has named people (any number of them per group).
    """

    # Text refuses control characters (events.text) and metadata is bounded
    # (events.limits): a hostile record produced straight to the topic is dead-lettered
    # at decode (INVALID_EVENT) instead of reaching a store.
    avro_name: ClassVar[str] = "tribal.memory.TurnRecorded"

    turn_id: UUID = Field(default_factory=uuid4)
    user_message: CleanText
    agent_response: CleanText
    metadata: Metadata = Field(default_factory=dict)
    speaker: CleanText | None = Field(
        default=None,
        max_length=SPEAKER_MAX,
        description="Who said user_message, in their own name (default: the user).",
    )


class SystemEventRecorded(MemoryEvent):
    """A non-conversation event (tool run, scenario transition, error) (``ingest_event``)."""

    avro_name: ClassVar[str] = "tribal.memory.SystemEventRecorded"

    event_type: CleanText = Field(max_length=EVENT_TYPE_MAX)
    content: CleanText
    metadata: Metadata = Field(default_factory=dict)


class MemoryForgotten(MemoryEvent):
    """Everything remembered for ``group_id`` (or its whole tenant) must be erased.

    With ``scope="tenant"`` every group of ``tenant`` is forgotten; ``group_id`` is then
    ``"{tenant}:*"``-like bookkeeping (``"{tenant}:_tenant"``) that keys the event.
    """

    avro_name: ClassVar[str] = "tribal.memory.MemoryForgotten"

    reason: CleanText | None = None
    scope: str = Field(default="group", description="'group' or 'tenant'.")

    @model_validator(mode="after")
    def _known_scope(self) -> Self:
        if self.scope not in ("group", "tenant"):
            raise ValueError(f"scope must be 'group' or 'tenant', not {self.scope!r}")
        return self


EPISODE_NAMESPACE = UUID("6f2a4f4e-3c1d-5d7e-9a51-7a1b0c2d3e4f")


def episode_id_for(source_event_id: UUID) -> UUID:
    """The episode id a turn or system event becomes: stable across replays."""
    return uuid5(EPISODE_NAMESPACE, str(source_event_id))


class EpisodeRecorded(MemoryEvent):
    """A turn or system event became an episode, with its embedding or why it has none."""

    avro_name: ClassVar[str] = "tribal.memory.EpisodeRecorded"

    episode_id: UUID
    source_event_id: UUID = Field(description="The TurnRecorded/SystemEventRecorded event.")
    content: str
    content_type: str = Field(description="'message' or 'event'.")
    source: str = Field(description="'user', 'agent' or 'system'.")
    source_metadata: dict[str, str] = Field(default_factory=dict)
    embedding: Vector | None = None
    embedding_model: str | None = None
    embedding_error: str | None = Field(
        default=None, description="Why there is no embedding (graceful degradation)."
    )

    @model_validator(mode="after")
    def _embedding_or_reason(self) -> Self:
        if (self.embedding is None) == (self.embedding_error is None):
            raise ValueError("exactly one of embedding and embedding_error must be set")
        if self.embedding is not None and self.embedding_model is None:
            raise ValueError("embedding_model is required with an embedding")
        return self


class SummaryCreated(MemoryEvent):
    """A window summary (of episodes) or a meta summary (of summaries)."""

    avro_name: ClassVar[str] = "tribal.memory.SummaryCreated"

    summary_id: UUID
    summary_type: str = Field(description="'window' or 'meta'.")
    content: str
    episode_ids: tuple[UUID, ...] = ()
    summary_ids: tuple[UUID, ...] = ()
    generated_by: str = Field(description="LLM provider, e.g. 'local' or 'anthropic'.")
    model: str
    episodes_covered: int = Field(default=0, description="Episodes under this summary.")
    summaries_covered: int = Field(default=0, description="Window summaries under a meta.")
    source_length: int = Field(default=0, description="Characters of what was summarised.")
