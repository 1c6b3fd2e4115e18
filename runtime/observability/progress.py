"""How far the agents are behind, and whether they still advance.

Agents commit their consumer group's offsets as they finish records, so the group's
committed offset per source partition, against the partition's end, is the agents'
lag. Any process that reads it twice can tell a stage that works through a backlog
(the committed offset moves) from one that is stuck (it does not, while there is work):
:class:`ProgressTracker` remembers when each partition last moved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic

TP = tuple[str, int]

AGENT_SOURCES = (
    "schema.changes",
    "files.changes",
    "kb.articles",
    "memory.turns",
    "chunks",
    "chunks.bulk",
    "tables.documented",
    "memory.episodes",
)
"""Every topic an agent consumes (short names); a test holds it to ``agents_for``."""

ROLES: dict[str, tuple[str, ...]] = {
    "chunk": ("kb.articles", "files.changes"),
    "embed": ("chunks", "chunks.bulk", "tables.documented"),
    "document": ("schema.changes",),
    "memory": ("memory.turns", "memory.episodes"),
}
"""``tribal worker --role``: the stages one worker can run alone, by the topics their
agents consume; ``all`` runs every one. A test holds them to ``AGENT_SOURCES``."""


def role_group(settings: TribalSettings, role: str) -> str:
    """The consumer group (and Faust app id) of a worker of ``role``: each role its own,
    so stages scale on separate machines; ``all`` keeps the one group."""
    return settings.consumer_group if role == "all" else f"{settings.consumer_group}.{role}"


def _groups_of(settings: TribalSettings, source: str) -> list[str]:
    roles = [r for r, sources in ROLES.items() if source in sources]
    return [settings.consumer_group, *(role_group(settings, r) for r in roles)]


@dataclass(frozen=True)
class PartitionProgress:
    """A partition's committed offset (``None``: never committed) and its end."""

    committed: int | None
    end: int

    @property
    def behind(self) -> int:
        return max(0, self.end - (self.committed or 0))


async def log_ends(
    consumer: AIOKafkaConsumer, tps: list[TopicPartition], wait_s: float = 0.5
) -> dict[TopicPartition, int]:
    """The offset after each partition's last record. Tansu answers a high watermark of
    its last batch's base offset + 1 (100 records produced in one batch: 1), so the last
    batch is read to find where the log really ends; on Apache Kafka this changes nothing.
    ``consumer`` (no group) is left assigned to the partitions it probed."""
    # Assigned first, the partitions' topics are in the client's metadata before the
    # ListOffsets: else aiokafka learns one unknown topic per retry (100 ms each), and
    # eight topics on Apache Kafka took 0.8 s, most of /healthz's time.
    consumer.assign(sorted(set(tps)))
    ends: dict[TopicPartition, int] = dict(await consumer.end_offsets(tps))
    todo = {tp for tp in tps if ends[tp] > 0}
    if not todo:
        return ends
    consumer.assign(sorted(todo))
    for tp in todo:
        consumer.seek(tp, ends[tp] - 1)
    deadline = time.monotonic() + wait_s
    while todo and time.monotonic() < deadline:
        got = await consumer.getmany(*todo, timeout_ms=max(1, int(1000 * wait_s / 4)))
        for tp, records in got.items():
            if records:
                ends[tp] = max(ends[tp], records[-1].offset + 1)
                todo.discard(tp)
    return ends


async def group_progress(
    settings: TribalSettings, sources: list[str]
) -> dict[TP, PartitionProgress]:
    """Committed and end offsets of the agents on each partition of ``sources`` (short
    topic names): the furthest committed offset of the one group of ``--role all`` and
    of the group of the role that consumes the topic, so lag holds for either way of
    running workers."""
    tps = [
        TopicPartition(topic(short, settings), p)
        for short in sources
        for p in range(TOPICS_BY_NAME[short].partition_count(settings))
    ]
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, group_id=None, fetch_max_wait_ms=50
    )
    await admin.start()
    await consumer.start()
    try:
        # Explicit partitions: Tansu answers an OffsetFetch without them with nothing.
        committed: dict[TopicPartition, int] = {}
        groups = {g for short in sources for g in _groups_of(settings, short)}
        for group in sorted(groups):
            mine = [
                tp
                for tp in tps
                if group in _groups_of(settings, _short(tp.topic, sources, settings))
            ]
            found = await admin.list_consumer_group_offsets(group, partitions=mine)
            for tp, meta in found.items():
                if meta is not None and meta.offset >= 0:
                    committed[tp] = max(committed.get(tp, -1), meta.offset)
        ends = await log_ends(consumer, tps)
    finally:
        await consumer.stop()
        await admin.close()
    out: dict[TP, PartitionProgress] = {}
    for tp in tps:
        out[(tp.topic, tp.partition)] = PartitionProgress(committed.get(tp), ends[tp])
    return out


def _short(full: str, sources: list[str], settings: TribalSettings) -> str:
    return next(short for short in sources if topic(short, settings) == full)


@dataclass
class Stalled:
    """A partition with work whose committed offset has not moved for ``seconds``."""

    topic: str
    partition: int
    offset: int | None
    behind: int
    seconds: float


class ProgressTracker:
    """Remembers, per partition, since when its position has stood still with work."""

    def __init__(self) -> None:
        self._seen: dict[TP, tuple[int | None, float]] = {}

    def observe(
        self, progress: dict[TP, PartitionProgress], now: float | None = None
    ) -> list[Stalled]:
        """Every partition with work, longest stalled first."""
        now = time.monotonic() if now is None else now
        out = []
        for key, p in progress.items():
            previous = self._seen.get(key)
            if previous is None or previous[0] != p.committed or p.behind == 0:
                self._seen[key] = (p.committed, now)
                since = now
            else:
                since = previous[1]
            if p.behind > 0:
                out.append(Stalled(key[0], key[1], p.committed, p.behind, now - since))
        return sorted(out, key=lambda s: -s.seconds)
