"""Archive a broker's topics and committed offsets, restore them into a fresh Tansu.

Runs against Apache Kafka and Tansu. Records are counted by consuming unique
(partition, offset) pairs: Tansu's high watermark can lag its log.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.structs import OffsetAndMetadata

from devstack import Broker
from runtime.archive import ArchiveStore, ArchiveWriter, restore_archive
from runtime.archive.restore import RestoreConflictError
from runtime.embedded.tansu import TansuBroker
from tests.streams.test_topics import topic_configs

PARTITIONS = 3

Record = tuple[int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...], int]
"""(offset, key, value, headers, timestamp_ms) as a consumer sees it."""


@dataclass
class Topics:
    prefix: str
    names: list[str]

    def matches(self, topic: str) -> bool:
        return topic.startswith(self.prefix)


@pytest.fixture
def topics() -> Topics:
    prefix = f"t{uuid.uuid4().hex[:8]}."
    return Topics(prefix, [f"{prefix}turns", f"{prefix}facts"])


@pytest.fixture
def target() -> Iterator[TansuBroker]:
    """A fresh, empty Tansu to restore into."""
    with TansuBroker() as fresh:
        yield fresh


SOURCE_CONFIG = {"retention.ms": "-1", "cleanup.policy": "delete"}


@pytest.fixture
async def source(broker: Broker, topics: Topics) -> Broker:
    await _create(broker.bootstrap, topics.names, SOURCE_CONFIG)
    return broker


async def _create(bootstrap: str, names: list[str], config: dict[str, str] | None = None) -> None:
    partitions = PARTITIONS
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(n, partitions, 1, topic_configs=config or {}) for n in names]
        )
        for _ in range(50):
            described = await admin.describe_topics(names)
            if all(len(d["partitions"]) == partitions for d in described):
                return
            await asyncio.sleep(0.1)
    finally:
        await admin.close()


async def _produce(bootstrap: str, names: list[str], per_topic: int, tag: str = "") -> None:
    """Keys, headers (one with no value), empty and null values, and multi-record batches."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, acks="all")
    await producer.start()
    try:
        for name in names:
            pending = []
            for i in range(per_topic):
                key = f"group-{i % 5}".encode() if i % 7 else None
                value: bytes | None = f"{tag}{name}:{i}".encode()
                if i % 13 == 12:
                    value = b""
                elif i % 11 == 10 and key is not None:  # a tombstone
                    value = None
                headers = [("seq", str(i).encode()), ("none", None)] if i % 2 else []
                fut = await producer.send(
                    name, value=value, key=key, partition=i % PARTITIONS, headers=headers
                )
                pending.append(fut)
                if i % 10 == 9:  # most go out as batches of several records, some alone
                    await asyncio.gather(*pending)
                    pending.clear()
                    await producer.send_and_wait(
                        name, f"{tag}single:{i}".encode(), key=b"single", partition=i % PARTITIONS
                    )
            await asyncio.gather(*pending)
    finally:
        await producer.stop()


async def _read_all(bootstrap: str, names: list[str]) -> dict[TopicPartition, list[Record]]:
    """Every record of every partition, by unique offset, oldest first."""
    tps = [TopicPartition(name, p) for name in names for p in range(PARTITIONS)]
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    await consumer.start()
    try:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        floor = await consumer.end_offsets(tps)  # lags on Tansu, so only a lower bound
        seen: dict[TopicPartition, dict[int, Record]] = {tp: {} for tp in tps}
        idle = 0
        deadline = asyncio.get_running_loop().time() + 30
        while idle < 2 or any([await consumer.position(tp) < floor[tp] for tp in tps]):
            assert asyncio.get_running_loop().time() < deadline, "broker never caught up"
            fresh = 0
            for tp, msgs in (await consumer.getmany(timeout_ms=200)).items():
                for m in msgs:
                    if m.offset not in seen[tp]:
                        headers = tuple((k, v) for k, v in (m.headers or ()))
                        seen[tp][m.offset] = (m.offset, m.key, m.value, headers, m.timestamp)
                        fresh += 1
            idle = idle + 1 if not fresh else 0
        return {tp: [records[o] for o in sorted(records)] for tp, records in seen.items()}
    finally:
        await consumer.stop()


async def _commit(bootstrap: str, group: str, offsets: dict[TopicPartition, int]) -> None:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign(list(offsets))
        await consumer.commit({tp: OffsetAndMetadata(o, "") for tp, o in offsets.items()})
    finally:
        await consumer.stop()


async def _committed(
    bootstrap: str, group: str, tps: list[TopicPartition]
) -> dict[TopicPartition, Any]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign(tps)
        return {tp: await consumer.committed(tp) for tp in tps}
    finally:
        await consumer.stop()


async def _archive(bootstrap: str, root: Path, topics: Topics) -> int:
    writer = ArchiveWriter(bootstrap, root, topics.matches, flush_ms=100)
    await writer.start()
    try:
        return await writer.catch_up()
    finally:
        await writer.stop()


def _archived_offsets(root: Path, topics: Topics) -> dict[TopicPartition, list[int]]:
    store = ArchiveStore(root)
    return {
        TopicPartition(name, p): [r["offset"] for r in store.log(name, p).read()]
        for name in topics.names
        for p in range(PARTITIONS)
    }


async def test_a_restored_broker_holds_every_record_and_committed_offset(
    source: Broker, topics: Topics, target: TansuBroker, tmp_path: Path
) -> None:
    await _produce(source.bootstrap, topics.names, per_topic=60)
    original = await _read_all(source.bootstrap, topics.names)
    assert sum(len(v) for v in original.values()) == 2 * (60 + 6)
    group = f"g-{topics.prefix}"
    commits = {tp: len(records) // 2 for tp, records in original.items()}
    commits[TopicPartition(topics.names[0], 0)] = len(original[TopicPartition(topics.names[0], 0)])
    await _commit(source.bootstrap, group, commits)

    archived = await _archive(source.bootstrap, tmp_path, topics)
    assert archived == 2 * (60 + 6)

    report = await restore_archive(target.bootstrap, tmp_path)

    assert report.records == archived
    assert report.topics == 2
    assert report.skipped_partitions == 0
    assert group in report.groups
    assert await _read_all(target.bootstrap, topics.names) == original
    restored = await _committed(target.bootstrap, group, list(commits))
    assert restored == commits
    # a source topic must not come back with the broker's default retention
    archived_config = ArchiveStore(tmp_path).topics()[topics.names[0]]["config"]
    assert SOURCE_CONFIG.items() <= archived_config.items()
    configs = await topic_configs(target.bootstrap, topics.names)
    assert all(configs[name]["retention.ms"] == "-1" for name in topics.names)


async def test_restoring_twice_is_harmless(
    source: Broker, topics: Topics, target: TansuBroker, tmp_path: Path
) -> None:
    await _produce(source.bootstrap, topics.names, per_topic=30)
    group = f"g-{topics.prefix}"
    await _commit(source.bootstrap, group, {TopicPartition(topics.names[1], 2): 4})
    await _archive(source.bootstrap, tmp_path, topics)
    await restore_archive(target.bootstrap, tmp_path)
    first = await _read_all(target.bootstrap, topics.names)

    again = await restore_archive(target.bootstrap, tmp_path)

    assert again.records == 0
    assert again.skipped_partitions == 2 * PARTITIONS
    assert await _read_all(target.bootstrap, topics.names) == first
    committed = await _committed(target.bootstrap, group, [TopicPartition(topics.names[1], 2)])
    assert committed == {TopicPartition(topics.names[1], 2): 4}


async def test_restoring_into_a_partition_holding_other_data_is_refused(
    source: Broker, topics: Topics, target: TansuBroker, tmp_path: Path
) -> None:
    await _produce(source.bootstrap, topics.names, per_topic=20)
    await _archive(source.bootstrap, tmp_path, topics)
    await _create(target.bootstrap, topics.names)
    await _produce(target.bootstrap, topics.names[:1], per_topic=4, tag="other")

    with pytest.raises(RestoreConflictError, match=topics.names[0]):
        await restore_archive(target.bootstrap, tmp_path)


async def test_the_writer_resumes_after_a_restart_without_duplicates(
    source: Broker, topics: Topics, tmp_path: Path
) -> None:
    await _produce(source.bootstrap, topics.names, per_topic=25)
    first = await _archive(source.bootstrap, tmp_path, topics)
    await _produce(source.bootstrap, topics.names, per_topic=25, tag="later")

    second = await _archive(source.bootstrap, tmp_path, topics)

    on_broker = await _read_all(source.bootstrap, topics.names)
    archived = _archived_offsets(tmp_path, topics)
    assert first + second == sum(len(v) for v in on_broker.values()) == 2 * 2 * (25 + 2)
    for tp, records in on_broker.items():
        assert archived[tp] == [r[0] for r in records], tp
    store = ArchiveStore(tmp_path)
    for tp, offsets in archived.items():
        assert store.log(tp.topic, tp.partition).position.records == len(offsets)


async def test_committed_offsets_follow_their_records_when_the_archive_has_gaps(
    target: TansuBroker, tmp_path: Path
) -> None:
    # Compaction, retention or transaction markers leave gaps; a restore renumbers
    # the records densely, so each committed offset must move with them.
    name = f"t{uuid.uuid4().hex[:8]}.facts"
    originals = [3, 4, 7, 8, 12]
    store = ArchiveStore(tmp_path)
    store.save_topic(name, 1, {})
    store.log(name, 0).append(
        [
            {
                "offset": o,
                "timestamp_ms": 1_700_000_000_000 + o,
                "key": b"k",
                "value": b"%d" % o,
                "headers": [{"key": "h", "value": None}],
            }
            for o in originals
        ]
    )
    store.save_offsets(
        [("done", name, 0, 13, "all"), ("middle", name, 0, 8, "m"), ("lost", name, 0, 1, "")]
    )

    report = await restore_archive(target.bootstrap, tmp_path)

    assert report.records == len(originals)
    consumer = AIOKafkaConsumer(bootstrap_servers=target.bootstrap, group_id=None)
    await consumer.start()
    try:
        tp = TopicPartition(name, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got: list[tuple[int, bytes | None]] = []
        while len(got) < len(originals):
            for m in (await consumer.getmany(timeout_ms=500)).get(tp, []):
                if m.offset >= len(got):
                    got.append((m.offset, m.value))
    finally:
        await consumer.stop()
    assert got == [(i, b"%d" % o) for i, o in enumerate(originals)]
    tp = TopicPartition(name, 0)
    assert await _committed(target.bootstrap, "done", [tp]) == {tp: 5}
    assert await _committed(target.bootstrap, "middle", [tp]) == {tp: 3}
    assert await _committed(target.bootstrap, "lost", [tp]) == {tp: 0}
    # the writer resumes archiving this broker after what it now holds
    assert ArchiveStore(tmp_path).log(name, 0).position.next_offset == len(originals)
