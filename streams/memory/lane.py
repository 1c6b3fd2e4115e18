"""Per-group state of a memory agent, and how it survives restarts.

``memory.episodes`` is keyed by ``group_id``: each conversation is one ordered lane of
one partition, owned by one worker at a time. An agent keeps, per partition, the next
offset it expects. When a batch starts elsewhere (first batch after a start, a
rebalance, a redelivery after a crash) the groups of that partition are dropped and
rebuilt: the episodes ``[0, offset)`` of the partition are folded again, with every
output already on the agent's output topic (``known``) reused instead of recomputed —
no LLM call for work done before — and outputs missing from it (a crash between
processing and producing) emitted now. Known outputs also cover episodes past the
committed offset that were processed before the crash, so they are neither redone nor
re-emitted: nothing is lost and nothing is duplicated.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence

from aiokafka.partitioner import murmur2

from events.base import Event
from events.memory import EpisodeRecorded, MemoryForgotten
from events.serde import EventSerde
from runtime.kafka_log import LogRecord, read_range
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic
from streams.lane import PartitionLane
from streams.memory.backlog import EPISODES_FIRST, Backlog
from streams.wiring import Emit

log = logging.getLogger(__name__)

EPISODES = "memory.episodes"

Reader = Callable[[str, int, int, int | None], Awaitable[list[LogRecord]]]
"""(short topic, episodes partition, start, stop) → records of the groups on that
episodes partition (for an output topic: all of it, read to its end)."""


def partition_for(key: str, partitions: int) -> int:
    """The partition the Kafka default partitioner gives ``key`` (murmur2)."""
    return int(murmur2(key.encode()) & 0x7FFFFFFF) % partitions


class MemoryLane(PartitionLane):
    """Folds batches of episode records per group, rebuilding a partition when needed."""

    output: str
    """Short name of the topic this agent writes (and rebuilds its knowledge from)."""

    def __init__(self, partitions: int = 1, backlog: Backlog = EPISODES_FIRST) -> None:
        super().__init__()
        self.episode_partitions = partitions
        self.reader: Reader | None = None
        self.backlog = backlog
        """Waited on before each batch: this process's episodes go first."""

    def bind(self, serde: EventSerde, settings: TribalSettings) -> None:
        async def reader(
            short: str, partition: int, start: int, stop: int | None
        ) -> list[LogRecord]:
            count = TOPICS_BY_NAME[short].partition_count(settings)
            if short == EPISODES:
                wanted = {partition: (start, stop)}
            elif count == self.episode_partitions:  # same key, same partition count
                wanted = {partition: (0, None)}
            else:
                wanted = {q: (0, None) for q in range(count)}
            records = await read_range(settings.kafka_bootstrap, topic(short, settings), wanted)
            if short == EPISODES:
                return records
            return [r for r in records if r.key and self.owns(r.key.decode(), partition)]

        self.serde, self.reader = serde, reader

    def owns(self, group_id: str, partition: int) -> bool:
        return partition_for(group_id, self.episode_partitions) == partition

    async def advance(self, partition: int, records: Sequence[LogRecord]) -> list[Emit]:
        waited = await self.backlog.wait()
        if waited >= 1:
            log.info("%s waited %.1f s for the episoder's backlog", type(self).__name__, waited)
        return await self._fold(self.decode(records))

    async def _fold(self, events: Sequence[Event]) -> list[Emit]:
        """Episodes in order; at a ``MemoryForgotten`` the episodes before it are folded,
        then the forgotten groups' state is dropped."""
        emits: list[Emit] = []
        run: list[EpisodeRecorded] = []
        for e in events:
            if isinstance(e, EpisodeRecorded):
                run.append(e)
            elif isinstance(e, MemoryForgotten):
                emits += await self.process(run)
                run = []
                self.forget_memory(e)
        return emits + await self.process(run)

    def forget_memory(self, event: MemoryForgotten) -> None:
        """Drop the state of the forgotten group (or of every group of its tenant)."""
        for group_id in [g for g in self.groups() if _forgotten(event, g)]:
            self.drop_group(group_id)

    async def catch_up(self, partition: int, offset: int) -> list[Emit]:
        """The groups of ``partition`` dropped and the episodes ``[0, offset)`` folded
        again, with every output already on the log reused (and missing ones emitted)."""
        assert self.reader is not None, "lane not wired"
        self.rebuilds += 1
        known = self.decode(await self.reader(self.output, partition, 0, None))
        before = self.decode(self.healthy(await self.reader(EPISODES, partition, 0, offset)))
        self.reset(partition, known)
        emits = await self._fold(before)
        log.info(
            "%s: partition %d rebuilt from %d events and %d known outputs; %d re-emitted",
            type(self).__name__, partition, len(before), len(known), len(emits),
        )  # fmt: skip
        return emits

    async def process_events(self, events: Sequence[Event]) -> list[Emit]:
        """The lane as a batch processor (no log: tests and benchmarks)."""
        return await self._fold(events)

    @abstractmethod
    def groups(self) -> list[str]:
        """The groups this lane holds state for."""

    @abstractmethod
    def drop_group(self, group_id: str) -> None:
        """Forget everything held for ``group_id``."""

    @abstractmethod
    def reset(self, partition: int, known: Sequence[Event]) -> None:
        """Forget the groups of ``partition``; remember ``known`` outputs for reuse."""

    @abstractmethod
    async def process(self, episodes: Sequence[EpisodeRecorded]) -> list[Emit]:
        """Fold ``episodes`` (in order) and return the outputs not already known."""


def _forgotten(event: MemoryForgotten, group_id: str) -> bool:
    if event.scope == "tenant":
        return group_id.partition(":")[0] == event.tenant
    return group_id == event.group_id
