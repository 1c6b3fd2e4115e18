"""Feed projections from Kafka: positions from the store, never from a consumer group.

The runner assigns itself every partition of a projection's topics, seeks to the
positions the store recorded, and hands decoded batches to ``apply``. A crash at any
point replays from the store's positions, and ``apply`` skips what it already has, so
the store converges to the same state as a clean run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition

from events.serde import DecodeError, EventSerde
from projections.base import Applied, Projection, RewindNeededError
from streams.observability.metrics import PROJECTION_APPLIED, PROJECTION_LAG
from streams.observability.tracing import span
from streams.settings import TribalSettings
from streams.topics import TOPICS_BY_NAME, topic

log = logging.getLogger(__name__)


@dataclass
class Lag:
    """How far a projection is behind, per partition and in total."""

    messages: int = 0
    seconds: float = 0.0
    per_partition: dict[tuple[str, int], int] = field(default_factory=dict)


class ProjectionRunner:
    """Runs one projection until stopped (or until caught up, for rebuilds)."""

    def __init__(
        self,
        projection: Projection,
        settings: TribalSettings,
        serde: EventSerde,
        batch_size: int = 1000,
        on_batch: Callable[[ProjectionRunner, int], None] | None = None,
    ) -> None:
        self.projection = projection
        self.settings = settings
        self.serde = serde
        self.batch_size = batch_size
        self.on_batch = on_batch
        self.applied = 0
        self.skipped_undecodable = 0
        self.lag = Lag()
        self._consumer: AIOKafkaConsumer | None = None
        self._last_event_ts: dict[tuple[str, int], int] = {}
        self._first_headers: list[tuple[str, bytes]] | None = None

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

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None
        await self.projection.close()

    async def step(self, timeout_ms: int = 200) -> int:
        """Fetch and apply one batch; returns how many records were fetched."""
        assert self._consumer is not None
        records = await self._consumer.getmany(timeout_ms=timeout_ms, max_records=self.batch_size)
        fetched = sum(len(msgs) for msgs in records.values())
        batch: list[Applied] = []
        self._first_headers = None
        for tp, msgs in records.items():
            for m in msgs:
                try:
                    event = self.serde.decode(m.value or b"")
                except DecodeError as exc:
                    # Derived topics are written by Tribal itself; an undecodable record
                    # here was already dead-lettered upstream or is foreign: skip it.
                    self.skipped_undecodable += 1
                    log.warning(
                        "%s: skipping %s[%d]@%d: %s",
                        self.projection.name,
                        tp.topic,
                        tp.partition,
                        m.offset,
                        exc,
                    )
                    continue
                key = m.key.decode("utf-8", "replace") if m.key is not None else None
                if self._first_headers is None and m.headers:
                    self._first_headers = list(m.headers)
                batch.append(Applied(tp.topic, tp.partition, m.offset, key, event))
                self._last_event_ts[(tp.topic, tp.partition)] = m.timestamp or 0
        if batch:
            # One span per batch, in the trace of its first record, so a traced event
            # shows where it was applied.
            with span(f"projection.{self.projection.name}", self._first_headers, size=len(batch)):
                n = await self.projection.apply(batch)
            PROJECTION_APPLIED.labels(projection=self.projection.name).inc(n)
            self.applied += n
            if self.on_batch is not None:
                self.on_batch(self, n)
        return fetched

    async def measure_lag(self) -> Lag:
        """Messages and seconds behind the end of every partition."""
        assert self._consumer is not None
        tps = list(self._consumer.assignment())
        ends = await self._consumer.end_offsets(tps)
        per: dict[tuple[str, int], int] = {}
        for tp in tps:
            position = await self._consumer.position(tp)
            per[(tp.topic, tp.partition)] = max(0, ends[tp] - position)
        behind = sum(per.values())
        newest = max(self._last_event_ts.values(), default=0)
        seconds = max(0.0, time.time() - newest / 1000) if behind and newest else 0.0
        self.lag = Lag(behind, seconds, per)
        PROJECTION_LAG.labels(projection=self.projection.name).set(behind)
        return self.lag

    async def run(self, stop: asyncio.Event) -> None:
        """Apply until ``stop``; store errors back off and retry the same batch."""
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
            except Exception:
                log.exception("%s: apply failed; retrying in %.1fs", self.projection.name, delay)
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

    async def catch_up(self, idle_passes: int = 3) -> int:
        """Apply until a few consecutive fetches bring nothing (rebuilds, tests)."""
        total = 0
        idle = 0
        while idle < idle_passes:
            try:
                n = await self.step()
            except RewindNeededError:
                await self._rewind()
                continue
            total += n
            idle = idle + 1 if n == 0 else 0
        return total
