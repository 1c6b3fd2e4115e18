"""The documenter's lane: events of one database, in order, folded into state.

State design. ``tribal.schema.changes`` is keyed by ``db.schema.table``, so the
tables of one database are spread over partitions (and workers). Domains need the
whole database, so a router re-keys every schema event by ``tenant/database`` onto
the lane topic ``{prefix}documenter.by-database`` (kept forever, like its source):
all events of one database land on one partition, totally ordered, owned by one
worker at a time.

The state of a lane partition before offset ``o`` is exactly the fold of its records
``[0, o)`` (:func:`~streams.documenter.state.advance_lane`). The worker keeps that
fold in memory with the next offset it expects. When a batch starts at that offset it
is used as is; when it starts later (the partition came back after a rebalance) the
gap is read and folded; when it starts earlier (a redelivery after a crash or a seek
back) the fold restarts from offset 0. Either way the state is the log's, so it is
right after a restart, with several partitions and with several workers, and
rebuilding it never calls the LLM.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from events.base import Event
from events.schema import TableDropped, TableObserved
from events.serde import EventSerde
from runtime.kafka_log import LogRecord
from streams.documenter.documenter import DOCUMENTED, Documenter
from streams.documenter.state import SchemaEvent, SchemaState, advance_lane, lane_key
from streams.wiring import Emit

log = logging.getLogger(__name__)

LANE_TOPIC = "documenter.by-database"

Reader = Callable[[int, int, int], Awaitable[list[LogRecord]]]
"""(partition, start, stop) → the lane's records in ``[start, stop)``."""


@dataclass
class PartitionState:
    states: dict[str, SchemaState] = field(default_factory=dict)
    next_offset: int = 0


@dataclass(frozen=True)
class Failure:
    """Something could not be documented; the lane record that triggered it."""

    record: LogRecord
    code: str
    message: str


def schema_events(serde: EventSerde, records: Sequence[LogRecord]) -> list[SchemaEvent]:
    """Decodable schema events of ``records``; anything else was dead-lettered upstream."""
    out: list[SchemaEvent] = []
    for r in records:
        try:
            event = serde.decode(r.value or b"")
        except Exception:
            continue
        if isinstance(event, TableObserved | TableDropped):
            out.append(event)
    return out


class DocumenterLane:
    """Folds lane records into per-partition state and documents what changed."""

    def __init__(
        self,
        documenter: Documenter,
        serde: EventSerde | None = None,
        reader: Reader | None = None,
    ) -> None:
        self.documenter = documenter
        self.serde = serde
        self.reader = reader
        """Both are bound when the lane is wired to Faust; :meth:`process` needs neither."""
        self.partitions: dict[int, PartitionState] = {}
        self.rebuilds = 0

    def forget(self, partitions: Sequence[int]) -> None:
        """Drop cached state, e.g. after a failed batch: it is rebuilt from the log."""
        for p in partitions:
            self.partitions.pop(p, None)

    async def _state_at(self, partition: int, offset: int) -> PartitionState:
        current = self.partitions.get(partition)
        if current is None or current.next_offset > offset:
            current, self.rebuilds = PartitionState(), self.rebuilds + 1
        if current.next_offset < offset:
            assert self.reader is not None, "lane not wired"
            assert self.serde is not None, "lane not wired"
            gap = await self.reader(partition, current.next_offset, offset)
            events = schema_events(self.serde, gap)
            states, _ = advance_lane(current.states, events)
            log.info("lane %d: folded %d records up to %d", partition, len(gap), offset)
            current = PartitionState(states, offset)
        return current

    async def handle(self, records: Sequence[LogRecord]) -> tuple[list[Emit], list[Failure]]:
        """Documentation for a batch of lane records (any partitions, each in order)."""
        emits: list[Emit] = []
        failures: list[Failure] = []
        by_partition: dict[int, list[LogRecord]] = {}
        for r in records:
            by_partition.setdefault(r.partition, []).append(r)
        for partition, recs in sorted(by_partition.items()):
            start = await self._state_at(partition, recs[0].offset)
            assert self.serde is not None, "lane not wired"
            decoded = [(r, e) for r in recs for e in schema_events(self.serde, [r])]
            new_emits, new_failures, states = await self._document(start.states, decoded)
            emits += new_emits
            failures += new_failures
            self.partitions[partition] = PartitionState(states, recs[-1].offset + 1)
        return emits, failures

    async def process(self, events: Sequence[Event]) -> list[Emit]:
        """Fold ``events`` into partition 0's in-memory state (no log): tests and benches."""
        none = LogRecord(0, -1, None, None)
        fake = [(none, e) for e in events if isinstance(e, TableObserved | TableDropped)]
        start = self.partitions.get(0, PartitionState())
        emits, failures, states = await self._document(start.states, fake)
        self.partitions[0] = PartitionState(states, start.next_offset)
        if failures:
            raise RuntimeError("; ".join(f.message for f in failures))
        return emits

    async def _document(
        self, states: dict[str, SchemaState], decoded: Sequence[tuple[LogRecord, SchemaEvent]]
    ) -> tuple[list[Emit], list[Failure], dict[str, SchemaState]]:
        events = [e for _, e in decoded]
        new_states, changes = advance_lane(states, events)
        last = {lane_key(e): r for r, e in decoded}
        emits: list[Emit] = []
        failures: list[Failure] = []
        for key, change in changes.items():
            if not change:
                continue
            done = await self.documenter.document(new_states[key], change)
            emits += [Emit(DOCUMENTED, k, e) for k, e in done.events]
            failures += [
                Failure(last[key], "DOCUMENTATION_FAILED", f"{what}: {why}")
                for what, why in done.failures
            ]
        return emits, failures, new_states
