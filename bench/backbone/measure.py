"""Timing one path: send keyed messages, collect them at the far end, summarise.

Every message's key is unique within a run, and the send time of each key is kept in
this process, so latency is receive time minus send time on one monotonic clock.
Records are counted by unique ``(partition, offset)`` and unique key: Tansu may
re-send records a fetch already returned, and its high watermark lags the log, so
neither end offsets nor raw record counts can be trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

from bench.stats import percentile

MAX_REQUEST_BYTES = 4 * 1024 * 1024
FETCH_MAX_WAIT_MS = 10
"""How long a fetch may wait for data. Apache Kafka answers as soon as a record
arrives, so this changes nothing there; Tansu holds every fetch for about this long,
so it sets the floor of a consumer's latency (aiokafka's default is 500 ms)."""


@dataclass(frozen=True)
class Load:
    """How hard to push one path: a timed burst, then a paced run for latency."""

    messages: int
    warmup: int
    latency_messages: int
    latency_interval_s: float


@dataclass
class Result:
    """One row of the results table."""

    broker: str
    broker_version: str
    path: str
    size: int
    messages: int
    seconds: float
    msgs_per_s: float
    mb_per_s: float
    p50_ms: float
    p99_ms: float
    loaded_p50_ms: float
    loaded_p99_ms: float
    value_bytes: int
    latency_messages: int
    duplicates: int
    settings: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def new_producer(bootstrap: str) -> AIOKafkaProducer:
    """The load generator's producer: aiokafka defaults, large records allowed."""
    return AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        max_request_size=MAX_REQUEST_BYTES,
        linger_ms=0,
        acks=1,
    )


async def wait_for_leaders(bootstrap: str, topics: Sequence[str], timeout: float = 30.0) -> None:
    """Return once every partition of ``topics`` has a leader (new topics need a moment)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        deadline = time.monotonic() + timeout
        while True:
            described = await admin.describe_topics(list(topics))
            ready = all(
                t.get("error_code", 0) == 0
                and t.get("partitions")
                and all(
                    p.get("error_code", 0) == 0 and p.get("leader", p.get("leader_id", -1)) >= 0
                    for p in t["partitions"]
                )
                for t in described
            )
            if ready or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


class Collector:
    """Reads every partition of one topic and records when each key first arrives."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.topic = topic
        self.partitions = partitions
        self.consumer_bootstrap = bootstrap
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
            max_partition_fetch_bytes=MAX_REQUEST_BYTES,
            fetch_max_bytes=4 * MAX_REQUEST_BYTES,
        )
        self.received: dict[bytes, float] = {}
        self.duplicates = 0
        self._seen: set[tuple[int, int]] = set()
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    async def start(self) -> None:
        await wait_for_leaders(self.consumer_bootstrap, [self.topic])
        # Assigned, not subscribed: no group join to wait for (Tansu takes a full
        # rebalance timeout to admit a member).
        await self.consumer.start()
        tps = [TopicPartition(self.topic, p) for p in range(self.partitions)]
        self.consumer.assign(tps)
        await self.consumer.seek_to_beginning(*tps)
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            batches = await self.consumer.getmany(timeout_ms=100, max_records=10_000)
            now = time.perf_counter()
            for tp, records in batches.items():
                for record in records:
                    if (tp.partition, record.offset) in self._seen:
                        continue  # a re-sent record (Tansu), not a new one
                    self._seen.add((tp.partition, record.offset))
                    key = record.key or b""
                    if key in self.received:
                        self.duplicates += 1  # re-processed upstream (at-least-once)
                    else:
                        self.received[key] = now
            if batches:
                self._changed.set()

    async def wait_for(
        self, keys: Sequence[bytes], timeout: float, check: Callable[[], None] | None = None
    ) -> None:
        """Return once every key has arrived; ``TimeoutError`` naming how many did not.

        ``check`` runs every second and may raise to give up early (a dead worker).
        """
        deadline = time.monotonic() + timeout
        pending = [k for k in keys if k not in self.received]
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{len(pending)} of {len(keys)} messages did not reach {self.topic}"
                )
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, 1.0))
            pending = [k for k in pending if k not in self.received]
            if self._task is not None and self._task.done():
                self._task.result()  # the consumer died: raise its error
            if check is not None:
                check()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.consumer.stop()


Payload = Callable[[int], tuple[bytes, bytes]]
"""Message ``i`` of a phase as ``(key, value)``; keys must be unique within a run."""


async def _burst(
    producer: AIOKafkaProducer, topic: str, messages: Sequence[tuple[bytes, bytes]]
) -> dict[bytes, float]:
    sent: dict[bytes, float] = {}
    futures: list[Awaitable[Any]] = []
    for key, value in messages:
        sent[key] = time.perf_counter()
        futures.append(await producer.send(topic, value, key=key))
    await asyncio.gather(*futures)
    return sent


async def _paced(
    producer: AIOKafkaProducer,
    topic: str,
    messages: Sequence[tuple[bytes, bytes]],
    interval: float,
) -> dict[bytes, float]:
    sent: dict[bytes, float] = {}
    futures: list[Awaitable[Any]] = []
    start = time.perf_counter()
    for i, (key, value) in enumerate(messages):
        delay = start + i * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sent[key] = time.perf_counter()
        futures.append(await producer.send(topic, value, key=key))
    await asyncio.gather(*futures)
    return sent


def _latencies_ms(sent: dict[bytes, float], received: dict[bytes, float]) -> list[float]:
    return sorted((received[k] - t) * 1000.0 for k, t in sent.items())


async def run_load(
    producer: AIOKafkaProducer,
    collector: Collector,
    source_topic: str,
    make: Callable[[str, int], tuple[bytes, bytes]],
    load: Load,
    *,
    first_timeout: float = 120.0,
    phase_timeout: float = 300.0,
    check: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Warm up, burst ``load.messages``, then send ``load.latency_messages`` paced.

    ``make(phase, i)`` builds message ``i`` of a phase ("w", "t" or "l"). The first
    warm-up message may wait for a consumer group to form; nothing before the burst
    is timed.
    """
    first = [make("w", 0)]
    await _burst(producer, source_topic, first)
    await collector.wait_for([first[0][0]], first_timeout, check)
    warm = [make("w", i) for i in range(1, load.warmup + 1)]
    await _burst(producer, source_topic, warm)
    await collector.wait_for([k for k, _ in warm], phase_timeout, check)

    burst = [make("t", i) for i in range(load.messages)]
    sent = await _burst(producer, source_topic, burst)
    await collector.wait_for(list(sent), phase_timeout, check)
    seconds = max(collector.received[k] for k in sent) - min(sent.values())
    loaded = _latencies_ms(sent, collector.received)

    paced = [make("l", i) for i in range(load.latency_messages)]
    sent_paced = await _paced(producer, source_topic, paced, load.latency_interval_s)
    await collector.wait_for(list(sent_paced), phase_timeout, check)
    quiet = _latencies_ms(sent_paced, collector.received)
    value_bytes = int(statistics.fmean(len(v) for _, v in burst)) if burst else 0
    return {
        "messages": load.messages,
        "seconds": seconds,
        "value_bytes": value_bytes,
        "p50_ms": percentile(quiet, 50),
        "p99_ms": percentile(quiet, 99),
        "loaded_p50_ms": percentile(loaded, 50),
        "loaded_p99_ms": percentile(loaded, 99),
        "latency_messages": load.latency_messages,
    }
