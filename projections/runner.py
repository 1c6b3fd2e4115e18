"""Feed projections from Kafka: positions from the store, never from a consumer group.

The runner assigns itself every partition of a projection's topics, seeks to the
positions the store recorded, and hands decoded batches to ``apply``. A crash at any
point replays from the store's positions, and ``apply`` skips what it already has, so
the store converges to the same state as a clean run.

A failed batch is sorted by :func:`streams.failures.classify`. Transient failures (the
store away, a timeout) back off and retry the same batch. Otherwise the batch is split
in halves until the bad record stands alone, so every good record lands; that record is
dead-lettered with its reason and origin (after a bounded number of tries when the
failure is not known to be the data's) and its offset is recorded as handled. One bad
record never holds up the records behind it, whichever tenant they belong to.

Once a second the runner reports its health (lag, and *stuck* when a partition has
work and has not advanced for ``stuck_after_s``) to a :class:`HealthBoard`, from a task
of its own, so a runner blocked inside a store call is still reported.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from events.serde import DecodeError, EventSerde
from projections.base import Applied, Projection, RewindNeededError
from projections.health import HealthBoard, StageHealth
from runtime.observability.metrics import (
    DEAD_LETTERS,
    PROJECTION_APPLIED,
    PROJECTION_LAG,
    STAGE_FAILURES,
    STAGE_STUCK,
)
from runtime.observability.tracing import span
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic
from streams.failures import Failure, FailureKind, classify
from streams.wiring import Incoming, dead_letter_record

log = logging.getLogger(__name__)


@dataclass
class Lag:
    """How far a projection is behind, per partition and in total."""

    messages: int = 0
    seconds: float = 0.0
    per_partition: dict[tuple[str, int], int] = field(default_factory=dict)


TP = tuple[str, int]


@dataclass
class _LastError:
    failure: Failure
    topic: str
    partition: int
    offset: int
    at: float


@dataclass(eq=False, repr=False)
class ProjectionRunner:
    """Runs one projection until stopped (or until caught up, for rebuilds)."""

    projection: Projection
    settings: TribalSettings
    serde: EventSerde
    batch_size: int = 1000
    on_batch: Callable[[ProjectionRunner, int], None] | None = None
    health: HealthBoard | None = None
    applied: int = field(default=0, init=False)
    skipped_undecodable: int = field(default=0, init=False)
    dead_lettered: int = field(default=0, init=False)
    lag: Lag = field(default_factory=Lag, init=False)
    _consumer: AIOKafkaConsumer | None = field(default=None, init=False)
    _producer: AIOKafkaProducer | None = field(default=None, init=False)
    _last_event_ts: dict[TP, int] = field(default_factory=dict, init=False)
    _first_headers: list[tuple[str, bytes]] | None = field(default=None, init=False)
    # What this runner has handled (applied or dead-lettered): the next offset per
    # partition. Unlike the consumer's position it does not move on a fetch, so a
    # batch retried forever shows as no progress.
    _done: dict[TP, int] = field(default_factory=dict, init=False)
    _ends: dict[TP, int] = field(default_factory=dict, init=False)
    _progress_at: dict[TP, float] = field(default_factory=dict, init=False)
    _raw: dict[tuple[str, int, int], tuple[bytes | None, bytes | None]] = field(
        default_factory=dict, init=False
    )
    _attempts: dict[tuple[str, int, int], int] = field(default_factory=dict, init=False)
    _last_error: _LastError | None = field(default=None, init=False)
    _reporter: asyncio.Task[None] | None = field(default=None, init=False)
    _applying_since: float | None = field(default=None, init=False)

    def _partitions(self) -> list[TopicPartition]:
        tps = []
        for short in self.projection.topics:
            spec = TOPICS_BY_NAME[short]
            full = topic(short, self.settings)
            tps += [TopicPartition(full, p) for p in range(spec.partition_count(self.settings))]
        return tps

    async def start(self, from_timestamp_ms: int | None = None) -> None:
        """Assign every partition and seek to the store's positions.

        Partitions the store has never seen start at the beginning, or at the first
        record at or after ``from_timestamp_ms`` when given (a partial rebuild).
        """
        await self.projection.setup()
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=self.settings.kafka_bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self.settings.fetch_max_wait_ms,
            max_partition_fetch_bytes=8 * 1024 * 1024,
        )
        await self._consumer.start()
        tps = self._partitions()
        self._consumer.assign(tps)
        positions = await self.projection.positions()
        by_time: dict[TopicPartition, object] = {}
        if from_timestamp_ms is not None:
            fresh = [tp for tp in tps if (tp.topic, tp.partition) not in positions]
            if fresh:
                by_time = dict(
                    await self._consumer.offsets_for_times({tp: from_timestamp_ms for tp in fresh})
                )
        for tp in tps:
            start = positions.get((tp.topic, tp.partition))
            found = by_time.get(tp)
            if start is not None:
                self._consumer.seek(tp, start)
            elif found is not None:
                self._consumer.seek(tp, found.offset)  # type: ignore[attr-defined]
            elif from_timestamp_ms is not None:
                await self._consumer.seek_to_end(tp)  # nothing that recent here
            else:
                await self._consumer.seek_to_beginning(tp)
        now = time.monotonic()
        for tp in tps:
            key = (tp.topic, tp.partition)
            self._done[key] = await self._consumer.position(tp)
            self._progress_at[key] = now
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.kafka_bootstrap,
            acks="all",
            max_request_size=self.settings.max_message_bytes,
        )
        await self._producer.start()

    async def stop(self) -> None:
        if self._reporter is not None:
            self._reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reporter
            self._reporter = None
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None
        if self.health is not None:
            await self.health.close()
        await self.projection.close()

    async def step(self, timeout_ms: int = 200) -> int:
        """Fetch and apply one batch; returns how many records were fetched.

        Raises only for transient failures (and :class:`RewindNeededError`): a bad
        record is dead-lettered here and the rest of the batch lands.
        """
        assert self._consumer is not None
        records = await self._consumer.getmany(timeout_ms=timeout_ms, max_records=self.batch_size)
        fetched = sum(len(msgs) for msgs in records.values())
        batch: list[Applied] = []
        self._first_headers = None
        self._raw.clear()
        deadletter_topic = topic("deadletter", self.settings)
        for tp, msgs in records.items():
            source = TOPICS_BY_NAME.get(self._short(tp.topic))
            for m in msgs:
                try:
                    event = self.serde.decode(m.value or b"")
                except DecodeError as exc:
                    # What came before it lands first: positions only ever move in order.
                    await self._flush(batch)
                    batch = []
                    if (source is not None and source.source) or tp.topic == deadletter_topic:
                        # A source topic's agent dead-letters what it cannot decode; a
                        # second letter here would count the record twice (and a dead
                        # letter of a dead letter would never end).
                        self.skipped_undecodable += 1
                        log.warning(
                            "%s: skipping %s[%d]@%d: %s",
                            self.projection.name,
                            tp.topic,
                            tp.partition,
                            m.offset,
                            exc,
                        )
                        await self.projection.skip(tp.topic, tp.partition, m.offset)
                        self._note_done(tp.topic, tp.partition, m.offset)
                    else:
                        # Derived topics are written by Tribal alone: a foreign record
                        # there is kept in the dead letters, never silently dropped.
                        origin = Incoming(tp.topic, tp.partition, m.offset, m.key, m.value)
                        await self._dead_letter(origin, exc.code, str(exc))
                    continue
                key = m.key.decode("utf-8", "replace") if m.key is not None else None
                if self._first_headers is None and m.headers:
                    self._first_headers = list(m.headers)
                batch.append(Applied(tp.topic, tp.partition, m.offset, key, event))
                self._raw[(tp.topic, tp.partition, m.offset)] = (m.key, m.value)
                self._last_event_ts[(tp.topic, tp.partition)] = m.timestamp or 0
            if (hw := self._consumer.highwater(tp)) is not None:
                self._ends[(tp.topic, tp.partition)] = hw
        await self._flush(batch)
        return fetched

    async def _flush(self, batch: list[Applied]) -> None:
        if not batch:
            return
        # One span per batch, in the trace of its first record, so a traced event
        # shows where it was applied.
        with span(f"projection.{self.projection.name}", self._first_headers, size=len(batch)):
            n = await self._apply(batch)
        PROJECTION_APPLIED.labels(projection=self.projection.name).inc(n)
        self.applied += n
        if self.on_batch is not None:
            self.on_batch(self, n)

    def _short(self, full: str) -> str:
        prefix = self.settings.topic_prefix
        return full[len(prefix) :] if full.startswith(prefix) else full

    def _note_done(self, topic_name: str, partition: int, offset: int) -> None:
        key = (topic_name, partition)
        if offset + 1 > self._done.get(key, 0):
            self._done[key] = offset + 1
            self._progress_at[key] = time.monotonic()

    async def _apply(self, batch: list[Applied]) -> int:
        """Apply ``batch``; isolate and dead-letter what fails for a reason of its own."""
        self._applying_since = time.monotonic()
        try:
            n = await self.projection.apply(batch)
        except RewindNeededError:
            raise
        except Exception as exc:
            failure = classify(exc)
            first = batch[0]
            self._remember(failure, first)
            STAGE_FAILURES.labels(stage=self.projection.name, kind=failure.kind.value).inc()
            if failure.kind is FailureKind.TRANSIENT:
                raise
            if len(batch) > 1:
                # Halves in arrival order keep every partition contiguous, so the
                # second half starts exactly where the first one left the store.
                mid = len(batch) // 2
                return await self._apply(batch[:mid]) + await self._apply(batch[mid:])
            return await self._settle(first, exc, failure)
        finally:
            self._applying_since = None
        for a in batch:
            self._note_done(a.topic, a.partition, a.offset)
        return n

    async def _settle(self, applied: Applied, exc: BaseException, failure: Failure) -> int:
        """One record failed alone: dead-letter it now (data) or after bounded tries."""
        where = (applied.topic, applied.partition, applied.offset)
        if failure.kind is FailureKind.UNKNOWN:
            tries = self._attempts.get(where, 0) + 1
            self._attempts[where] = tries
            if tries < self.settings.unknown_failure_attempts:
                log.warning(
                    "%s: %s[%d]@%d failed (%s), try %d of %d",
                    self.projection.name,
                    *where,
                    failure.message,
                    tries,
                    self.settings.unknown_failure_attempts,
                )
                raise exc  # run() backs off and the same batch comes back
            # Before blaming the record, make sure the store itself answers: an outage
            # that raised an unforeseen error must not dead-letter healthy records.
            await self.projection.positions()
        self._attempts.pop(where, None)
        key, value = self._raw.get(where, (None, None))
        if value is None:
            value = self.serde.encode(applied.event, applied.topic)
        await self._dead_letter(
            Incoming(*where, key, value),
            failure.code,
            f"{failure.kind.value} failure: {failure.message}",
        )
        return 0

    async def _dead_letter(self, origin: Incoming, code: str, message: str) -> None:
        """Produce the dead letter (acknowledged), then record the offset as handled."""
        assert self._producer is not None
        where = (origin.topic, origin.partition, origin.offset)
        if origin.topic == topic("deadletter", self.settings):
            # Never a dead letter of a dead letter: the record stays where it is.
            log.error(
                "%s: cannot apply dead letter %s[%d]@%d: %s",
                self.projection.name,
                *where,
                message[:300],
            )
            await self.projection.skip(*where)
            self._note_done(*where)
            return
        record = dead_letter_record(
            self.serde,
            topic("deadletter", self.settings),
            origin,
            code,
            f"[projection {self.projection.name}] {message}",
        )
        await self._producer.send_and_wait(record.topic, record.value, key=record.key)
        # A crash between the two writes dead-letters the record twice, never zero times.
        await self.projection.skip(*where)
        DEAD_LETTERS.labels(code=code).inc()
        self.dead_lettered += 1
        self._note_done(*where)
        log.warning(
            "%s: dead-lettered %s[%d]@%d: %s %s",
            self.projection.name,
            *where,
            code,
            message[:300],
        )

    def _remember(self, failure: Failure, applied: Applied) -> None:
        self._last_error = _LastError(
            failure, applied.topic, applied.partition, applied.offset, time.time()
        )

    async def measure_lag(self) -> Lag:
        """Messages and seconds behind the end of every partition."""
        assert self._consumer is not None
        tps = list(self._consumer.assignment())
        ends = await self._consumer.end_offsets(tps)
        for tp in tps:
            self._ends[(tp.topic, tp.partition)] = ends[tp]
        return self._lag()

    def _lag(self) -> Lag:
        per: dict[TP, int] = {}
        for key, end in self._ends.items():
            per[key] = max(0, end - self._done.get(key, 0))
        behind = sum(per.values())
        newest = max(self._last_event_ts.values(), default=0)
        seconds = max(0.0, time.time() - newest / 1000) if behind and newest else 0.0
        self.lag = Lag(behind, seconds, per)
        PROJECTION_LAG.labels(projection=self.projection.name).set(behind)
        return self.lag

    def stage_health(self) -> StageHealth:
        """Lag, and the partition that has had work longest without advancing."""
        lag = self._lag()
        now = time.monotonic()
        worst: tuple[float, TP] | None = None
        for key, behind in lag.per_partition.items():
            if behind <= 0:
                self._progress_at[key] = now  # nothing to do is not being stuck
                continue
            stalled = now - self._progress_at.get(key, now)
            if worst is None or stalled > worst[0]:
                worst = (stalled, key)
        stuck = worst is not None and worst[0] > self.settings.stuck_after_s
        STAGE_STUCK.labels(stage=self.projection.name).set(1 if stuck else 0)
        last = self._last_error
        if last is not None and self._done.get((last.topic, last.partition), 0) > last.offset:
            last = None  # that record is behind us now (applied or dead-lettered)
        error = last.failure.message[:2000] if last else None
        if error is None and stuck and self._applying_since is not None:
            error = f"no error yet: one write has been waiting {now - self._applying_since:.0f} s"
        health = StageHealth(
            stage=self.projection.name,
            lag_messages=lag.messages,
            stuck=stuck,
            last_error=error,
            error_kind=last.failure.kind.value if last else None,
            reported_at=time.time(),
        )
        if worst is not None:
            stalled, (t, p) = worst
            health = dataclasses.replace(
                health, topic=t, partition=p, offset=self._done.get((t, p), 0), stalled_s=stalled
            )
        return health

    async def _report_forever(self, every_s: float = 1.0) -> None:
        assert self.health is not None
        while True:
            try:
                await self.health.report(self.stage_health())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store may be the very thing that is down
                log.debug("%s: cannot report health: %s", self.projection.name, exc)
            await asyncio.sleep(every_s)

    async def run(self, stop: asyncio.Event) -> None:
        """Apply until ``stop``; transient failures back off and retry the same batch."""
        if self.health is not None and self._reporter is None:
            self._reporter = asyncio.create_task(self._report_forever())
        delay = 0.5
        last_lag = 0.0
        while not stop.is_set():
            try:
                await self.step()
                delay = 0.5
                if time.monotonic() - last_lag > 1.0:
                    await self.measure_lag()
                    last_lag = time.monotonic()
            except RewindNeededError as exc:
                log.info("%s: %s; re-reading from the store's positions", self.projection.name, exc)
                await self._rewind()
                continue
            except Exception as exc:
                log.warning(
                    "%s: apply failed (%s); retrying in %.1fs",
                    self.projection.name,
                    classify(exc).message[:300],
                    delay,
                )
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 30.0)
                # Re-read from what the store recorded; the store may still be down,
                # in which case the next pass fails and backs off again.
                try:
                    await self._rewind()
                except Exception as exc:
                    log.warning("%s: store not reachable yet (%s)", self.projection.name, exc)

    async def _rewind(self) -> None:
        # Re-read from what the store recorded: the failed batch is applied again.
        assert self._consumer is not None
        positions = await self.projection.positions()
        for tp in self._consumer.assignment():
            start = positions.get((tp.topic, tp.partition))
            if start is None:
                await self._consumer.seek_to_beginning(tp)
            else:
                self._consumer.seek(tp, start)
                # The store may be ahead (a rebuild swapped in): that is progress.
                self._note_done(tp.topic, tp.partition, start - 1)

    async def catch_up(self, idle_passes: int = 3) -> int:
        """Apply until a few consecutive fetches bring nothing (rebuilds, tests).

        Transient failures back off and retry, as in :meth:`run`, at most a few times.
        """
        total = 0
        idle = 0
        failures = 0
        while idle < idle_passes:
            try:
                n = await self.step()
                failures = 0
            except RewindNeededError:
                await self._rewind()
                continue
            except Exception:
                failures += 1
                if failures > max(self.settings.unknown_failure_attempts, 5):
                    raise
                await asyncio.sleep(min(0.2 * 2**failures, 5.0))
                await self._rewind()
                continue
            total += n
            idle = idle + 1 if n == 0 else 0
        return total
