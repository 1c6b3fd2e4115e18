"""Memory reads (facts, episodes, entities) and ``add_memory``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.dataclasses import dataclass
from pydantic.json_schema import SkipJsonSchema

from api.schemas.common import Budgeted, Paged, PagedResponse, Request, Response
from events.limits import GROUP_ID_MAX, MESSAGE_MAX, QUERY_MAX, SPEAKER_MAX
from events.text import CleanText
from events.types import GROUP_ID_PATTERN, Metadata
from projections.graph.models import EntityRecord, Fact

_GROUP = Field(
    pattern=f"^{GROUP_ID_PATTERN}$", max_length=GROUP_ID_MAX, description="'tenant:session'"
)


class SearchMemoryInput(Paged):
    group_id: str = _GROUP
    query: CleanText | None = Field(
        default=None,
        max_length=QUERY_MAX,
        description="Keeps facts mentioning a query word; episodes are searched only with it.",
    )
    as_of: AwareDatetime | None = Field(default=None, description="World time (default now).")
    known_at: AwareDatetime | None = Field(
        default=None, description="System time: what was known then (default latest)."
    )
    limit: int = Field(default=20, ge=1, le=100)


@dataclass(frozen=True, config=ConfigDict(use_attribute_docstrings=True))
class FactOut(Fact):
    """One version of a relationship between two entities, with its validity times."""

    # The graph's fields (Fact), less where in the log the version was recorded: read
    # for invalidated_in, never shown, so an answer read back has none.
    provenance: SkipJsonSchema[Any] = Field(default=None, exclude=True, repr=False)
    episode_ids: tuple[UUID, ...] = ()
    """The episodes whose statements asserted this fact."""
    invalidated_in: UUID | None = None
    """The episode whose statement ended this fact, if any."""

    @classmethod
    def of(cls, fact: Fact) -> FactOut:
        ended = fact.provenance.episode_id if fact.provenance.change == "invalidated" else None
        return cls(**vars(fact), invalidated_in=ended)


class EpisodeOut(BaseModel):
    episode_id: str
    content: str = Field(description="At most 500 characters.")
    relevance_score: float = Field(description="0-1; episodes come best first.")
    occurred_at: datetime | None = Field(description="When the turn was said (world time).")
    turn_id: str | None = Field(default=None, description="The turn's id (turns only).")
    source_event_id: str | None = Field(
        default=None, description="The TurnRecorded or SystemEventRecorded event it came from."
    )
    speaker: str | None = Field(default=None, description="Who said it, when the turn named them.")
    content_type: str | None = Field(default=None, description="'message' or 'event'.")
    times: list[str] = Field(
        default_factory=list,
        description="The times its words name, resolved against when it was said ('last "
        "Saturday' said on 2023-05-16 is 2023-05-13): a day, a month (2023-05), a year, or "
        "a span (2023-05-08..2023-05-14).",
    )
    metadata: dict[str, str] = Field(
        default_factory=dict, description="The turn's or event's own metadata."
    )


class SummaryOut(BaseModel):
    summary_id: str
    summary_type: str = Field(description="'window' or 'meta'.")
    content: str = Field(description="At most 500 characters.")
    relevance_score: float = Field(description="0-1; summaries come best first.")
    occurred_at: datetime | None = Field(
        description="When the last turn it covers was said (world time)."
    )
    episode_ids: list[str] = Field(
        default_factory=list, description="The episodes it summarises (a meta: all of theirs)."
    )
    summary_ids: list[str] = Field(
        default_factory=list, description="The window summaries a meta summary covers."
    )


class AnswerOut(BaseModel):
    """One fact or one episode, ranked with the others by relevance to the question."""

    kind: Literal["fact", "episode"]
    text: str = Field(description="The fact as words, or the episode (at most 500 characters).")
    relevance: float
    relationship_id: UUID | None = None
    episode_id: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    occurred_at: datetime | None = None
    episode_ids: list[UUID] = Field(
        default_factory=list, description="A fact: the episodes that stated it."
    )
    turn_id: str | None = Field(default=None, description="An episode: its turn's id.")
    speaker: str | None = Field(default=None, description="An episode: who said it.")


class SearchMemoryOutput(PagedResponse):
    group_id: str = ""
    answers: list[AnswerOut] = Field(
        default_factory=list,
        description="Facts and episodes together, best first (with a query only).",
    )
    facts: list[FactOut] = Field(default_factory=list)
    episodes: list[EpisodeOut] = Field(default_factory=list)
    summaries: list[SummaryOut] = Field(
        default_factory=list, description="Window and meta summaries (with a query only)."
    )


class GetEntityInput(Budgeted):
    entity_id: UUID
    group_id: str = _GROUP


@dataclass(frozen=True)
class EntityOut(EntityRecord):
    """An entity as it stands now, with the names of duplicates merged into it."""


class GetEntityOutput(Response):
    group_id: str = ""
    entity: EntityOut | None = None
    versions: list[dict[str, Any]] = Field(default_factory=list)
    relationships: list[FactOut] = Field(default_factory=list)


class AddMemoryInput(Request):
    group_id: str = _GROUP
    user_message: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    agent_response: CleanText = Field(default="", max_length=MESSAGE_MAX)
    metadata: Metadata = Field(default_factory=dict)
    speaker: CleanText | None = Field(
        default=None, min_length=1, max_length=SPEAKER_MAX,
        description="Who said user_message, in their own name (default: the user).",
    )  # fmt: skip
    occurred_at: AwareDatetime | None = Field(
        default=None,
        description="When it was said (ISO 8601 with a timezone; default: now).",
    )


class AddMemoryOutput(Response):
    group_id: str = ""
    episode_id: str | None = None
    event_id: str | None = None
    partition: int | None = None
    offset: int | None = None
