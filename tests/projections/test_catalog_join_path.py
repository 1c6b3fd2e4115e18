"""Join paths: BFS over foreign keys both ways, and SQL that runs on the real database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import pairwise
from pathlib import Path

import asyncpg
import pytest

from devstack import Broker
from events.schema import TableObserved
from projections.base import Applied
from projections.catalog import CatalogProjection, catalog_projection
from projections.catalog import queries as q
from projections.catalog.joins import Edge, TableRef, join_types, shortest_path
from projections.catalog.models import JoinPath, TableNotFoundError
from projections.runner import ProjectionRunner
from sources.pg_catalog import introspect
from tests.pipelines import fresh_pipeline
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


# Which way a step follows its foreign key: up from the child, or down from the parent.
UP, DOWN = "child_to_parent", "parent_to_child"


@pytest.mark.parametrize(
    ("tables", "joins", "rows"),
    [
        pytest.param(
            [ITEMS, ORDERS, CUSTOMERS],
            [(UP, "INNER"), (UP, "INNER")],
            4,  # every item has an order and a customer
            id="child-to-parent-on-required-keys-joins-inner",
        ),
        pytest.param(
            [CUSTOMERS, ORDERS, ITEMS],
            [(DOWN, "LEFT"), (DOWN, "LEFT")],
            5,  # four items, plus Cy who never ordered
            id="parent-to-child-joins-left-and-keeps-rows-without-children",
        ),
        pytest.param(
            [PRODUCTS, ITEMS, ORDERS, CUSTOMERS],
            # ORDERS -> CUSTOMERS would be INNER on its own: it follows a LEFT
            [(DOWN, "LEFT"), (UP, "LEFT"), (UP, "LEFT")],
            4,  # lamp twice, desk once, 'never sold' kept with NULLs
            id="three-hops-mix-both-directions-and-stay-left-after-the-first-left",
        ),
        pytest.param(
            [INVOICE, ORDERS, CUSTOMERS],
            [(UP, "LEFT"), (UP, "LEFT")],
            2,  # the invoice without an order is kept
            id="a-nullable-key-joins-left",
        ),
    ],
)
async def test_the_shortest_path_joins_each_key_its_way_and_its_sql_runs(
    shop: tuple[CatalogProjection, asyncpg.Pool],
    tables: list[str],
    joins: list[tuple[str, str]],
    rows: int,
) -> None:
    _, pool = shop
    path = await q.join_path(pool, tables[0], tables[-1])
    assert path.hop_count == len(joins)
    assert [(s.from_table, s.to_table) for s in path.path] == list(pairwise(tables))
    assert [(s.direction, s.join_type) for s in path.path] == joins
    assert len(await run(pool, path)) == rows


async def test_a_path_longer_than_max_hops_is_not_found(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    assert not (await q.join_path(pool, PRODUCTS, CUSTOMERS, max_hops=2)).path_found
    assert (await q.join_path(pool, PRODUCTS, CUSTOMERS, max_hops=3)).path_found


async def test_the_sql_joins_on_the_key_columns_and_quotes_every_identifier(
    shop: tuple[CatalogProjection, asyncpg.Pool],
) -> None:
    _, pool = shop
    items = await q.join_path(pool, ITEMS, CUSTOMERS)
    assert items.path[0].on_clause == '"shop"."order_items"."order_id" = "shop"."orders"."id"'
    invoice = await q.join_path(pool, INVOICE, CUSTOMERS)
    assert invoice.sql_snippet is not None
    assert invoice.sql_snippet.startswith('SELECT *\nFROM "Billing Dept"."Invoice"')
    assert '"Billing Dept"."Invoice"."order id"' in invoice.sql_snippet


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
    pipeline = await fresh_pipeline(broker, tmp_path)
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
