"""Decode → process → encode, with every failure turned into a dead letter.

The agents in :mod:`streams.app` are thin: they hand raw records to a :class:`Handler`
and produce what it returns. Everything here is synchronous and broker-free, so the
routing and the dead-letter rules are tested without Kafka.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from events.base import Event
from events.deadletter import DeadLettered
from events.serde import DecodeError, EventSerde
from streams.settings import TribalSettings
from streams.topics import topic

MAX_ERROR_MESSAGE = 2_000


@dataclass(frozen=True)
class Emit:
    """One derived event for a topic (short name, e.g. ``"chunks"``) under a key."""

    topic: str
    key: str
    event: Event


Processor = Callable[[Event], Iterable[Emit]]
"""A pure function from one source event to the derived events it implies."""


@dataclass(frozen=True)
class Record:
    """A record ready for the producer: full topic name, key and value bytes."""

    topic: str
    key: bytes | None
    value: bytes


class ProcessingError(Exception):
    """A processor refused an event; ``code`` goes into the dead letter."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Handler:
    """Runs one processor over raw records from one source topic."""

    def __init__(
        self,
        name: str,
        processor: Processor,
        accepts: tuple[type[Event], ...],
        serde: EventSerde,
        settings: TribalSettings,
    ) -> None:
        self.name = name
        self.processor = processor
        self.accepts = accepts
        self.serde = serde
        self.settings = settings
        self._deadletter_topic = topic("deadletter", settings)

    def handle(
        self, origin_topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> list[Record]:
        """The records to produce for one input record; never raises for bad input."""
        try:
            event = self.serde.decode(value or b"")
            if not isinstance(event, self.accepts):
                raise ProcessingError(
                    "UNEXPECTED_EVENT_TYPE",
                    f"{type(event).__name__} does not belong on {origin_topic} "
                    f"(the {self.name} agent accepts "
                    f"{', '.join(t.__name__ for t in self.accepts)})",
                )
            return [self._encode(e) for e in self.processor(event)]
        except DecodeError as exc:
            return [self._dead(origin_topic, partition, offset, key, value, exc.code, str(exc))]
        except ProcessingError as exc:
            return [self._dead(origin_topic, partition, offset, key, value, exc.code, exc.message)]
        except Exception as exc:  # a bug in a processor must not stop the stream
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return [
                self._dead(origin_topic, partition, offset, key, value, "PROCESSING_FAILED", detail)
            ]

    def _encode(self, emit: Emit) -> Record:
        full = topic(emit.topic, self.settings)
        return Record(full, emit.key.encode(), self.serde.encode(emit.event, full))

    def _dead(
        self,
        origin_topic: str,
        partition: int,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        code: str,
        message: str,
    ) -> Record:
        return dead_letter_record(
            self.serde,
            self._deadletter_topic,
            origin_topic,
            partition,
            offset,
            key,
            value,
            code,
            f"[{self.name}] {message}",
        )


def dead_letter_record(
    serde: EventSerde,
    deadletter_topic: str,
    origin_topic: str,
    partition: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    code: str,
    message: str,
) -> Record:
    """A ``DeadLettered`` record that keeps the original bytes, so nothing is lost."""
    origin_key = key.decode("utf-8", errors="replace") if key is not None else None
    event = DeadLettered(
        origin_topic=origin_topic,
        origin_partition=partition,
        origin_offset=offset,
        origin_key=origin_key,
        error_code=code,
        error_message=message[:MAX_ERROR_MESSAGE],
        payload=value or b"",
    )
    return Record(deadletter_topic, key, serde.encode(event, deadletter_topic))
