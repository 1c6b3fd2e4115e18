"""Decode → process → encode, with every failure turned into a dead letter.

The agents in :mod:`streams.app` are thin: they hand raw records to a :class:`Handler`
and produce what it returns. Nothing here touches a broker, so the routing and the
dead-letter rules are tested without Kafka.

A processor is a function of one event (or, for batching agents, of a list of events)
that returns the derived events; it may be ``async`` when it waits on I/O or a model.
A :class:`Lane` is a batch processor with state folded from its own log (the documenter,
the memory agents): the same Handler retries it, isolates a bad record and dead-letters
it.
"""

from __future__ import annotations

import functools
import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from events.base import Event
from events.deadletter import DeadLettered
from events.serde import DecodeError, EventSerde
from runtime.kafka_log import LogRecord
from runtime.observability.metrics import DEAD_LETTERS
from runtime.settings import TribalSettings
from runtime.topics import topic
from streams.failures import FailureKind, classify, with_retries

log = logging.getLogger(__name__)

MAX_ERROR_MESSAGE = 2_000


@dataclass(frozen=True)
class Emit:
    """One derived event for a topic (short name, e.g. ``"chunks"``) under a key.

    ``partition``: a partition chosen explicitly rather than by the key (a broadcast
    sends one copy to each partition)."""

    topic: str
    key: str
    event: Event
    partition: int | None = None


Processor = Callable[[Event], Iterable[Emit] | Awaitable[Iterable[Emit]]]
"""From one source event to the derived events it implies."""

BatchProcessor = Callable[[Sequence[Event]], Iterable[Emit] | Awaitable[Iterable[Emit]]]
"""From a batch of source events (in arrival order) to their derived events."""


@dataclass(frozen=True, slots=True)
class Record:
    """A record ready for the producer: full topic name, key and value bytes."""

    topic: str
    key: bytes | None
    value: bytes
    partition: int | None = None


@dataclass(frozen=True, slots=True)
class Incoming:
    """A raw record as consumed, with its origin."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(eq=False)
class ProcessingError(Exception):
    """A processor refused an event; ``code`` goes into the dead letter."""

    code: str
    message: str

    def __post_init__(self) -> None:
        super().__init__(self.message)


@dataclass(frozen=True)
class Refusal:
    """Work a lane refused as data for one of its records: dead-lettered with ``code``."""

    record: LogRecord
    code: str
    message: str


class Lane(ABC):
    """A batch processor whose state is a fold of the records it reads, per partition.

    It reads its own log to rebuild that state (:mod:`streams.lane` holds what every lane
    shares), so it must be told which broker and serde it runs with (:meth:`bind`), when
    its state cannot be trusted (:meth:`forget`) and which records never to fold again
    (:meth:`poison`).
    """

    @abstractmethod
    def bind(self, serde: EventSerde, settings: TribalSettings) -> None:
        """Decode with ``serde`` and read the lane's log from the broker of ``settings``."""

    @abstractmethod
    async def handle(self, records: Sequence[LogRecord]) -> Sequence[Emit | Refusal]:
        """What a batch of records implies (any partitions, each in log order).

        Raises when the batch cannot be done; the state may then be half-advanced, and
        the caller calls :meth:`forget` before trying again."""

    @abstractmethod
    def forget(self, partitions: Sequence[int]) -> None:
        """Drop the state of ``partitions``: the next batch rebuilds it from the log."""

    @abstractmethod
    def poison(self, record: LogRecord) -> None:
        """``record`` failed alone and is dead-lettered: never fold it again."""


async def _call(fn: Callable[[Any], Any], arg: Any) -> list[Emit]:
    out = fn(arg)
    if inspect.isawaitable(out):
        out = await out
    return list(out)


@dataclass(eq=False, repr=False)
class Handler:
    """Runs one processor (or lane) over raw records from one source topic."""

    name: str
    processor: Processor | BatchProcessor | Lane
    accepts: tuple[type[Event], ...]
    serde: EventSerde
    settings: TribalSettings
    _deadletter_topic: str = field(init=False)

    def __post_init__(self) -> None:
        self._deadletter_topic = topic("deadletter", self.settings)
        if isinstance(self.processor, Lane):
            self.processor.bind(self.serde, self.settings)

    def _decode(self, rec: Incoming) -> Event:
        event = self.serde.decode(rec.value or b"")
        if not isinstance(event, self.accepts):
            raise ProcessingError(
                "UNEXPECTED_EVENT_TYPE",
                f"{type(event).__name__} does not belong on {rec.topic} "
                f"(the {self.name} agent accepts "
                f"{', '.join(t.__name__ for t in self.accepts)})",
            )
        return event

    async def _retrying(self, arg: Any, unknown_attempts: int | None = None) -> list[Emit]:
        processor = self.processor
        assert not isinstance(processor, Lane), "a lane takes batches (handle_batch)"
        return await with_retries(
            lambda: _call(processor, arg),
            unknown_attempts=unknown_attempts or self.settings.unknown_failure_attempts,
            transient_budget_s=self.settings.transient_retry_s,
        )

    async def handle(
        self, origin_topic: str, partition: int, offset: int, key: bytes | None, value: bytes | None
    ) -> list[Record]:
        """The records to produce for one input record; never raises for bad input.

        Transient failures are retried with backoff and unknown ones a few times
        (:func:`streams.failures.with_retries`) before the record is dead-lettered.
        """
        rec = Incoming(origin_topic, partition, offset, key, value)
        try:
            event = self._decode(rec)
            return [self._encode(e) for e in await self._retrying(event)]
        except Exception as exc:  # a bug in a processor must not stop the stream
            return [self._dead(rec, exc)]

    async def handle_batch(self, batch: Sequence[Incoming]) -> list[Record]:
        """Records for a batch: bad records are dead-lettered, the rest processed together.

        If the batch processor fails for a reason that is not transient, each event is
        retried alone so that one poison event costs only itself.
        """
        if isinstance(self.processor, Lane):
            return await self._handle_lane(self.processor, batch)
        good: list[tuple[Incoming, Event]] = []
        out: list[Record] = []
        for rec in batch:
            try:
                good.append((rec, self._decode(rec)))
            except Exception as exc:
                out.append(self._dead(rec, exc))
        if not good:
            return out
        try:
            emits = await self._retrying([e for _, e in good], unknown_attempts=1)
            return out + [self._encode(e) for e in emits]
        except Exception as exc:
            if classify(exc).kind is FailureKind.TRANSIENT:
                # Retried for the whole budget: keep every record for a re-drive.
                return out + [self._dead(rec, exc) for rec, _ in good]
            for rec, event in good:
                try:
                    out.extend(self._encode(e) for e in await self._retrying([event]))
                except Exception as exc:
                    out.append(self._dead(rec, exc))
            return out

    async def _handle_lane(self, lane: Lane, batch: Sequence[Incoming]) -> list[Record]:
        """Records for a batch of a lane's records; the lane decodes them itself.

        A failing batch is halved until the bad record stands alone (each retry rebuilds
        the lane's state from the log); that record is dead-lettered and poisoned, so no
        later fold or rebuild meets it again. Transient failures are retried first and,
        past their budget, cost the whole batch (kept in the dead letters for a re-drive).
        """
        records = [LogRecord(r.partition, r.offset, r.key, r.value) for r in batch]
        partitions = sorted({r.partition for r in batch})
        try:
            outcome = await with_retries(
                functools.partial(lane.handle, records),
                unknown_attempts=1 if len(batch) > 1 else self.settings.unknown_failure_attempts,
                transient_budget_s=self.settings.transient_retry_s,
                before_retry=functools.partial(lane.forget, partitions),
            )
        except Exception as exc:  # a bug must not stop the lane; the log keeps all
            lane.forget(partitions)
            if len(batch) > 1 and classify(exc).kind is not FailureKind.TRANSIENT:
                mid = len(batch) // 2
                return await self._handle_lane(lane, batch[:mid]) + await self._handle_lane(
                    lane, batch[mid:]
                )
            if len(batch) == 1:
                lane.poison(records[0])
            return [self._dead(rec, exc) for rec in batch]
        at = {(r.partition, r.offset): r for r in batch}
        return [
            self._dead(at[o.record.partition, o.record.offset], ProcessingError(o.code, o.message))
            if isinstance(o, Refusal)
            else self._encode(o)
            for o in outcome
        ]

    def _encode(self, emit: Emit) -> Record:
        full = topic(emit.topic, self.settings)
        return Record(full, emit.key.encode(), self.serde.encode(emit.event, full), emit.partition)

    def _dead(self, rec: Incoming, exc: BaseException) -> Record:
        if isinstance(exc, DecodeError | ProcessingError):
            code, message = exc.code, str(exc) if isinstance(exc, DecodeError) else exc.message
        else:
            failure = classify(exc)
            code = failure.code
            message = f"{failure.kind.value} failure: {failure.message}"
        DEAD_LETTERS.labels(code=code).inc()
        log.warning(
            "dead_lettered",
            extra={"agent": self.name, "topic": rec.topic, "offset": rec.offset, "code": code},
        )
        return dead_letter_record(
            self.serde, self._deadletter_topic, rec, code, f"[{self.name}] {message}"
        )


def dead_letter_record(
    serde: EventSerde, deadletter_topic: str, origin: Incoming, code: str, message: str
) -> Record:
    """A ``DeadLettered`` record that keeps the original bytes, so nothing is lost."""
    key = origin.key
    event = DeadLettered(
        origin_topic=origin.topic,
        origin_partition=origin.partition,
        origin_offset=origin.offset,
        origin_key=key.decode("utf-8", errors="replace") if key is not None else None,
        error_code=code,
        error_message=message[:MAX_ERROR_MESSAGE],
        payload=origin.value or b"",
    )
    return Record(deadletter_topic, key, serde.encode(event, deadletter_topic))
