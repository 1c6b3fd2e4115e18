"""Replay an archive into a broker so every partition gets its records back in order,
and every consumer group resumes where it stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import OffsetAndMetadata

from runtime.archive.store import ArchiveStore
from runtime.topics import create_topic_errors

Progress = Callable[[str, int, int], None]
"""Called as ``progress(topic, done, total)`` while records are replayed."""


class RestoreConflictError(RuntimeError):
    """The target broker already holds different data for an archived partition."""


@dataclass
class RestoreReport:
    topics: int = 0
    records: int = 0
    skipped_partitions: int = 0
    groups: set[str] = field(default_factory=set)


async def restore_archive(
    bootstrap: str,
    root: Path,
    progress: Progress | None = None,
    batch: int = 2_000,
) -> RestoreReport:
    """Restore topics and committed offsets from ``root`` into the broker.

    Partitions whose end offset already equals the archived count are left alone, so
    restoring twice is harmless. A partition holding other data is a conflict.
    """
    store = ArchiveStore(root)
    report = RestoreReport()
    topics = store.topics()
    if not topics:
        return report
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap,
        acks="all",
        linger_ms=5,
        max_batch_size=1024 * 1024,
        max_request_size=64 * 1024 * 1024,
    )
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    await producer.start()
    await probe.start()
    translation: dict[TopicPartition, list[int]] = {}
    try:
        existing = set(await admin.list_topics())
        for name, meta in topics.items():
            if name not in existing:
                create_topic_errors(
                    await admin.create_topics(
                        [NewTopic(name, int(meta["partitions"]), 1, topic_configs=meta["config"])]
                    )
                )
        report.topics = len(topics)
        await _wait_for_metadata(probe, topics)
        for name, meta in topics.items():
            tps = [TopicPartition(name, p) for p in range(int(meta["partitions"]))]
            ends = await probe.end_offsets(tps)
            for tp in tps:
                log = store.log(name, tp.partition)
                if ends[tp] != 0:
                    present = await _count_records(probe, tp, ends[tp])
                    if present == log.position.records:
                        report.skipped_partitions += 1
                        translation[tp] = [r["offset"] for r in log.read()]
                        continue
                    raise RestoreConflictError(
                        f"{name}[{tp.partition}] holds {present} records but the archive has "
                        f"{log.position.records}; restore into an empty broker or topic"
                    )
                originals, renumbered = await _replay(
                    producer, log.read(), tp, batch, progress, log.position.records
                )
                report.records += len(originals)
                translation[tp] = originals
                if renumbered:
                    # the archive now mirrors this broker: resume archiving after it
                    log.position.next_offset = renumbered[-1] + 1
                    log.save_position()
        await _restore_offsets(bootstrap, store, translation, report)
    finally:
        await probe.stop()
        await producer.stop()
        await admin.close()
    return report


async def _replay(
    producer: AIOKafkaProducer,
    rows: Iterable[dict[str, Any]],
    tp: TopicPartition,
    batch: int,
    progress: Progress | None,
    total: int,
) -> tuple[list[int], list[int]]:
    """Produce rows in order into one partition; (original offsets, new offsets)."""
    originals: list[int] = []
    renumbered: list[int] = []
    pending: list[asyncio.Future[Any]] = []

    async def drain() -> None:
        for meta in await asyncio.gather(*pending):
            renumbered.append(meta.offset)
        pending.clear()
        if progress:
            progress(tp.topic, len(renumbered), total)

    for row in rows:
        originals.append(row["offset"])
        fut = await producer.send(
            tp.topic,
            value=row["value"],
            key=row["key"],
            partition=tp.partition,
            timestamp_ms=row["timestamp_ms"] or None,
            headers=[(h["key"], h["value"]) for h in row["headers"]],
        )
        pending.append(fut)
        if len(pending) >= batch:
            await drain()
    await drain()
    return originals, renumbered


async def _count_records(
    consumer: AIOKafkaConsumer, tp: TopicPartition, at_least_until: int, deadline_s: float = 30.0
) -> int:
    # Counted by reading, not from end_offsets: Tansu's high watermark can lag its log.
    # It never runs ahead of it, though, so it bounds how far we must read before quiet
    # fetches can mean "no more": the first fetch of a partition may come back empty.
    consumer.assign([tp])
    consumer.seek(tp, 0)
    seen: set[int] = set()
    idle = 0
    loop = asyncio.get_running_loop()
    give_up = loop.time() + deadline_s
    while idle < 2 or (await consumer.position(tp) < at_least_until and loop.time() < give_up):
        batch = await consumer.getmany(tp, timeout_ms=200)
        fresh = {m.offset for m in batch.get(tp, [])} - seen
        seen |= fresh
        idle = idle + 1 if not fresh else 0
    return len(seen)


async def _wait_for_metadata(consumer: AIOKafkaConsumer, topics: Mapping[str, object]) -> None:
    for _ in range(100):
        known = await consumer.topics()
        if all(t in known for t in topics):
            return
        await asyncio.sleep(0.1)


def _translate(originals: list[int], committed: int) -> int:
    # The next offset to read, renumbered: how many archived records precede it.
    # Identity when the archive is gap-free (no compaction, no transaction markers).
    lo, hi = 0, len(originals)
    while lo < hi:
        mid = (lo + hi) // 2
        if originals[mid] < committed:
            lo = mid + 1
        else:
            hi = mid
    return lo


async def _restore_offsets(
    bootstrap: str,
    store: ArchiveStore,
    translation: dict[TopicPartition, list[int]],
    report: RestoreReport,
) -> None:
    by_group: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
    for group, topic, partition, offset, metadata in store.offsets():
        tp = TopicPartition(topic, partition)
        new = _translate(translation.get(tp, []), offset) if tp in translation else offset
        by_group.setdefault(group, {})[tp] = OffsetAndMetadata(new, metadata)
    for group, offsets in by_group.items():
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
        )
        await consumer.start()
        try:
            consumer.assign(list(offsets))
            await consumer.commit(offsets)
        finally:
            await consumer.stop()
        report.groups.add(group)
