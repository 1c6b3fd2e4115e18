"""Join paths: BFS over foreign keys both ways, and SQL that runs on the real database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from events.schema import TableObserved
from projections.base import Applied
from projections.catalog import CatalogProjection, catalog_projection
from projections.catalog import queries as q
from projections.catalog.joins import Edge, TableRef, join_types, shortest_path
from projections.catalog.models import JoinPath, TableNotFoundError
from projections.runner import ProjectionRunner
from sources.pg_catalog import introspect
from tests.projections.feed import opened
from tests.projections.test_runner import fresh_database

# Odd identifiers on purpose: the snippet must quote them to run.
SHOP = """
CREATE SCHEMA shop;
CREATE SCHEMA "Billing Dept";
CREATE TABLE shop.customers (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE shop.orders (
    id int PRIMARY KEY, customer_id int NOT NULL REFERENCES shop.customers (id));
CREATE TABLE shop.products (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE shop.order_items (
    order_id int NOT NULL REFERENCES shop.orders (id),
    product_id int REFERENCES shop.products (id),
    qty int NOT NULL);
CREATE TABLE "Billing Dept"."Invoice" (
    "Id" int PRIMARY KEY, "order id" int REFERENCES shop.orders (id));
INSERT INTO shop.customers VALUES (1, 'Ada'), (2, 'Bob'), (3, 'Cy (no orders)');
INSERT INTO shop.orders VALUES (10, 1), (11, 1), (12, 2);
INSERT INTO shop.products VALUES (100, 'lamp'), (101, 'desk'), (102, 'never sold');
INSERT INTO shop.order_items VALUES (10, 100, 1), (10, 101, 2), (11, 100, 1), (12, NULL, 5);
INSERT INTO "Billing Dept"."Invoice" VALUES (1, 10), (2, NULL);
"""
CUSTOMERS, ORDERS = "shopdb.shop.customers", "shopdb.shop.orders"
ITEMS, PRODUCTS = "shopdb.shop.order_items", "shopdb.shop.products"
INVOICE = "shopdb.Billing Dept.Invoice"


async def observe_shop(dsn: str) -> list[TableObserved]:
    """Create the shop schema and introspect it into TableObserved events."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(SHOP)
        return await introspect(conn, "shopdb", schemas=["shop", "Billing Dept"])
    finally:
        await conn.close()


@pytest.fixture
async def shop(postgres_dsn: str) -> AsyncIterator[tuple[CatalogProjection, asyncpg.Pool]]:
    dsn = await fresh_database(postgres_dsn)
    async with opened(catalog_projection(dsn)) as projection:
        await observed(projection, await observe_shop(dsn))
        yield projection, projection.pool


async def observed(projection: CatalogProjection, tables: list[TableObserved]) -> None:
    """Apply the snapshots as the runner would from ``tribal.schema.changes``."""
    await projection.apply(
        [Applied("tribal.schema.changes", 0, n, None, t) for n, t in enumerate(tables)]
    )


async def run(pool: asyncpg.Pool, path: JoinPath) -> list[asyncpg.Record]:
    assert path.sql_snippet is not None
    rows: list[asyncpg.Record] = await pool.fetch(path.sql_snippet)
    return rows


async def test_child_to_parent_on_required_keys_joins_inner_and_runs(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    path = await q.join_path(pool, ITEMS, CUSTOMERS)
    assert path.hop_count == 2
    assert [(s.from_table, s.to_table, s.join_type) for s in path.path] == [
        (ITEMS, ORDERS, "INNER"),
        (ORDERS, CUSTOMERS, "INNER"),
    ]
    assert path.path[0].on_clause == '"shop"."order_items"."order_id" = "shop"."orders"."id"'
    assert len(await run(pool, path)) == 4  # every item has an order and a customer


async def test_parent_to_child_joins_left_and_keeps_rows_without_children(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    path = await q.join_path(pool, CUSTOMERS, ITEMS)
    assert path.hop_count == 2
    assert [s.join_type for s in path.path] == ["LEFT", "LEFT"]
    assert [s.direction for s in path.path] == ["parent_to_child", "parent_to_child"]
    rows = await run(pool, path)
    assert len(rows) == 5  # four items, plus Cy who never ordered


async def test_three_hops_mix_both_directions_and_stay_left_after_the_first_left(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    assert not (await q.join_path(pool, PRODUCTS, CUSTOMERS, max_hops=2)).path_found
    path = await q.join_path(pool, PRODUCTS, CUSTOMERS, max_hops=3)
    assert path.hop_count == 3
    assert [(s.to_table, s.direction, s.join_type) for s in path.path] == [
        (ITEMS, "parent_to_child", "LEFT"),
        (ORDERS, "child_to_parent", "LEFT"),  # would be INNER on its own: it follows a LEFT
        (CUSTOMERS, "child_to_parent", "LEFT"),
    ]
    rows = await run(pool, path)
    assert len(rows) == 4  # lamp twice, desk once, 'never sold' kept with NULLs


async def test_quoted_identifiers_and_nullable_keys_join_left(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    path = await q.join_path(pool, INVOICE, CUSTOMERS)
    assert [s.join_type for s in path.path] == ["LEFT", "LEFT"]
    assert path.sql_snippet is not None
    assert path.sql_snippet.startswith('SELECT *\nFROM "Billing Dept"."Invoice"')
    assert '"Billing Dept"."Invoice"."order id"' in path.sql_snippet
    assert len(await run(pool, path)) == 2  # the invoice without an order is kept


async def test_same_table_and_unknown_tables(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    same = await q.join_path(pool, ORDERS, ORDERS)
    assert (same.path_found, same.hop_count, same.path) == (True, 0, ())
    assert len(await run(pool, same)) == 3
    with pytest.raises(TableNotFoundError):
        await q.join_path(pool, ORDERS, "shopdb.shop.nope")
    with pytest.raises(ValueError, match="max_hops"):
        await q.join_path(pool, ORDERS, CUSTOMERS, max_hops=99)


def test_snowflake_keys_are_not_enforced_so_they_never_join_inner() -> None:
    def ref(name: str, kind: str) -> TableRef:
        return TableRef(f"wh.s.{name}", "wh", "s", name, kind)

    for kind, expected in (("postgres", ["INNER"]), ("snowflake", ["LEFT"])):
        edge = Edge("fk", ref("child", kind), ("p_id",), ref("parent", kind), ("id",), True)
        path = shortest_path([edge], "wh.s.child", "wh.s.parent", 3)
        assert path is not None
        assert join_types(path) == expected
        assert path[0].start.sql() == ('"wh"."s"."child"' if kind == "snowflake" else '"s"."child"')


@pytest.mark.slow
async def test_the_runner_builds_the_catalog_from_the_topics(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    dsn = await fresh_database(postgres_dsn)
    observed = await observe_shop(dsn)
    await pipeline.produce("schema.changes", [(e.fully_qualified_name, e) for e in observed])

    projection = catalog_projection(dsn)
    runner = ProjectionRunner(projection, pipeline.settings, pipeline.serde)
    await runner.start()
    try:
        await runner.catch_up()
        path = await q.join_path(projection.pool, PRODUCTS, CUSTOMERS)
        table = await q.get_table(projection.pool, ITEMS)
        assert runner.applied == 5
    finally:
        await runner.stop()
    assert path.hop_count == 3
    assert table is not None
    assert [fk.references_table for fk in table.foreign_keys] == [ORDERS, PRODUCTS]
