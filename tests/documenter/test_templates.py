"""What the local templates say a row of a table is, for real table names."""

from __future__ import annotations

import pytest

from events.schema import Column, Partition, TableObserved
from streams.documenter.planner import TableSpec
from streams.documenter.render import TEMPLATE_NOTICE, table_markdown
from streams.documenter.templates import describe_table, entity

# table name → what one row is
ROWS = {
    "order_status_history": "order status history",
    "addresses": "address",
    "shipping_addresses": "shipping address",
    "categories": "category",
    "product_categories": "product category",
    "statuses": "status",
    "order_statuses": "order status",
    "status_codes": "status code",
    "analyses": "analysis",
    "boxes": "box",
    "people": "person",
    "salespeople": "salesperson",
    "children": "child",
    "companies": "company",
    "countries": "country",
    "cust_mstr": "customer master",
    "order_dtls": "order detail",
    "sales_taxes": "sales tax",
    "tax_rates": "tax rate",
    "invoice_items": "invoice item",
    "news_items": "news item",
    "news": "news",
    "series": "series",
    "data_sources": "data source",
    "metadata": "metadata",
    "media_files": "media file",
    "price_history": "price history",
    "business_processes": "business process",
    "batches": "batch",
    "search_indexes": "search index",
    "campuses": "campus",
    "user_aliases": "user alias",
    "query_caches": "query cache",
    "movies": "movie",
    "diagnoses": "diagnosis",
    "warehouses": "warehouse",
    "employees": "employee",
    "api_keys": "api key",
    "OrderItems": "order item",
    "users_2024": "user 2024",
}


def _spec(table: TableObserved) -> TableSpec:
    return TableSpec(
        fully_qualified_name=table.fully_qualified_name, schema_name=table.schema_name,
        table_name=table.table_name, domain="orders", priority=2,
        column_count=len(table.columns), row_count_approx=0, incoming_fk_count=0,
        outgoing_fk_count=0, metadata_hash=table.metadata_hash,
    )  # fmt: skip


@pytest.mark.parametrize(("table", "row"), sorted(ROWS.items()))
def test_one_row_of_a_table_is_named_in_the_singular(table: str, row: str) -> None:
    assert entity(table) == row


def test_the_description_says_what_one_row_is() -> None:
    table = TableObserved(
        database="shop", schema_name="public", table_name="order_status_history",
        database_type="postgres", columns=(Column(name="id", type="bigint", nullable=False),),
        primary_key=("id",), metadata_hash="h",
    )  # fmt: skip
    doc = describe_table(table, _spec(table), [])
    assert doc.description.startswith("Each row is one order status history.")
    assert "statu " not in doc.description
    assert doc.keywords[:3] == ["order", "status", "history"]


def test_a_partitioned_table_is_documented_with_its_partitions() -> None:
    table = TableObserved(
        database="app", schema_name="public", table_name="events", database_type="postgres",
        columns=(Column(name="id", type="integer", nullable=False),
                 Column(name="at", type="date", nullable=False)),
        primary_key=("id", "at"), metadata_hash="h", partition_key="RANGE (at)",
        partitions=(
            Partition(name="app.public.events_2024",
                      bound="FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')"),
            Partition(name="app.public.events_2025",
                      bound="FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')"),
        ),
    )  # fmt: skip
    doc = describe_table(table, _spec(table), [])
    assert "Partitioned by RANGE (at) into events_2024, events_2025." in doc.description
    page = table_markdown(table, "events", 2, doc.description, {}, (), ("id",), "template")
    partitions = page.split("## Partitions\n", 1)[1]
    assert "Partitioned by `RANGE (at)`" in partitions
    assert "- `app.public.events_2024`: FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')" in (
        partitions
    )
    assert page.split("\n")[2] == TEMPLATE_NOTICE
    llm_page = table_markdown(table, "events", 2, "Events.", {}, (), ("id",), "llm")
    assert TEMPLATE_NOTICE not in llm_page
    assert "## Partitions" not in table_markdown(
        table.model_copy(update={"partitions": (), "partition_key": None}),
        "events", 2, "Events.", {}, (), ("id",), "llm",
    )  # fmt: skip
