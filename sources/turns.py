"""Conversation turns and system events → ``tribal.memory.turns`` (seed 003).

``ingest_turn`` returns as soon as Kafka acknowledges the ``TurnRecorded`` event: the
episode (embedding), extraction and summaries are derived downstream, so the caller
never waits for an LLM. The topic is keyed by ``group_id``, so every conversation is
one ordered lane.

A turn or event may say when it happened (``occurred_at``: an import, a late producer);
everything derived from it (episode, facts' validity, summaries) keeps that time, not
the time it arrived. A turn may name its ``speaker``.

Input the event models refuse (control characters, metadata over its limits, see
:mod:`events.text` and :mod:`events.limits`) raises :class:`IngestionError` with the
code the HTTP API answers too (``INVALID_TEXT``, ``INVALID_GROUP_ID``, ...).
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from uuid import UUID, uuid5

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from events.limits import MESSAGE_MAX, SPEAKER_MAX
from events.memory import (
    MemoryForgotten,
    SystemEventRecorded,
    TurnRecorded,
    episode_id_for,
)
from events.problems import problem_of
from events.types import TENANT_PATTERN, group_id_problem, shown, utcnow
from runtime.observability.logs import get_logger
from runtime.observability.metrics import INGESTION_LATENCY
from runtime.observability.tracing import span
from sources.sink import EventSink

log = get_logger(__name__)

TOPIC = "memory.turns"
_TENANT = re.compile(TENANT_PATTERN)
E = TypeVar("E", TurnRecorded, SystemEventRecorded, MemoryForgotten)
CLOCK_SKEW = timedelta(minutes=5)
"""How far ahead of this clock an ``occurred_at`` may be (a producer's clock runs fast)."""


class IngestionError(ValueError):
    """The input cannot become a memory event; ``code`` is the AgentError code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Turn(BaseModel):
    """One conversation turn: what someone said and what the agent answered.

    ``occurred_at``: when it was said (default: now); an import gives the past.
    ``speaker``: who said ``user_message`` (default: the user, unnamed).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_message: str = Field(min_length=1)
    agent_response: str = ""
    turn_id: UUID | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    occurred_at: AwareDatetime | None = None
    speaker: str | None = None


class Session(BaseModel):
    """The session a turn belongs to; ``group_id`` is ``{tenant_id}:{id}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant_id: str
    id: str

    @property
    def group_id(self) -> str:
        return f"{self.tenant_id}:{self.id}"


class Receipt(BaseModel):
    """What a caller gets back once the event is durable in Kafka."""

    model_config = ConfigDict(frozen=True)

    episode_id: UUID
    event_id: UUID
    group_id: str
    partition: int | None = None
    offset: int | None = None


def validate_group_id(group_id: str) -> str:
    """``group_id`` if it is ``tenant:session``, else an ``INVALID_GROUP_ID`` error."""
    if not isinstance(group_id, str):
        raise IngestionError("INVALID_GROUP_ID", f"group_id must be a string; got {group_id!r}")
    problem = group_id_problem(group_id)
    if problem is not None:
        raise IngestionError("INVALID_GROUP_ID", problem)
    return group_id


def _validate_tenant(tenant: str) -> str:
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        shown_tenant = shown(tenant) if isinstance(tenant, str) else repr(tenant)
        raise IngestionError(
            "INVALID_TENANT", f"tenant must match {TENANT_PATTERN}; got {shown_tenant}"
        )
    return tenant


def _bounded(**texts: str) -> None:
    # Message length is bounded at the edges only: the event models leave it alone, so a
    # longer turn recorded before the limit existed still decodes.
    for name, text in texts.items():
        if isinstance(text, str) and len(text) > MESSAGE_MAX:
            raise IngestionError(
                "INVALID_REQUEST", f"{name} is {len(text)} characters; at most {MESSAGE_MAX}"
            )


def _when(occurred_at: datetime | None) -> dict[str, datetime]:
    """The ``occurred_at`` field of an event (none: the event's own now), refusing naive
    times and times ahead of this clock by more than :data:`CLOCK_SKEW`."""
    if occurred_at is None:
        return {}
    if occurred_at.utcoffset() is None:
        raise IngestionError(
            "INVALID_REQUEST", "occurred_at needs a timezone (e.g. 2024-05-01T09:30:00Z)"
        )
    try:
        occurred_at = occurred_at.astimezone(UTC)
    except OverflowError:
        raise IngestionError(
            "INVALID_REQUEST", f"occurred_at {occurred_at.isoformat()} is out of range in UTC"
        ) from None
    if occurred_at - utcnow() > CLOCK_SKEW:
        raise IngestionError(
            "INVALID_REQUEST", f"occurred_at {occurred_at.isoformat()} is in the future"
        )
    return {"occurred_at": occurred_at}


def _speaker(speaker: str | None) -> dict[str, str]:
    if speaker is None:
        return {}
    if not speaker.strip():
        raise IngestionError("INVALID_REQUEST", "speaker is empty; leave it out instead")
    if len(speaker) > SPEAKER_MAX:
        raise IngestionError(
            "INVALID_REQUEST", f"speaker is {len(speaker)} characters; at most {SPEAKER_MAX}"
        )
    return {"speaker": speaker.strip()}


def _event(model: type[E], /, **fields: Any) -> E:
    """The event, or the :class:`IngestionError` its model's refusal means."""
    try:
        return model(**fields)
    except ValidationError as exc:
        problem = problem_of(exc)
        raise IngestionError(problem.code, problem.message) from exc


def turn_event(turn: Turn, session: Session, event_id: UUID | None = None) -> TurnRecorded:
    """The ``TurnRecorded`` event of ``turn``, or the :class:`IngestionError` that
    refuses it (what :meth:`MemoryIngestor.ingest_turn` sends, without sending it)."""
    group_id = validate_group_id(session.group_id)
    _bounded(user_message=turn.user_message, agent_response=turn.agent_response)
    speaker, message = said_by(turn)
    extra: dict[str, Any] = {} if turn.turn_id is None else {"turn_id": turn.turn_id}
    if event_id is not None:
        extra["event_id"] = event_id
    return _event(
        TurnRecorded,
        group_id=group_id,
        user_message=message,
        agent_response=turn.agent_response,
        metadata=turn.metadata,
        **extra,
        **_when(turn.occurred_at or said_at(turn.metadata)),
        **_speaker(speaker),
    )


TIME_KEYS = ("occurred_at", "session_date", "timestamp", "created_at")
"""Metadata keys that, in transcripts exported from elsewhere, say when a turn was
said; read only when the turn has no ``occurred_at`` of its own."""


def said_at(metadata: dict[str, str]) -> datetime | None:
    """When ``metadata`` says the turn was said (a key of :data:`TIME_KEYS` holding an
    absolute time: "2023-05-08T13:56:00Z", "1:56 pm on 8 May, 2023"; UTC when no zone
    is given), or None. A relative time ("yesterday") or anything else is not read."""
    for key in TIME_KEYS:
        value = metadata.get(key, "").strip()
        if not value:
            continue
        try:
            found: datetime | None = datetime.fromisoformat(value)
        except ValueError:
            found = _absolute_times().get_date_data(value).date_obj
        if found is not None:
            return found if found.tzinfo is not None else found.replace(tzinfo=UTC)
    return None


@functools.cache
def _absolute_times() -> Any:
    """dateparser (BSD-3-Clause) reading English absolute times only, built once."""
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"],
        settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True,
                  "PARSERS": ["timestamp", "absolute-time"]},
    )  # fmt: skip


def said_by(turn: Turn) -> tuple[str | None, str]:
    """Who said ``turn`` and what: its ``speaker``, else the name ``metadata.user_name``
    gives. A message that opens with its speaker's name ("Caroline: Hey Mel!", as
    transcripts write it) loses that opening, so the episode does not name them twice."""
    speaker = turn.speaker or turn.metadata.get("user_name", "").strip() or None
    message = turn.user_message
    if speaker is not None:
        opening = re.match(rf"\s*{re.escape(speaker)}\s*:\s*", message)
        if opening is not None and message[opening.end() :].strip():
            message = message[opening.end() :]
    return speaker, message


def turn_problem(turn: Turn, session: Session) -> IngestionError | None:
    """Why ``turn`` cannot be recorded in ``session``, or None when it can."""
    try:
        turn_event(turn, session)
    except IngestionError as exc:
        return exc
    return None


IMPORT_NAMESPACE = UUID("2d9a4c1e-7b3f-5e8a-9c61-4f0b8e2d7a13")


def imported_turn_id(group_id: str, turn: Turn, occurrence: int = 0) -> UUID:
    """The id of an imported turn that brings none: derived from what it is (group, time,
    speaker, both texts) and its ``occurrence`` among identical ones, so importing the
    same history again records the same turns, not new ones."""
    when = turn.occurred_at.isoformat() if turn.occurred_at is not None else ""
    parts = (group_id, when, turn.speaker or "", turn.user_message, turn.agent_response)
    return uuid5(IMPORT_NAMESPACE, "\x1f".join((*parts, str(occurrence))))


def imported_event_id(group_id: str, turn_id: UUID) -> UUID:
    """The ``TurnRecorded`` event id of an imported turn: one per (group, turn id)."""
    return uuid5(IMPORT_NAMESPACE, f"{group_id}|{turn_id}")


class BatchIngestionError(IngestionError):
    """Some turns of a batch cannot become events; nothing of the batch was sent.

    ``problems``: (index in the batch, its :class:`IngestionError`), in batch order.
    """

    def __init__(self, problems: list[tuple[int, IngestionError]]) -> None:
        index, first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first.code, f"turns[{index}]: {first.message}{more}")
        self.problems = problems


class MemoryIngestor:
    """Seed 003's ``ingest_turn`` / ``ingest_event`` over an :class:`EventSink`."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    async def _send(self, key: str, event: TurnRecorded | SystemEventRecorded) -> Receipt:
        emit_and_wait = getattr(self.sink, "emit_and_wait", None)
        partition = offset = None
        if emit_and_wait is not None:
            partition, offset = await emit_and_wait(TOPIC, key, event)
        else:
            await self.sink.emit(TOPIC, key, event)
            await self.sink.flush()
        return Receipt(
            episode_id=episode_id_for(event.event_id),
            event_id=event.event_id,
            group_id=key,
            partition=partition,
            offset=offset,
        )

    async def ingest_turn(self, turn: Turn, session: Session) -> Receipt:
        """Record a turn; returns once Kafka has acknowledged it."""
        t0 = time.perf_counter()
        with span("memory.ingest_turn", group_id=session.group_id):
            receipt = await self._ingest_turn(turn, session)
        latency_ms = (time.perf_counter() - t0) * 1000
        INGESTION_LATENCY.labels(operation="ingest_turn").observe(latency_ms)
        log.info(
            "turn_recorded",
            episode_id=str(receipt.episode_id),
            group_id=receipt.group_id,
            content_type="message",
            latency_ms=round(latency_ms, 3),
        )
        return receipt

    async def _ingest_turn(self, turn: Turn, session: Session) -> Receipt:
        event = turn_event(turn, session)
        return await self._send(event.group_id, event)

    async def ingest_turns(self, turns: Sequence[tuple[Turn, Session]]) -> list[Receipt]:
        """Record a batch of turns (a history import); returns once Kafka has them all.

        Every turn is checked before any is sent: a batch is recorded whole or refused
        whole (:class:`BatchIngestionError`). Each group's turns are sent in the order
        they were said (``occurred_at``), so a conversation's lane reads like it was
        lived. A turn without ``turn_id`` gets :func:`imported_turn_id`, and every event
        id derives from its turn id: sending the same batch twice records it once
        downstream (same episodes, same facts). Receipts come in the batch's order.
        """
        t0 = time.perf_counter()
        events: list[TurnRecorded] = []
        problems: list[tuple[int, IngestionError]] = []
        seen: dict[UUID, int] = {}
        for i, (turn, session) in enumerate(turns):
            try:
                group_id = validate_group_id(session.group_id)
                turn_id = turn.turn_id
                if turn_id is None:
                    first = imported_turn_id(group_id, turn)
                    seen[first] = seen.get(first, -1) + 1
                    turn_id = imported_turn_id(group_id, turn, seen[first])
                    turn = turn.model_copy(update={"turn_id": turn_id})
                events.append(turn_event(turn, session, imported_event_id(group_id, turn_id)))
            except IngestionError as exc:
                problems.append((i, exc))
        if problems:
            raise BatchIngestionError(problems)
        with span("memory.ingest_turns", turns=len(events)):
            for event in sorted(events, key=lambda e: e.occurred_at):  # stable: ties keep order
                await self.sink.emit(TOPIC, event.group_id, event)
            await self.sink.flush()
        latency_ms = (time.perf_counter() - t0) * 1000
        INGESTION_LATENCY.labels(operation="ingest_turns").observe(latency_ms)
        log.info("turns_recorded", count=len(events), latency_ms=round(latency_ms, 3))
        return [
            Receipt(episode_id=episode_id_for(e.event_id), event_id=e.event_id, group_id=e.group_id)
            for e in events
        ]

    async def ingest_event(
        self,
        event_type: str,
        content: str,
        group_id: str,
        metadata: dict[str, Any] | None = None,
        occurred_at: datetime | None = None,
    ) -> Receipt:
        """Record a system event (tool run, scenario transition, error) that happened
        at ``occurred_at`` (default: now)."""
        t0 = time.perf_counter()
        with span("memory.ingest_event", group_id=group_id, event_type=event_type):
            receipt = await self._ingest_event(event_type, content, group_id, metadata, occurred_at)
        INGESTION_LATENCY.labels(operation="ingest_event").observe(
            (time.perf_counter() - t0) * 1000
        )
        return receipt

    async def _ingest_event(
        self,
        event_type: str,
        content: str,
        group_id: str,
        metadata: dict[str, Any] | None,
        occurred_at: datetime | None,
    ) -> Receipt:
        validate_group_id(group_id)
        if not event_type:
            raise IngestionError("INVALID_REQUEST", "event_type is required")
        if not content:
            raise IngestionError("INVALID_REQUEST", "content is required")
        _bounded(content=content)
        event = _event(
            SystemEventRecorded,
            group_id=group_id,
            event_type=event_type,
            content=content,
            metadata={k: str(v) for k, v in (metadata or {}).items()},
            **_when(occurred_at),
        )
        return await self._send(group_id, event)

    async def forget_group(self, group_id: str, reason: str | None = None) -> UUID:
        """Erase one conversation's memory from every read store."""
        validate_group_id(group_id)
        event = _event(MemoryForgotten, group_id=group_id, reason=reason)
        await self.sink.emit(TOPIC, group_id, event)
        await self.sink.flush()
        return event.event_id

    async def forget_tenant(self, tenant: str, reason: str | None = None) -> UUID:
        """Erase every conversation of a tenant."""
        _validate_tenant(tenant)
        group_id = f"{tenant}:_tenant"
        event = _event(MemoryForgotten, group_id=group_id, reason=reason, scope="tenant")
        await self.sink.emit(TOPIC, group_id, event)
        await self.sink.flush()
        return event.event_id
