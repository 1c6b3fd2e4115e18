"""How far each projection is behind the log, computed from what the stores recorded.

Read by ``/healthz``, ``/metrics`` and ``tribal status`` in any process: positions
come from each projection's own store, end offsets from the broker.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from aiokafka import AIOKafkaConsumer, TopicPartition

from projections.base import TopicPartitionKey
from runtime.observability.progress import log_ends
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic


class Positioned(Protocol):
    """What lag is measured from: a projection, or the offsets it stored
    (:mod:`projections.offsets`)."""

    @property
    def name(self) -> str: ...

    @property
    def topics(self) -> tuple[str, ...]: ...

    async def positions(self) -> dict[TopicPartitionKey, int]:
        """The next offset to apply per (full topic name, partition)."""
        ...


@dataclass(frozen=True)
class ProjectionLag:
    name: str
    messages: int
    partitions: int
    measured_at: float


async def projection_lags(
    settings: TribalSettings, projections: Sequence[Positioned]
) -> list[ProjectionLag]:
    """Messages behind per projection (0 = caught up)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, group_id=None, fetch_max_wait_ms=50
    )
    await consumer.start()
    try:
        wanted = {
            projection.name: [
                TopicPartition(topic(short, settings), p)
                for short in projection.topics
                for p in range(TOPICS_BY_NAME[short].partition_count(settings))
            ]
            for projection in projections
        }
        every = sorted({tp for tps in wanted.values() for tp in tps})
        ends = await log_ends(consumer, every)  # one probe for every projection
        out: list[ProjectionLag] = []
        for projection in projections:
            tps = wanted[projection.name]
            positions = await projection.positions()
            behind = sum(
                max(0, ends[tp] - positions.get((tp.topic, tp.partition), 0)) for tp in tps
            )
            out.append(ProjectionLag(projection.name, behind, len(tps), time.time()))
        return out
    finally:
        await consumer.stop()
