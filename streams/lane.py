"""What every lane shares: per partition, the next offset it expects, and poisoned records.

A lane (:class:`streams.wiring.Lane`) keeps state per partition of the topic it reads,
and that state is a fold of the partition's records. A batch that starts at the offset
the lane expects is folded on top of it. One that starts elsewhere (the first batch after
a start, a rebalance, a redelivery after a crash, a retry after :meth:`PartitionLane.forget`)
has the lane catch up from the log first, so its state is the log's, whichever worker
holds the partition and however often it restarted. A record that failed alone and was
dead-lettered is poisoned: no fold and no catch-up meets it again.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from events.base import Event
from events.serde import EventSerde
from runtime.kafka_log import LogRecord
from streams.wiring import Emit, Lane, Refusal

Outcome = Sequence[Emit | Refusal]


def by_partition(records: Sequence[LogRecord]) -> list[tuple[int, list[LogRecord]]]:
    """``records`` grouped by partition (partitions in order, records as they came)."""
    grouped: dict[int, list[LogRecord]] = {}
    for r in records:
        grouped.setdefault(r.partition, []).append(r)
    return sorted(grouped.items())


class PartitionLane(Lane):
    """A lane that folds each partition on from the offset it expects, else catches up."""

    def __init__(self) -> None:
        self.serde: EventSerde | None = None
        """Bound when the lane is wired (:meth:`bind`)."""
        self.next_offset: dict[int, int] = {}
        self.poisoned: set[tuple[int, int]] = set()
        """(partition, offset) of records that failed alone and were dead-lettered."""
        self.rebuilds = 0

    def forget(self, partitions: Sequence[int]) -> None:
        for p in partitions:
            self.next_offset.pop(p, None)

    def poison(self, record: LogRecord) -> None:
        self.poisoned.add((record.partition, record.offset))

    def healthy(self, records: Sequence[LogRecord]) -> list[LogRecord]:
        """``records`` but the poisoned ones."""
        return [r for r in records if (r.partition, r.offset) not in self.poisoned]

    def decode(self, records: Sequence[LogRecord]) -> list[Event]:
        """The events of ``records``; an undecodable one is skipped (its producer, or the
        router in front of the lane, dead-lettered it: there is nothing to fold)."""
        assert self.serde is not None, "lane not wired"
        out: list[Event] = []
        for r in records:
            try:
                out.append(self.serde.decode(r.value or b""))
            except Exception:
                continue
        return out

    async def handle(self, records: Sequence[LogRecord]) -> Outcome:
        out: list[Emit | Refusal] = []
        for partition, recs in by_partition(records):
            if self.next_offset.get(partition) != recs[0].offset:
                out += await self.catch_up(partition, recs[0].offset)
            out += await self.advance(partition, self.healthy(recs))
            self.next_offset[partition] = recs[-1].offset + 1
        return out

    @abstractmethod
    async def catch_up(self, partition: int, offset: int) -> Outcome:
        """Make ``partition``'s state the fold of its records before ``offset`` (read
        from the log, poisoned ones left out); return the outputs the log lacks.
        ``self.next_offset`` still holds what the lane expected (``None``: nothing)."""

    @abstractmethod
    async def advance(self, partition: int, records: Sequence[LogRecord]) -> Outcome:
        """Fold ``records`` (the next ones of ``partition``, in order) into its state."""
