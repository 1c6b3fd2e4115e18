"""Snowflake schemas into ``tribal.schema.changes``, against fakesnow's emulation.

fakesnow does not emulate everything (see :mod:`sources.snowflake`): keys
``IN DATABASE``, imported keys and ``LAST_ALTERED`` are missing there, and these
tests pin the fallbacks as much as the happy path.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import fakesnow
import pytest
import snowflake.connector

from events.schema import TableDropped, TableObserved
from sources.base import build_source
from sources.checkpoint import MemoryCheckpoint
from sources.config import ConfigError, SourceConfig
from sources.sink import MemorySink
from sources.snowflake import SnowflakeSource, from_config

pytestmark = pytest.mark.filterwarnings("ignore:Arrow output on a DB-API result:UserWarning")

ARGS = {"account": "acme", "user": "loader", "password": "hunter2-pw", "database": "ANALYTICS"}


@pytest.fixture
def cursor() -> Iterator[Any]:
    """A cursor on a fresh emulated ANALYTICS database with two tables and a view."""
    with fakesnow.patch():
        conn = snowflake.connector.connect(**ARGS, schema="PUBLIC")
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(200) NOT NULL) "
            "COMMENT = 'People who buy'"
        )
        cur.execute(
            "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, total NUMBER(10, 2))"
        )
        cur.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100")
        yield cur
        conn.close()


def source(**extra: Any) -> SnowflakeSource:
    return SnowflakeSource("warehouse", dict(ARGS), **extra)


def observed(sink: MemorySink) -> dict[str, TableObserved]:
    return {e.key: e.event for e in sink.emitted if isinstance(e.event, TableObserved)}


async def test_tables_and_columns_are_observed(cursor: Any) -> None:
    sink = MemorySink()
    assert await source().sync_once(sink, MemoryCheckpoint()) == 3
    tables = observed(sink)
    assert set(tables) == {
        "warehouse.PUBLIC.CUSTOMERS",
        "warehouse.PUBLIC.ORDERS",
        "warehouse.PUBLIC.BIG_ORDERS",
    }
    customers = tables["warehouse.PUBLIC.CUSTOMERS"]
    assert (customers.database_type, customers.object_type) == ("snowflake", "table")
    assert customers.comment == "People who buy"
    assert customers.primary_key == ("ID",)  # via SHOW PRIMARY KEYS IN SCHEMA
    assert [(c.name, c.type, c.nullable) for c in customers.columns] == [
        ("ID", "NUMBER(38,0)", False),
        ("EMAIL", "TEXT(200)", False),
    ]
    assert tables["warehouse.PUBLIC.ORDERS"].columns[2].type == "NUMBER(10,2)"
    assert tables["warehouse.PUBLIC.ORDERS"].foreign_keys == ()  # not emulated
    assert tables["warehouse.PUBLIC.BIG_ORDERS"].object_type == "view"
    assert sink.flushes == 1


async def test_a_repoll_without_changes_emits_nothing(cursor: Any) -> None:
    checkpoint = MemoryCheckpoint()
    assert await source().sync_once(MemorySink(), checkpoint) == 3
    sink = MemorySink()
    assert await source().sync_once(sink, checkpoint) == 0  # a restarted source, too
    assert sink.emitted == []
    assert len(checkpoint.state["tables"]) == 3


async def test_altered_tables_are_observed_again_and_dropped_ones_reported(cursor: Any) -> None:
    checkpoint = MemoryCheckpoint()
    await source().sync_once(MemorySink(), checkpoint)
    cursor.execute("ALTER TABLE orders ADD COLUMN note VARCHAR")
    cursor.execute("DROP VIEW big_orders")
    sink = MemorySink()
    assert await source().sync_once(sink, checkpoint) == 2
    [altered, dropped] = [e.event for e in sink.emitted]
    assert isinstance(altered, TableObserved)
    assert [c.name for c in altered.columns][-1] == "NOTE"
    assert isinstance(dropped, TableDropped)
    assert dropped.fully_qualified_name == "warehouse.PUBLIC.BIG_ORDERS"


async def test_the_poll_loop_picks_up_a_new_table(cursor: Any) -> None:
    sink, stop = MemorySink(), asyncio.Event()
    task = asyncio.create_task(source(interval=0.1).run(sink, MemoryCheckpoint(), stop))
    try:
        for _ in range(100):
            if len(sink.emitted) >= 3:
                break
            await asyncio.sleep(0.02)
        cursor.execute("CREATE TABLE refunds (id INT)")
        for _ in range(100):
            if "warehouse.PUBLIC.REFUNDS" in observed(sink):
                break
            await asyncio.sleep(0.02)
        assert "warehouse.PUBLIC.REFUNDS" in observed(sink)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


class _Stamped(SnowflakeSource):
    """As if LAST_ALTERED worked: every table reports ``stamp``."""

    stamp = datetime(2025, 1, 1, tzinfo=UTC)
    snapshots = 0

    def _listing(self) -> dict[tuple[str, str], dict[str, Any]]:
        return {k: {**v, "LAST_ALTERED": self.stamp} for k, v in super()._listing().items()}

    def _snapshot(self, listing: dict[tuple[str, str], dict[str, Any]]) -> list[TableObserved]:
        self.snapshots += 1
        return super()._snapshot(listing)


async def test_when_last_altered_has_not_moved_the_poll_skips_introspection(cursor: Any) -> None:
    stamped, checkpoint = _Stamped("warehouse", dict(ARGS)), MemoryCheckpoint()
    await stamped.sync_once(MemorySink(), checkpoint)
    assert checkpoint.state["last_altered"] == "2025-01-01T00:00:00+00:00"
    await stamped.sync_once(MemorySink(), checkpoint)
    assert stamped.snapshots == 1
    stamped.stamp += timedelta(minutes=1)
    cursor.execute("ALTER TABLE orders ADD COLUMN note VARCHAR")
    sink = MemorySink()
    assert await stamped.sync_once(sink, checkpoint) == 1
    assert stamped.snapshots == 2
    cursor.execute("DROP TABLE orders")  # no newer stamp, but the table list changed
    assert await stamped.sync_once(sink, checkpoint) == 1
    assert isinstance(sink.emitted[-1].event, TableDropped)


async def test_connection_errors_are_retried_and_the_password_is_never_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**kwargs: Any) -> None:
        raise snowflake.connector.errors.OperationalError(f"cannot log in with {kwargs}")

    monkeypatch.setattr(snowflake.connector, "connect", refuse)
    caplog.set_level(logging.DEBUG)
    stop = asyncio.Event()
    task = asyncio.create_task(source(interval=0.05).run(MemorySink(), MemoryCheckpoint(), stop))
    await asyncio.sleep(0.3)
    assert not task.done()
    stop.set()
    await asyncio.wait_for(task, 5)
    assert "retrying" in caplog.text
    assert "hunter2" not in caplog.text


def test_a_snowflake_entry_needs_account_user_and_database() -> None:
    built = build_source(SourceConfig(kind="snowflake", name="wh", **ARGS, interval=60))
    assert isinstance(built, SnowflakeSource)
    assert (built.name, built.interval, built.database) == ("wh", 60.0, "ANALYTICS")
    with pytest.raises(ConfigError, match="'database' is required"):
        from_config(SourceConfig(kind="snowflake", name="wh", account="a", user="u"))
