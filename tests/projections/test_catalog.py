"""The schema catalog: snapshots and documentation merge in any order; drops remove."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from events.documents import DomainDocumented, TableDocumented
from events.schema import Column, ForeignKey, IncomingForeignKey, TableDropped, TableObserved
from projections.catalog import CatalogProjection, catalog_projection
from projections.catalog import queries as q
from projections.catalog.models import DomainInfo, TableNotFoundError
from tests.projections.feed import opened
from tests.projections.test_runner import fresh_database
from tests.projections.topic_feed import TopicFeed

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CUSTOMERS = "shop.sales.customers"
ORDERS = "shop.sales.orders"


ID = Column(name="id", type="integer", nullable=False)


def observed(
    table: str,
    *,
    at: int = 0,
    columns: tuple[Column, ...] = (ID,),
    foreign_keys: tuple[ForeignKey, ...] = (),
    referenced_by: tuple[IncomingForeignKey, ...] = (),
    comment: str | None = None,
) -> TableObserved:
    return TableObserved(
        database="shop",
        schema_name="sales",
        table_name=table,
        database_type="postgres",
        columns=columns,
        primary_key=("id",),
        foreign_keys=foreign_keys,
        referenced_by=referenced_by,
        comment=comment,
        row_count_approx=10,
        metadata_hash=f"hash-{table}-{len(columns)}-{len(foreign_keys)}",
        occurred_at=T0 + timedelta(minutes=at),
    )


def orders(at: int = 0) -> TableObserved:
    return observed(
        "orders",
        at=at,
        columns=(
            ID,
            Column(name="customer_id", type="integer", nullable=False, comment="Who ordered"),
        ),
        foreign_keys=(
            ForeignKey(
                name="orders_customer_fk",
                columns=("customer_id",),
                references_table=CUSTOMERS,
                references_columns=("id",),
            ),
        ),
    )


def customers(at: int = 0) -> TableObserved:
    incoming = IncomingForeignKey(
        name="orders_customer_fk", from_table=ORDERS, from_columns=("customer_id",), columns=("id",)
    )
    return observed("customers", at=at, referenced_by=(incoming,), comment="People who buy")


def documented(table: str, hash_: str, *, at: int = 0, domain: str = "sales") -> TableDocumented:
    return TableDocumented(
        fully_qualified_name=f"shop.sales.{table}",
        database="shop",
        schema_name="sales",
        table_name=table,
        domain=domain,
        description=f"All the {table}.",
        column_descriptions={"customer_id": "The customer who placed it"},
        metadata_hash=hash_,
        generated_by="template",
        model="none",
        content=f"# {table}",
        occurred_at=T0 + timedelta(minutes=at),
    )


@pytest.fixture
async def catalog(postgres_dsn: str) -> AsyncIterator[CatalogProjection]:
    async with opened(catalog_projection(await fresh_database(postgres_dsn))) as projection:
        yield projection


async def test_documentation_written_before_the_snapshot_is_merged_when_the_table_appears(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    table = orders()
    await feed(documented("orders", table.metadata_hash))
    assert await q.get_table(catalog.pool, ORDERS) is None  # not observed yet
    await feed(table, customers())

    got = await q.get_table(catalog.pool, ORDERS)
    assert got is not None
    assert (got.description, got.domain, got.row_count) == ("All the orders.", "sales", 10)
    assert got.documented
    assert not got.documentation_stale
    by_name = {c.name: c for c in got.columns}
    assert by_name["customer_id"].description == "The customer who placed it"
    assert by_name["customer_id"].is_foreign_key
    assert by_name["id"].is_primary_key
    assert [fk.references_table for fk in got.foreign_keys] == [CUSTOMERS]


async def test_documentation_written_after_the_snapshot_is_merged(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    await feed(customers())
    before = await q.get_table(catalog.pool, CUSTOMERS)
    assert before is not None
    assert before.description == "People who buy"  # the comment
    assert not before.documented
    await feed(documented("customers", "an-older-snapshot", at=1))

    after = await q.get_table(catalog.pool, CUSTOMERS)
    assert after is not None
    assert after.description == "All the customers."
    assert after.documentation_stale
    assert after.related_tables is not None
    assert [(r.name, r.relationship) for r in after.related_tables] == [(ORDERS, "referenced_by")]


async def test_a_dropped_table_disappears_with_its_foreign_keys(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    await feed(customers(), orders(), documented("orders", orders().metadata_hash))
    assert (await q.join_path(catalog.pool, ORDERS, CUSTOMERS)).path_found

    await feed(TableDropped(database="shop", schema_name="sales", table_name="orders",
                            occurred_at=T0 + timedelta(minutes=5)))  # fmt: skip
    assert await q.get_table(catalog.pool, ORDERS) is None
    assert await q.search_tables_by_name(catalog.pool, "orders") == []
    remaining = await q.get_table(catalog.pool, CUSTOMERS)
    assert remaining is not None
    assert remaining.related_tables == ()
    with pytest.raises(TableNotFoundError):
        await q.join_path(catalog.pool, CUSTOMERS, ORDERS)


async def test_a_foreign_key_stays_while_either_end_still_reports_it(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    await feed(customers(), orders())
    # customers is observed again without referenced_by (e.g. its schema filter changed):
    # the edge stays, because orders still reports it.
    await feed(observed("customers", at=1))
    assert (await q.join_path(catalog.pool, CUSTOMERS, ORDERS)).hop_count == 1
    # orders drops the key: no end reports it any more.
    await feed(observed("orders", at=2))
    assert not (await q.join_path(catalog.pool, CUSTOMERS, ORDERS)).path_found


async def test_domains_list_their_tables_and_a_retired_domain_disappears(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    domain = DomainDocumented(
        domain="sales",
        database="shop",
        description="Selling things.",
        tables=(CUSTOMERS, ORDERS),
        er_diagram="erDiagram\n customers ||--o{ orders : places",
        common_joins=("orders→customers",),
        generated_by="template",
        model="none",
        content="# sales",
        occurred_at=T0,
    )
    await feed(customers(), orders(), documented("orders", "h", domain="sales"), domain)

    assert await q.list_domains(catalog.pool) == [
        DomainInfo("sales", "Selling things.", 2, ("shop",))
    ]
    overview = await q.get_domain(catalog.pool, "sales")
    assert overview is not None
    assert [t.name for t in overview.tables] == [CUSTOMERS, ORDERS]
    assert overview.er_diagram is not None
    assert overview.common_joins == ("orders→customers",)
    assert await q.get_domain(catalog.pool, "nope") is None

    retired = domain.model_copy(update={"tables": (), "occurred_at": T0 + timedelta(hours=1)})
    await feed(documented("orders", "h", domain="billing", at=90), retired)
    assert [d.name for d in await q.list_domains(catalog.pool)] == ["billing"]


async def test_replaying_a_batch_changes_nothing(catalog: CatalogProjection) -> None:
    feed = TopicFeed(catalog)
    batch = feed.batch(customers(), orders(), documented("orders", orders().metadata_hash))
    assert await catalog.apply(batch) == 3
    first = await q.get_table(catalog.pool, ORDERS)
    assert await catalog.apply(batch) == 0
    assert await q.get_table(catalog.pool, ORDERS) == first


async def test_search_by_name_puts_the_exact_table_name_first(
    catalog: CatalogProjection,
) -> None:
    feed = TopicFeed(catalog)
    await feed(observed("orders_archive"), orders(), customers())
    found = await q.search_tables_by_name(catalog.pool, "ORDERS")
    assert [t.name for t in found] == [ORDERS, "shop.sales.orders_archive"]
    assert await q.search_tables_by_name(catalog.pool, "%") == []  # no wildcards
    assert await q.search_tables_by_name(catalog.pool, "orders", tenant="other") == []
