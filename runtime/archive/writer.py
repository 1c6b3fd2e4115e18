"""Tail every Tribal topic into the archive, and snapshot committed offsets."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from runtime.archive.store import ArchiveStore

log = logging.getLogger(__name__)

TopicFilter = Callable[[str], bool]

ARCHIVED_CONFIGS = ("cleanup.policy", "retention.ms", "retention.bytes")
"""Topic settings kept with the archive: the ones deciding whether records survive."""


@dataclass(eq=False, repr=False)
class ArchiveWriter:
    """Copies records from a broker into an :class:`ArchiveStore` as they are written.

    Positions live in the archive, not in a consumer group, so the writer resumes
    exactly where its last fsync left off and never needs the broker to remember it.
    """

    bootstrap: str
    root: InitVar[Path]
    """The archive's directory: the writer keeps the :class:`ArchiveStore` on it."""
    topic_filter: TopicFilter
    flush_ms: int = 100
    offsets_every_ms: int = 200
    store: ArchiveStore = field(init=False)
    archived: int = field(default=0, init=False)
    _consumer: AIOKafkaConsumer | None = field(default=None, init=False)
    _admin: AIOKafkaAdminClient | None = field(default=None, init=False)
    _assigned: set[TopicPartition] = field(default_factory=set, init=False)
    _configs: dict[str, dict[str, str]] = field(default_factory=dict, init=False)
    _last_offsets: list[tuple[str, str, int, int, str]] | None = field(default=None, init=False)

    def __post_init__(self, root: Path) -> None:
        self.store = ArchiveStore(root)

    async def start(self) -> None:
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self.flush_ms,
            max_partition_fetch_bytes=16 * 1024 * 1024,
            fetch_max_bytes=64 * 1024 * 1024,
            metadata_max_age_ms=1000,
        )
        await self._consumer.start()
        self._admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
        await self._admin.start()
        await self._refresh_assignment()

    async def stop(self) -> None:
        if self._consumer is not None:
            await self._consumer.stop()
        if self._admin is not None:
            await self._admin.close()

    async def _refresh_assignment(self) -> None:
        assert self._consumer is not None
        assert self._admin is not None
        topics = sorted(t for t in await self._admin.list_topics() if self.topic_filter(t))
        wanted: set[TopicPartition] = set()
        if topics:
            described = await self._admin.describe_topics(topics)
            for desc in described:
                name = desc["topic"]
                parts = sorted(p["partition"] for p in desc["partitions"])
                if not parts:
                    continue
                if name not in self._configs:
                    self._configs[name] = await self._topic_config(name)
                self.store.save_topic(name, len(parts), self._configs[name])
                wanted.update(TopicPartition(name, p) for p in parts)
        if wanted != self._assigned:
            self._consumer.assign(sorted(wanted))
            for tp in wanted:
                self._consumer.seek(tp, self.store.log(tp.topic, tp.partition).position.next_offset)
            self._assigned = wanted

    async def _topic_config(self, name: str) -> dict[str, str]:
        """The settings a restore must re-create: without them a source topic restored
        into Apache Kafka would get the broker's default retention and expire."""
        assert self._admin is not None
        try:
            responses = await self._admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, name)]
            )
        except Exception:
            log.warning("cannot describe the config of %s; archiving it without", name)
            return {}
        config: dict[str, str] = {}
        for response in responses:
            for resource in response.resources:
                for entry in resource[4]:
                    key, value = entry[0], entry[1]
                    if key in ARCHIVED_CONFIGS and value is not None:
                        config[key] = value
        return config

    async def _snapshot_offsets(self) -> None:
        assert self._admin is not None
        rows: list[tuple[str, str, int, int, str]] = []
        if not self._assigned:
            return
        # Partitions are named explicitly: some brokers (Tansu) cannot answer the
        # "all partitions of the group" form of OffsetFetch.
        partitions = sorted(self._assigned)
        for group in await self._admin.list_consumer_groups():
            group_id = group[0] if isinstance(group, tuple) else group
            offsets = await self._admin.list_consumer_group_offsets(group_id, partitions=partitions)
            for tp, om in offsets.items():
                if self.topic_filter(tp.topic) and om.offset >= 0:
                    rows.append((group_id, tp.topic, tp.partition, om.offset, om.metadata or ""))
        rows.sort()
        if rows != self._last_offsets:
            self.store.save_offsets(rows)
            self._last_offsets = rows

    async def _archive_once(self, timeout_ms: int) -> int:
        assert self._consumer is not None
        if not self._assigned:
            await asyncio.sleep(timeout_ms / 1000)
            return 0
        batches = await self._consumer.getmany(timeout_ms=timeout_ms, max_records=20_000)
        n = 0
        for tp, msgs in batches.items():
            log = self.store.log(tp.topic, tp.partition)
            # Some brokers (Tansu) re-send the tail of a batch already fetched; the
            # archive is keyed by offset, so anything below the position is a repeat.
            fresh = [m for m in msgs if m.offset >= log.position.next_offset]
            log.append([_to_row(m) for m in fresh])
            n += len(fresh)
        self.archived += n
        return n

    async def catch_up(self, quiet_passes: int = 2, deadline_s: float = 60.0) -> int:
        """Archive until the broker has nothing new, then snapshot offsets.

        Quiescence, not ``end_offsets``, decides when we are done: Tansu reports a
        high watermark that lags the log when producers send multi-record batches.
        """
        await self._refresh_assignment()
        assert self._consumer is not None
        consumer = self._consumer
        # The high watermark lags on Tansu but never runs ahead of the log, so it is a
        # floor: quiet passes before reaching it only mean the first fetch is slow.
        floor = await consumer.end_offsets(sorted(self._assigned)) if self._assigned else {}
        loop = asyncio.get_running_loop()
        give_up = loop.time() + deadline_s

        async def behind() -> bool:
            if loop.time() >= give_up:
                log.warning("archive catch-up gave up waiting for the high watermark")
                return False
            for tp, end in floor.items():
                if tp in self._assigned and await consumer.position(tp) < end:
                    return True
            return False

        total = 0
        idle = 0
        while idle < quiet_passes or await behind():
            n = await self._archive_once(self.flush_ms)
            total += n
            idle = idle + 1 if n == 0 else 0
        await self._snapshot_offsets()
        return total

    async def run(self, stop: asyncio.Event) -> None:
        """Archive continuously until ``stop`` is set, then catch up once more."""
        last_meta = last_offsets = 0.0
        while not stop.is_set():
            try:
                await self._archive_once(self.flush_ms)
                now = time.monotonic()
                if now - last_offsets >= self.offsets_every_ms / 1000:
                    await self._snapshot_offsets()
                    last_offsets = now
                if now - last_meta >= 1.0:
                    await self._refresh_assignment()
                    last_meta = now
            except Exception:  # the broker may be restarting: keep trying
                log.exception("archive pass failed; retrying")
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 1.0)


def _to_row(msg: Any) -> dict[str, Any]:
    return {
        "offset": msg.offset,
        "timestamp_ms": msg.timestamp if msg.timestamp is not None else 0,
        "key": msg.key,
        "value": msg.value,
        "headers": [{"key": k, "value": v} for k, v in (msg.headers or ())],
    }
