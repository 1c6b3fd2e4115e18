"""Data or transient: the one question every stage asks of a failure.

A *data* failure is deterministic: the record itself is bad (an encoding the store
refuses, a constraint, a validation, a size limit), so retrying it fails the same way
forever. It goes to the dead letters with its reason and the stage moves on.

A *transient* failure is the world's: the store or broker is away, a timeout, a
serialization conflict, the store restarting. Retrying with backoff is right, and
nothing is dead-lettered for it.

Anything else is *unknown*: it is retried a bounded number of times, then treated as
data, so an unforeseen bug costs one record, never a stopped stream.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class FailureKind(enum.StrEnum):
    DATA = "data"
    TRANSIENT = "transient"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Failure:
    """How a stage should treat one exception, and the dead-letter code it would carry."""

    kind: FailureKind
    code: str
    message: str


class BadRecordError(Exception):
    """Raised (or subclassed) by code that knows the record itself is bad."""

    code = "INVALID_RECORD"


# PostgreSQL SQLSTATE classes (first two characters), see the PostgreSQL manual,
# appendix A "PostgreSQL Error Codes".
_PG_DATA_CLASSES = {
    "22": "DATA_EXCEPTION",  # invalid encoding (0x00 in text), value out of range, ...
    "23": "CONSTRAINT_VIOLATION",
    "54": "PROGRAM_LIMIT_EXCEEDED",  # index row too large, too many columns, ...
}
_PG_TRANSIENT_CLASSES = {
    "08",  # connection exception
    "40",  # transaction rollback: serialization failure, deadlock
    "53",  # insufficient resources: disk full, out of memory, too many connections
    "55",  # object not in prerequisite state: lock not available
    "57",  # operator intervention: admin shutdown, cannot connect now
    "58",  # system error: I/O error
}
# Weaviate answers a bad object with 422/400; an overloaded or restarting node with 5xx.
_HTTP_DATA_STATUSES = {400, 413, 422}
_TRANSIENT_WORDS = (
    "connection refused",
    "connection reset",
    "timed out",
    "timeout",
    "deadline exceeded",
    "unavailable",
    "temporarily",
    "try again",
)


def describe(exc: BaseException) -> str:
    """One line: the exception's type and message, as a dead letter records it."""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def classify(exc: BaseException) -> Failure:
    """Sort ``exc`` into data, transient or unknown (see the module docstring)."""
    message = describe(exc)
    kind, code = _classify(exc, message.lower())
    return Failure(kind, code, message)


def _classify(exc: BaseException, lowered: str) -> tuple[FailureKind, str]:
    if isinstance(exc, BadRecordError):
        return FailureKind.DATA, exc.code
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and len(sqlstate) == 5:
        prefix = sqlstate[:2]
        if prefix in _PG_DATA_CLASSES:
            return FailureKind.DATA, f"STORE_{_PG_DATA_CLASSES[prefix]}"
        if prefix in _PG_TRANSIENT_CLASSES:
            return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    if getattr(exc, "retriable", False) is True:  # aiokafka marks its retriable errors
        return FailureKind.TRANSIENT, "BROKER_UNAVAILABLE"
    if isinstance(exc, ConnectionError | TimeoutError):
        return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    if isinstance(exc, UnicodeError):
        return FailureKind.DATA, "INVALID_ENCODING"
    name = type(exc).__name__
    if name == "ValidationError":  # pydantic: a value that breaks a model
        return FailureKind.DATA, "INVALID_EVENT"
    if name in ("InterfaceError", "ConnectionDoesNotExistError", "InternalClientError"):
        return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"  # asyncpg: the connection went away
    if name.startswith("WeaviateConnection") or name.startswith("WeaviateTimeout"):
        return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status in _HTTP_DATA_STATUSES:
            return FailureKind.DATA, "STORE_REJECTED"
        if status >= 500 or status == 429:
            return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    if isinstance(exc, OSError):
        return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    if any(word in lowered for word in _TRANSIENT_WORDS):
        return FailureKind.TRANSIENT, "STORE_UNAVAILABLE"
    return FailureKind.UNKNOWN, "PROCESSING_FAILED"


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    unknown_attempts: int,
    transient_budget_s: float,
    before_retry: Callable[[], None] | None = None,
    first_delay_s: float = 0.2,
) -> T:
    """``await call()``, retrying what may pass on a second try.

    Transient failures are retried with exponential backoff (capped at 10 s between
    tries) for up to ``transient_budget_s``; unknown ones up to ``unknown_attempts``
    tries in all; data failures never. The last failure is raised when retries end.
    ``before_retry`` runs before each new try (a stateful caller drops its state).
    """
    delay = first_delay_s
    started = time.monotonic()
    tries = 0
    while True:
        tries += 1
        try:
            return await call()
        except Exception as exc:
            kind = classify(exc).kind
            if kind is FailureKind.DATA:
                raise
            if kind is FailureKind.UNKNOWN and tries >= unknown_attempts:
                raise
            if kind is FailureKind.TRANSIENT and time.monotonic() - started > transient_budget_s:
                raise
            log.warning("retrying in %.1fs after a %s failure: %s", delay, kind, describe(exc))
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)
        if before_retry is not None:
            before_retry()
