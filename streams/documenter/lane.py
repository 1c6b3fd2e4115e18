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

from events.base import Event
from events.schema import TableDropped, TableObserved
from events.serde import EventSerde
from runtime.kafka_log import LogRecord, read_range
from runtime.settings import TribalSettings
from runtime.topics import topic
from streams.documenter.documenter import DOCUMENTED, Documenter
from streams.documenter.state import SchemaEvent, SchemaState, advance_lane, lane_key
from streams.lane import Outcome, PartitionLane
from streams.wiring import Emit, Refusal

log = logging.getLogger(__name__)

LANE_TOPIC = "documenter.by-database"

Reader = Callable[[int, int, int], Awaitable[list[LogRecord]]]
"""(partition, start, stop) → the lane's records in ``[start, stop)``."""


class DocumenterLane(PartitionLane):
    """Folds lane records into per-partition state and documents what changed."""

    def __init__(self, documenter: Documenter, reader: Reader | None = None) -> None:
        super().__init__()
        self.documenter = documenter
        self.reader = reader
        """Bound when the lane is wired; :meth:`process` needs none."""
        self.states: dict[int, dict[str, SchemaState]] = {}

    def bind(self, serde: EventSerde, settings: TribalSettings) -> None:
        lane = topic(LANE_TOPIC, settings)

        async def reader(partition: int, start: int, stop: int) -> list[LogRecord]:
            return await read_range(settings.kafka_bootstrap, lane, {partition: (start, stop)})

        self.serde, self.reader = serde, reader

    def schema_events(self, records: Sequence[LogRecord]) -> list[SchemaEvent]:
        """The schema events of ``records``; anything else was dead-lettered by the router."""
        return [e for e in self.decode(records) if isinstance(e, TableObserved | TableDropped)]

    async def catch_up(self, partition: int, offset: int) -> Outcome:
        # Folding needs no LLM: the gap since the state the lane holds (all of the
        # partition when it holds none, or one past the batch) is read and folded.
        start = self.next_offset.get(partition)
        if start is None or start > offset:
            start, self.states[partition] = 0, {}
            self.rebuilds += 1
        if start < offset:
            assert self.reader is not None, "lane not wired"
            gap = self.healthy(await self.reader(partition, start, offset))
            self.states[partition], _ = advance_lane(
                self.states[partition], self.schema_events(gap)
            )
            log.info("lane %d: folded %d records up to %d", partition, len(gap), offset)
        return []

    async def advance(self, partition: int, records: Sequence[LogRecord]) -> Outcome:
        decoded = [(r, e) for r in records for e in self.schema_events([r])]
        out, self.states[partition] = await self._document(self.states[partition], decoded)
        return out

    async def process(self, events: Sequence[Event]) -> list[Emit]:
        """Fold ``events`` into partition 0's in-memory state (no log): tests and benches."""
        none = LogRecord(0, -1, None, None)
        fake = [(none, e) for e in events if isinstance(e, TableObserved | TableDropped)]
        out, self.states[0] = await self._document(self.states.get(0, {}), fake)
        refused = [o.message for o in out if isinstance(o, Refusal)]
        if refused:
            raise RuntimeError("; ".join(refused))
        return [o for o in out if isinstance(o, Emit)]

    async def _document(
        self, states: dict[str, SchemaState], decoded: Sequence[tuple[LogRecord, SchemaEvent]]
    ) -> tuple[list[Emit | Refusal], dict[str, SchemaState]]:
        new_states, changes = advance_lane(states, [e for _, e in decoded])
        last = {lane_key(e): r for r, e in decoded}
        out: list[Emit | Refusal] = []
        for key, change in changes.items():
            if not change:
                continue
            done = await self.documenter.document(new_states[key], change)
            out += [Emit(DOCUMENTED, k, e) for k, e in done.events]
            out += [
                Refusal(last[key], "DOCUMENTATION_FAILED", f"{what}: {why}")
                for what, why in done.failures
            ]
        return out, new_states
