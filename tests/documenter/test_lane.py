"""The documenter's lane through the shared Handler, on an in-memory log: a table the
documenter cannot document is dead-lettered with its reason and its lane record, and a
lane that starts over rebuilds its state from the log, re-documenting only what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from events.base import Event
from events.deadletter import DeadLettered
from events.documents import DomainDocumented, TableDocumented
from events.registry.file import FileSchemaRegistry
from events.schema import TableDropped, TableObserved
from events.serde import EventSerde
from runtime.kafka_log import LogRecord
from runtime.settings import TribalSettings
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.documenter.planner import Incoming as Referrers
from streams.documenter.state import SchemaState
from streams.wiring import Handler, Incoming
from tests.documenter.test_planner import shop, table

LANE = "t.documenter.by-database"


class Refusing(Documenter):
    """Documents every table but one, as a provider failing on it would."""

    def __init__(self, refused: str) -> None:
        super().__init__(make_provider(env={}))
        self.refused = refused

    async def table(
        self, state: SchemaState, table: TableObserved, incoming: Referrers
    ) -> TableDocumented:
        if table.table_name == self.refused:
            raise RuntimeError(f"no documentation for {table.table_name}")
        return await super().table(state, table, incoming)


@pytest.fixture
def serde(tmp_path: Path) -> EventSerde:
    return EventSerde(FileSchemaRegistry(tmp_path / "schemas"))


def _lane(documenter: Documenter, serde: EventSerde, log: list[LogRecord]) -> Handler:
    lane = DocumenterLane(documenter)
    settings = TribalSettings(topic_prefix="t.", unknown_failure_attempts=1, transient_retry_s=0)
    handler = Handler("documenter", lane, (TableObserved, TableDropped), serde, settings)

    async def reader(partition: int, start: int, stop: int) -> list[LogRecord]:
        return [r for r in log if r.partition == partition and start <= r.offset < stop]

    lane.reader = reader  # the log above, not a broker's
    return handler


def _append(log: list[LogRecord], serde: EventSerde, tables: list[TableObserved]) -> list[Incoming]:
    """``tables`` appended to the lane's partition 0, as the handler receives them."""
    for t in tables:
        log.append(LogRecord(0, len(log), b"default/shop", serde.encode(t, LANE)))
    return [Incoming(LANE, 0, r.offset, r.key, r.value) for r in log[-len(tables) :]]


async def _run(handler: Handler, batch: list[Incoming]) -> list[Event]:
    return [handler.serde.decode(r.value) for r in await handler.handle_batch(batch)]


async def test_a_table_that_cannot_be_documented_is_dead_lettered_and_the_rest_are_documented(
    serde: EventSerde,
) -> None:
    log: list[LogRecord] = []
    out = await _run(_lane(Refusing("payments"), serde, log), _append(log, serde, shop()))
    [dead] = [e for e in out if isinstance(e, DeadLettered)]
    assert dead.error_code == "DOCUMENTATION_FAILED"
    assert "no documentation for payments" in dead.error_message
    assert dead.error_message.startswith("[documenter]")
    assert dead.origin_topic == LANE
    documented = {e.table_name for e in out if isinstance(e, TableDocumented)}
    assert documented == {t.table_name for t in shop()} - {"payments"}


async def test_a_lane_that_starts_over_rebuilds_its_state_and_documents_only_the_change(
    serde: EventSerde,
) -> None:
    log: list[LogRecord] = []
    first = _lane(Documenter(make_provider(env={})), serde, log)
    await first.handle_batch(_append(log, serde, shop()))

    # Another worker (no state) takes the lane over when one column is renamed.
    renamed = table("payments", ["orders"], comment="gateway payments")
    renamed = renamed.model_copy(update={"metadata_hash": "h-payments-renamed"})
    second = _lane(Documenter(make_provider(env={})), serde, log)
    out = await _run(second, _append(log, serde, [renamed]))
    assert [e.table_name for e in out if isinstance(e, TableDocumented)] == ["payments"]
    assert [e for e in out if isinstance(e, DomainDocumented | DeadLettered)] == []
