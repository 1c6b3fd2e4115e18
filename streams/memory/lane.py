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

import functools
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence

from aiokafka.partitioner import murmur2

from events.base import Event
from events.memory import EpisodeRecorded, MemoryForgotten
from events.serde import EventSerde
from runtime.kafka_log import LogRecord
from streams.failures import FailureKind, classify, with_retries
from streams.wiring import Emit

log = logging.getLogger(__name__)

Reader = Callable[[str, int, int, int | None], Awaitable[list[LogRecord]]]
"""(short topic, episodes partition, start, stop) → records of the groups on that
episodes partition (for an output topic: all of it, read to its end)."""


def partition_for(key: str, partitions: int) -> int:
    """The partition the Kafka default partitioner gives ``key`` (murmur2)."""
    return int(murmur2(key.encode()) & 0x7FFFFFFF) % partitions


class MemoryLane(ABC):
    """Routes batches of episode records to :meth:`process`, rebuilding when needed."""

    output: str
    """Short name of the topic this agent writes (and rebuilds its knowledge from)."""

    def __init__(self, partitions: int = 1) -> None:
        self.episode_partitions = partitions
        self.serde: EventSerde | None = None
        self.reader: Reader | None = None
        self.next_offset: dict[int, int] = {}
        self.rebuilds = 0
        self.poisoned: set[tuple[int, int]] = set()
        """(partition, offset) of episodes records that failed alone and were
        dead-lettered: never folded again, not even by a rebuild."""

    def forget(self, partitions: Sequence[int]) -> None:
        """Drop what is known of ``partitions``: the next batch rebuilds it."""
        for p in partitions:
            self.next_offset.pop(p, None)

    def _decode(self, records: Sequence[LogRecord]) -> list[Event]:
        assert self.serde is not None, "lane not wired"
        out: list[Event] = []
        for r in records:
            try:
                out.append(self.serde.decode(r.value or b""))
            except Exception:  # dead-lettered by whoever produced it; nothing to fold
                continue
        return out

    def _healthy(self, records: Sequence[LogRecord]) -> list[LogRecord]:
        return [r for r in records if (r.partition, r.offset) not in self.poisoned]

    def owns(self, group_id: str, partition: int) -> bool:
        return partition_for(group_id, self.episode_partitions) == partition

    async def handle(self, records: Sequence[LogRecord]) -> list[Emit]:
        """Outputs for a batch of ``memory.episodes`` records (any partitions)."""
        emits: list[Emit] = []
        by_partition: dict[int, list[LogRecord]] = {}
        for r in records:
            by_partition.setdefault(r.partition, []).append(r)
        for p, recs in sorted(by_partition.items()):
            if self.next_offset.get(p) != recs[0].offset:
                emits += await self._rebuild(p, recs[0].offset)
            emits += await self._fold(self._decode(self._healthy(recs)))
            self.next_offset[p] = recs[-1].offset + 1
        return emits

    async def handle_isolating(
        self,
        records: Sequence[LogRecord],
        *,
        unknown_attempts: int,
        transient_budget_s: float,
    ) -> tuple[list[Emit], list[tuple[LogRecord, Exception]]]:
        """:meth:`handle`, and the records that fail on their own instead of raising.

        A failing batch is halved until the bad record stands alone (each retry rebuilds
        the lane's state from the log); that record is remembered as poisoned, so no
        later fold or rebuild meets it again. Transient failures are retried first and,
        past their budget, cost the whole batch (kept in the dead letters for a re-drive).
        """
        partitions = sorted({r.partition for r in records})
        try:
            emits = await with_retries(
                functools.partial(self.handle, records),
                unknown_attempts=1 if len(records) > 1 else unknown_attempts,
                transient_budget_s=transient_budget_s,
                before_retry=functools.partial(self.forget, partitions),
            )
            return emits, []
        except Exception as exc:  # a bug must not stop the lane; the log keeps all
            self.forget(partitions)
            if len(records) == 1 or classify(exc).kind is FailureKind.TRANSIENT:
                if len(records) == 1:
                    self.poisoned.add((records[0].partition, records[0].offset))
                return [], [(r, exc) for r in records]
        mid = len(records) // 2
        first, first_failed = await self.handle_isolating(
            records[:mid], unknown_attempts=unknown_attempts, transient_budget_s=transient_budget_s
        )
        second, second_failed = await self.handle_isolating(
            records[mid:], unknown_attempts=unknown_attempts, transient_budget_s=transient_budget_s
        )
        return first + second, first_failed + second_failed

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

    async def _rebuild(self, partition: int, offset: int) -> list[Emit]:
        assert self.reader is not None, "lane not wired"
        self.rebuilds += 1
        known = self._decode(await self.reader(self.output, partition, 0, None))
        before = self._decode(
            self._healthy(await self.reader("memory.episodes", partition, 0, offset))
        )
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
