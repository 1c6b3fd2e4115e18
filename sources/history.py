"""Past conversations from a file: JSON or JSONL records → the turns they were.

A record is one thing someone said::

    {"group": "acme:support-7", "speaker": "Caroline", "text": "I moved to Bristol.",
     "time": "2023-05-08T13:56:00+01:00", "metadata": {"channel": "chat"}}

``group`` (or ``group_id``) may be left to a default; ``text`` is also read as
``user_message``, ``time`` as ``occurred_at``, and ``response``/``agent_response`` is
what an agent answered, if anything. Metadata values that are not strings are kept
as JSON text. A ``.json`` file holds a list of records (or ``{"turns": [...]}``);
any other file is JSONL, one record a line.

:func:`read_history` reads every record into a :class:`HistoryTurn` or a
:class:`RecordProblem` naming its line, so a caller can refuse a file before anything
of it is sent. :func:`in_world_order` orders turns as they were said, each group's
lane in its own order; :meth:`sources.turns.MemoryIngestor.ingest_turns` sends
them, exactly as live turns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from events.problems import problem_of
from sources.turns import (
    IngestionError,
    Session,
    Turn,
    imported_turn_id,
    turn_event,
    validate_group_id,
)


class HistoryRecord(BaseModel):
    """One record of a history file, as written."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    group_id: str | None = Field(default=None, validation_alias=AliasChoices("group_id", "group"))
    speaker: str | None = None
    text: str = Field(min_length=1, validation_alias=AliasChoices("text", "user_message"))
    response: str = Field(default="", validation_alias=AliasChoices("response", "agent_response"))
    occurred_at: datetime | None = Field(
        default=None, validation_alias=AliasChoices("time", "occurred_at")
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    turn_id: UUID | None = None


@dataclass(frozen=True)
class RecordRead:
    """One record of a history file as read: a turn, or the problem with it."""

    where: str
    """Where the record is in the file (``line 12``)."""


@dataclass(frozen=True)
class HistoryTurn(RecordRead):
    """A record that is a valid turn."""

    turn: Turn
    """The record as the turn the memory API takes."""
    session: Session
    """The lane (tenant and session) the turn is recorded in."""


@dataclass(frozen=True)
class RecordProblem(RecordRead):
    """A record that is not a valid turn, and why (an AgentError code and a message)."""

    code: str
    message: str


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def to_turn(
    record: HistoryRecord, where: str, group: str | None = None, timezone: tzinfo | None = None
) -> HistoryTurn:
    """``record`` as a turn of its group (else ``group``); a time without a timezone is
    read in ``timezone``. Raises :class:`IngestionError` for what cannot be a turn."""
    group_id = validate_group_id(record.group_id or group or "")
    when = record.occurred_at
    if when is not None and when.utcoffset() is None:
        if timezone is None:
            raise IngestionError(
                "INVALID_REQUEST",
                f"time {when.isoformat()} has no timezone: add one, or name the zone the "
                "file's times are in (--timezone)",
            )
        when = when.replace(tzinfo=timezone)
    try:
        turn = Turn(
            user_message=record.text, agent_response=record.response, turn_id=record.turn_id,
            metadata={k: _text(v) for k, v in record.metadata.items()}, occurred_at=when,
            speaker=record.speaker,
        )  # fmt: skip
    except ValidationError as exc:
        problem = problem_of(exc)
        raise IngestionError(problem.code, problem.message) from exc
    tenant, _, session_id = group_id.partition(":")
    session = Session(tenant_id=tenant, id=session_id)
    turn_event(turn, session)  # what the ingestor would refuse, refused here with its line
    return HistoryTurn(where, turn, session)


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, parsed JSON value) per record; a value is None when its text is not JSON."""
    if path.suffix.lower() == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("turns"), list):
            data = data["turns"]
        records = data if isinstance(data, list) else [data]
        for n, record in enumerate(records, start=1):
            yield f"record {n}", record
        return
    with path.open(encoding="utf-8") as lines:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield f"line {n}", json.loads(line)
            except json.JSONDecodeError as exc:
                yield f"line {n}", RecordProblem(f"line {n}", "INVALID_JSON", str(exc))


def read_history(
    path: Path, group: str | None = None, timezone: tzinfo | None = None
) -> Iterator[HistoryTurn | RecordProblem]:
    """Every record of the history file at ``path``, as a turn or as the problem with it.

    Raises ``OSError`` and ``json.JSONDecodeError`` (a ``.json`` file that is not JSON)."""
    for where, value in _documents(path):
        if isinstance(value, RecordProblem):
            yield value
            continue
        if not isinstance(value, dict):
            yield RecordProblem(where, "INVALID_REQUEST", "a record must be a JSON object")
            continue
        try:
            yield to_turn(HistoryRecord.model_validate(value), where, group, timezone)
        except ValidationError as exc:
            problem = problem_of(exc)
            yield RecordProblem(where, problem.code, problem.message)
        except IngestionError as exc:
            yield RecordProblem(where, exc.code, exc.message)


def in_world_order(turns: Sequence[HistoryTurn]) -> list[HistoryTurn]:
    """``turns`` with ids that survive a re-import (see :func:`imported_turn_id`), in the
    order they were said (a turn without a time keeps its place among its neighbours),
    so each group's lane reads as the conversation was lived."""
    seen: dict[UUID, int] = {}
    out: list[HistoryTurn] = []
    for t in turns:
        if t.turn.turn_id is None:
            first = imported_turn_id(t.session.group_id, t.turn)
            seen[first] = seen.get(first, -1) + 1
            turn_id = imported_turn_id(t.session.group_id, t.turn, seen[first])
            t = HistoryTurn(t.where, t.turn.model_copy(update={"turn_id": turn_id}), t.session)
        out.append(t)
    timed = sorted((t for t in out if t.turn.occurred_at is not None),
                   key=lambda t: t.turn.occurred_at or datetime.min)  # fmt: skip
    slots = iter(timed)
    return [next(slots) if t.turn.occurred_at is not None else t for t in out]
