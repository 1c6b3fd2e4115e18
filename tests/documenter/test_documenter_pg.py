"""The demo store schema, introspected from a real PostgreSQL 18, documented end to end."""

from __future__ import annotations

import pytest

from events.documents import DomainDocumented, TableDocumented
from events.schema import TableObserved
from runtime.kafka_log import LogRecord
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.documenter.state import SchemaState, advance
from streams.wiring import Emit
from tests.documenter.conftest import DemoDatabase
from tests.documenter.mermaid_check import parse_er

pytestmark = pytest.mark.postgres


async def _no_log(partition: int, start: int, stop: int) -> list[LogRecord]:
    raise AssertionError("the pure path never reads the log")


def _lane() -> DocumenterLane:
    return DocumenterLane(Documenter(make_provider(env={})), reader=_no_log)


def _split(emits: list[Emit]) -> tuple[list[TableDocumented], list[DomainDocumented]]:
    events = [e.event for e in emits]
    return (
        [e for e in events if isinstance(e, TableDocumented)],
        [e for e in events if isinstance(e, DomainDocumented)],
    )


async def test_every_demo_table_is_documented_into_business_domains(demo_db: DemoDatabase) -> None:
    observed = await demo_db.observe()
    assert len(observed) >= 20
    tables, domains = _split(await _lane().process(observed))
    assert sorted(t.fully_qualified_name for t in tables) == sorted(
        o.fully_qualified_name for o in observed
    )
    business = {d.domain for d in domains} - {"system"}
    assert len(business) >= 3
    by_fqn = {t.fully_qualified_name: t for t in tables}
    assert by_fqn["shop.public.schema_migrations"].priority == 3
    assert by_fqn["shop.public.audit_log"].domain == "system"
    assert by_fqn["shop.public.customers"].priority == 1
    assert by_fqn["shop.public.order_items"].domain == by_fqn["shop.public.orders"].domain
    assert by_fqn["shop.public.products"].domain != by_fqn["shop.public.orders"].domain
    assert by_fqn["shop.public.support_tickets"].domain != by_fqn["shop.public.customers"].domain
    assert {t.generated_by for t in tables} == {"template"}
    assert all(t.prompt_hash and t.model == "local-rules-v1" for t in tables)
    assert all(set(t.column_descriptions) == {c.name for c in o.columns}
               for o in observed for t in [by_fqn[o.fully_qualified_name]])  # fmt: skip
    orders = by_fqn["shop.public.orders"]
    assert orders.key_columns[0] == "id"
    assert "customer_id" in orders.key_columns
    assert "shop.public.customers" in orders.related_tables
    assert orders.content.startswith("# orders")


async def test_existing_comments_are_kept_verbatim_and_marked(demo_db: DemoDatabase) -> None:
    tables, _ = _split(await _lane().process(await demo_db.observe()))
    orders = next(t for t in tables if t.table_name == "orders")
    assert orders.existing_comment == "One checkout by a customer"
    assert orders.column_descriptions["status"] == "pending, paid, shipped, delivered or cancelled"
    assert orders.columns_from_comments == ("status",)
    assert "Database comment (kept verbatim): One checkout by a customer" in orders.content
    assert "_(database comment)_" in orders.content


async def test_er_diagrams_are_valid_mermaid_with_fk_cardinality(demo_db: DemoDatabase) -> None:
    observed = await demo_db.observe()
    _, domains = _split(await _lane().process(observed))
    fks = {(o.table_name, fk.references_table.rsplit(".", 1)[-1]) for o in observed
           for fk in o.foreign_keys}  # fmt: skip
    seen: set[tuple[str, str]] = set()
    for d in domains:
        assert d.er_diagram is not None
        diagram = parse_er(d.er_diagram)
        assert {t.rsplit(".", 1)[-1] for t in d.tables} <= set(diagram.entities)
        for parent, _op, child in diagram.relations:
            assert (child, parent) in fks
            seen.add((child, parent))
        assert d.common_joins or d.domain == "system"
        assert d.content.count("```mermaid") == 1
    assert seen == fks
    ops = {(p, c): op for d in domains for p, op, c in parse_er(d.er_diagram or "").relations}
    assert ops[("customers", "orders")] == "||..o{"  # NOT NULL FK, many orders
    assert ops[("customer_addresses", "orders")] == "|o..o{"  # nullable FK
    assert ops[("orders", "order_items")] == "||--o{"  # FK inside the child's PK
    assert ops[("customers", "customer_accounts")] == "||--o|"  # one-to-one
    assert ops[("categories", "categories")] == "|o..o{"  # self-reference


async def test_renaming_one_column_redocuments_that_table_only(demo_db: DemoDatabase) -> None:
    lane = _lane()
    await lane.process(await demo_db.observe())
    await demo_db.execute("ALTER TABLE payments RENAME COLUMN provider_ref TO gateway_ref")
    again = await demo_db.observe()
    tables, domains = _split(await lane.process(again))
    assert [t.table_name for t in tables] == ["payments"]
    assert "gateway_ref" in tables[0].column_descriptions
    assert domains == []
    tables, domains = _split(await lane.process(again))
    assert (tables, domains) == ([], [])


async def test_a_new_foreign_key_replans_domains_and_redocuments_them(
    demo_db: DemoDatabase,
) -> None:
    lane = _lane()
    await lane.process(await demo_db.observe())
    await demo_db.execute(
        "ALTER TABLE returns ADD COLUMN product_id bigint REFERENCES products (id)"
    )
    tables, domains = _split(await lane.process(await demo_db.observe()))
    assert {"returns", "products"} <= {t.table_name for t in tables}
    assert [d for d in domains if d.tables]


async def test_dropped_tables_leave_their_domain(demo_db: DemoDatabase) -> None:
    from events.schema import TableDropped

    lane = _lane()
    observed = await demo_db.observe()
    await lane.process(observed)
    survey = next(o for o in observed if o.table_name == "support_satisfaction_surveys")
    drop = TableDropped(database="shop", schema_name="public", table_name=survey.table_name)
    _, domains = _split(await lane.process([drop]))
    assert domains
    assert all(survey.fully_qualified_name not in d.tables for d in domains)


def test_the_state_is_a_fold_of_the_log_in_any_chunking() -> None:
    from tests.documenter.test_planner import shop

    snapshots: list[TableObserved] = shop()
    whole, _ = advance(SchemaState("shop"), snapshots)
    piecewise = SchemaState("shop")
    for t in snapshots:
        piecewise, _ = advance(piecewise, [t])
    assert whole.plan == piecewise.plan
    assert whole.tables == piecewise.tables
    _, nothing = advance(whole, snapshots)
    assert not nothing
