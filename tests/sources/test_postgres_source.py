"""PostgreSQL schemas into ``tribal.schema.changes``, against a real PostgreSQL 18."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import asyncpg
import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from events.base import Event
from events.schema import IncomingForeignKey, TableDropped, TableObserved
from runtime.databases import drop_database, execute, fresh_database, temporary_database
from sources.base import build_source
from sources.checkpoint import MemoryCheckpoint
from sources.config import ConfigError, SourceConfig, load_config
from sources.pg_trigger import TRIGGERS
from sources.postgres import PostgresSource, from_config
from sources.schema_snapshot import is_sensitive_column
from sources.sink import Emitted, KafkaSink, MemorySink

SHOP = """
CREATE TABLE customers (
    id bigint PRIMARY KEY,
    name text NOT NULL DEFAULT 'anonymous',
    email varchar(200) UNIQUE
);
COMMENT ON TABLE customers IS 'People who buy things';
COMMENT ON COLUMN customers.name IS 'Display name';
CREATE TABLE orders (
    id serial PRIMARY KEY,
    customer_id bigint NOT NULL REFERENCES customers (id),
    total numeric(10, 2)
);
CREATE INDEX orders_by_customer ON orders (customer_id);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
"""


@pytest.fixture
async def database(postgres_dsn: str) -> AsyncIterator[str]:
    """DSN of a fresh, empty database of its own."""
    async with temporary_database(postgres_dsn, "src") as dsn:
        yield dsn


def by_table(sink: MemorySink) -> dict[str, TableObserved]:
    return {e.key: e.event for e in sink.emitted if isinstance(e.event, TableObserved)}


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"condition not met within {timeout}s")


async def wait_for(
    sink: MemorySink, predicate: Callable[[Emitted], bool], timeout: float, since: int = 0
) -> tuple[Emitted, float]:
    """The first emitted event after ``since`` matching ``predicate``, and how long it took."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        for emitted in sink.emitted[since:]:
            if predicate(emitted):
                return emitted, time.perf_counter() - start
        await asyncio.sleep(0.005)
    got = [(e.key, type(e.event).__name__) for e in sink.emitted[since:]]
    raise AssertionError(f"no matching event within {timeout}s; got {got}")


async def test_every_table_and_view_is_observed_with_its_shape(database: str) -> None:
    await execute(database, SHOP)
    sink = MemorySink()
    count = await PostgresSource("shop", database).sync_once(sink, MemoryCheckpoint())
    tables = by_table(sink)
    assert count == 3
    assert set(tables) == {"shop.public.customers", "shop.public.orders", "shop.public.big_orders"}
    assert all(e.topic == "schema.changes" for e in sink.emitted)
    customers = tables["shop.public.customers"]
    assert (customers.object_type, customers.database_type) == ("table", "postgres")
    assert customers.comment == "People who buy things"
    assert customers.primary_key == ("id",)
    name = customers.columns[1]
    assert (name.name, name.type, name.nullable) == ("name", "text", False)
    assert (name.default_value, name.comment) == ("'anonymous'::text", "Display name")
    assert customers.columns[2].type == "character varying(200)"
    assert {(i.name, i.columns, i.unique) for i in customers.indexes} == {
        ("customers_pkey", ("id",), True),
        ("customers_email_key", ("email",), True),
    }
    assert customers.row_count_approx is None  # never analyzed: reltuples is -1
    assert len(customers.metadata_hash) == 64
    view = tables["shop.public.big_orders"]
    assert view.object_type == "view"
    assert [c.name for c in view.columns] == ["id", "customer_id", "total"]
    assert sink.flushes == 1


async def test_foreign_keys_are_reported_in_both_directions(database: str) -> None:
    await execute(database, SHOP)
    sink = MemorySink()
    await PostgresSource("shop", database).sync_once(sink, MemoryCheckpoint())
    tables = by_table(sink)
    [outgoing] = tables["shop.public.orders"].foreign_keys
    assert outgoing.name == "orders_customer_id_fkey"
    assert outgoing.columns == ("customer_id",)
    assert outgoing.references_table == "shop.public.customers"
    assert outgoing.references_columns == ("id",)
    assert tables["shop.public.customers"].referenced_by == (
        IncomingForeignKey(
            name="orders_customer_id_fkey",
            from_table="shop.public.orders",
            from_columns=("customer_id",),
            columns=("id",),
        ),
    )
    assert tables["shop.public.orders"].referenced_by == ()


async def test_an_unchanged_database_emits_nothing_even_after_a_restart(database: str) -> None:
    await execute(database, SHOP)
    checkpoint = MemoryCheckpoint()
    assert await PostgresSource("shop", database).sync_once(MemorySink(), checkpoint) == 3
    assert checkpoint.state.keys() == {
        "shop.public.customers",
        "shop.public.orders",
        "shop.public.big_orders",
    }
    await execute(database, "INSERT INTO customers VALUES (1, 'ann', 'a@x'); ANALYZE customers")
    restarted = PostgresSource("shop", database, install_trigger=True, interval=0.1)
    sink = MemorySink()
    stop = asyncio.Event()
    task = asyncio.create_task(restarted.run(sink, checkpoint, stop))
    await asyncio.sleep(0.6)  # several polls
    stop.set()
    await asyncio.wait_for(task, 5)
    assert sink.emitted == []  # row estimates changed, the schema did not


DDL_CASES: dict[str, tuple[str, str, str, Callable[[Event], bool]]] = {
    "create_table": (
        "",
        "CREATE TABLE invoices (id int PRIMARY KEY, amount numeric)",
        "shop.public.invoices",
        lambda e: isinstance(e, TableObserved) and [c.name for c in e.columns] == ["id", "amount"],
    ),
    "add_column": (
        "CREATE TABLE invoices (id int PRIMARY KEY)",
        "ALTER TABLE invoices ADD COLUMN due date",
        "shop.public.invoices",
        lambda e: isinstance(e, TableObserved) and e.columns[-1].type == "date",
    ),
    "comment_on": (
        "CREATE TABLE invoices (id int PRIMARY KEY)",
        "COMMENT ON TABLE invoices IS 'Bills we sent'",
        "shop.public.invoices",
        lambda e: isinstance(e, TableObserved) and e.comment == "Bills we sent",
    ),
    "drop_table": (
        "CREATE TABLE invoices (id int PRIMARY KEY)",
        "DROP TABLE invoices",
        "shop.public.invoices",
        lambda e: isinstance(e, TableDropped),
    ),
}


@pytest.mark.parametrize("mode", ["trigger", "polling"])
@pytest.mark.parametrize("case", sorted(DDL_CASES))
async def test_ddl_produces_the_right_event_promptly(database: str, mode: str, case: str) -> None:
    setup, ddl, key, matches = DDL_CASES[case]
    if setup:
        await execute(database, setup)
    interval = 60.0 if mode == "trigger" else 0.3
    deadline = 1.0 if mode == "trigger" else interval + 0.2
    source = PostgresSource("shop", database, install_trigger=mode == "trigger", interval=interval)
    sink, stop = MemorySink(), asyncio.Event()
    task = asyncio.create_task(source.run(sink, MemoryCheckpoint(), stop))
    try:
        if setup:  # the first pass observed it, so the source is listening
            await wait_for(sink, lambda e: True, 5.0)
        else:
            await asyncio.sleep(0.3)
        since = len(sink.emitted)
        await execute(database, ddl)
        emitted, _ = await wait_for(sink, lambda e: e.key == key, deadline, since)
        assert matches(emitted.event), emitted.event
        assert source.trigger_installed is (mode == "trigger")
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


async def start_and_stop(source: PostgresSource) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(source.run(MemorySink(), MemoryCheckpoint(), stop))
    await until(lambda: source.trigger_installed)
    stop.set()
    await task


async def test_installing_the_trigger_twice_keeps_one_of_each(database: str) -> None:
    await start_and_stop(PostgresSource("shop", database, install_trigger=True, interval=60))
    await start_and_stop(PostgresSource("shop", database, install_trigger=True, interval=60))
    conn = await asyncpg.connect(database)
    try:
        names = [r["evtname"] for r in await conn.fetch("SELECT evtname FROM pg_event_trigger")]
    finally:
        await conn.close()
    assert sorted(names) == sorted(TRIGGERS)
    sink = MemorySink()
    await PostgresSource("shop", database).sync_once(sink, MemoryCheckpoint())
    assert sink.emitted == []  # Tribal's own objects are not observed


async def test_a_lost_connection_is_retried_and_changes_still_arrive(database: str) -> None:
    source = PostgresSource("shop", database, install_trigger=True, interval=60)
    sink, stop = MemorySink(), asyncio.Event()
    task = asyncio.create_task(source.run(sink, MemoryCheckpoint(), stop))
    try:
        await until(lambda: source.trigger_installed)
        await asyncio.sleep(0.2)
        await execute(
            database,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        await asyncio.sleep(0.1)
        await execute(database, "CREATE TABLE after_outage (id int)")
        await wait_for(sink, lambda e: e.key == "shop.public.after_outage", 5.0)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


@pytest.mark.parametrize(
    "name",
    ["password", "password_hash", "api_key", "apiKey", "user_email", "PhoneNumber", "ssn",
     "card_number", "iban", "salary", "home_address", "date_of_birth", "dob", "first_name",
     "access_token", "client_secret"],
)  # fmt: skip
def test_sensitive_column_names_are_recognised(name: str) -> None:
    assert is_sensitive_column(name)


@pytest.mark.parametrize("name", ["id", "status", "created_at", "total", "product_name", "sku"])
def test_ordinary_column_names_are_not_sensitive(name: str) -> None:
    assert not is_sensitive_column(name)


async def test_samples_are_opt_in_and_never_taken_from_sensitive_columns(database: str) -> None:
    await execute(
        database,
        """
        CREATE TABLE users (id int, status text, email text, password_hash text,
                            phone text, salary int, date_of_birth date, card_number text);
        INSERT INTO users SELECT n, 'status-' || (n % 2), 'u' || n || '@x.io', 'h' || n,
               '555-' || n, 1000 * n, DATE '1990-01-01' + n, '4111-' || n
        FROM generate_series(1, 20) n;
        """,
    )
    plain = MemorySink()
    await PostgresSource("shop", database).sync_once(plain, MemoryCheckpoint())
    assert all(c.sample_values == () for c in by_table(plain)["shop.public.users"].columns)

    sink = MemorySink()
    source = PostgresSource("shop", database, include_samples=True)
    await source.sync_once(sink, MemoryCheckpoint())
    samples = {c.name: c.sample_values for c in by_table(sink)["shop.public.users"].columns}
    assert samples["status"] == ("status-0", "status-1")
    assert len(samples["id"]) == 3
    sensitive = ["email", "password_hash", "phone", "salary", "date_of_birth", "card_number"]
    assert all(samples[name] == () for name in sensitive)
    text = repr(sink.emitted)
    assert not any(secret in text for secret in ("@x.io", "4111-", "555-"))
    # Samples (like row estimates) are volatile: they never make a table "changed".
    assert by_table(sink)["shop.public.users"].metadata_hash == (
        by_table(plain)["shop.public.users"].metadata_hash
    )


async def test_secrets_never_reach_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    dsn = "postgresql://reader:s3cr3t-pw@127.0.0.1:9/warehouse"  # nothing listens on 9
    source = PostgresSource("warehouse", dsn, install_trigger=True, interval=0.1)
    stop = asyncio.Event()
    task = asyncio.create_task(source.run(MemorySink(), MemoryCheckpoint(), stop))
    await asyncio.sleep(1.0)
    assert not task.done()  # connection errors never end the loop
    stop.set()
    await asyncio.wait_for(task, 5)
    assert "retrying" in caplog.text
    assert "reader:***@127.0.0.1" in caplog.text
    assert "s3cr3t" not in caplog.text
    assert "s3cr3t" not in repr(source)


async def test_tribal_yaml_lists_several_databases_each_named_in_its_keys(
    postgres_dsn: str, tmp_path: Path
) -> None:
    dsns = {}
    try:
        for name in ("sales", "hr"):
            people = "CREATE TABLE people (id int PRIMARY KEY)"
            dsns[name] = await fresh_database(postgres_dsn, name, people)
        config = tmp_path / "tribal.yaml"
        entries = [
            f"  - {{kind: postgres, name: {n}, dsn: '${{{n.upper()}_DSN}}', schemas: public}}"
            for n in dsns
        ]
        config.write_text("sources:\n" + "\n".join(entries) + "\n")
        env = {f"{n.upper()}_DSN": dsn for n, dsn in dsns.items()}
        sink = MemorySink()
        for entry in load_config(config, env).sources:
            source = build_source(entry)
            assert isinstance(source, PostgresSource)
            await source.sync_once(sink, MemoryCheckpoint())
        assert sorted(e.key for e in sink.emitted) == ["hr.public.people", "sales.public.people"]
    finally:
        for dsn in dsns.values():
            await drop_database(postgres_dsn, dsn)


def test_a_postgres_source_without_a_dsn_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'dsn' is required"):
        from_config(SourceConfig(kind="postgres", name="warehouse"))


async def test_schema_events_land_on_the_topic_keyed_by_fully_qualified_name(
    broker: Broker, tmp_path: Path, database: str
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    await execute(database, SHOP)
    checkpoint = MemoryCheckpoint()
    source = PostgresSource("shop", database)
    async with KafkaSink(broker.bootstrap, pipeline.serde, pipeline.settings.topic_prefix) as sink:
        assert await source.sync_once(sink, checkpoint) == 3
        await execute(database, "DROP VIEW big_orders")
        assert await source.sync_once(sink, checkpoint) == 1
    decoded: dict[str, list[str]] = {}
    for key, event in await pipeline.keyed("schema.changes"):
        assert isinstance(event, TableObserved | TableDropped)
        assert key == event.fully_qualified_name
        decoded.setdefault(key, []).append(type(event).__name__)
    assert decoded == {
        "shop.public.customers": ["TableObserved"],
        "shop.public.orders": ["TableObserved"],
        "shop.public.big_orders": ["TableObserved", "TableDropped"],
    }
