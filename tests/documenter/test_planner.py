"""The planner: domains by FK connectivity and name prefixes, priorities, TableSpecs."""

from __future__ import annotations

from devstack.synthetic import referencing_table
from events.schema import TableObserved
from streams.documenter.planner import plan_database

FKS = {
    "customers": [],
    "addresses": ["customers"],
    "loyalty_cards": ["customers"],
    "orders": ["customers", "addresses"],
    "order_items": ["orders", "products"],
    "payments": ["orders"],
    "shipments": ["orders", "addresses"],
    "products": ["categories", "suppliers"],
    "categories": [],
    "suppliers": [],
    "product_images": ["products"],
    "auth_user": [],
    "auth_group": [],
    "auth_user_groups": ["auth_user", "auth_group"],
    "auth_permission": [],
    "schema_migrations": [],
    "audit_log": ["customers"],
}


def table(name: str, refs: list[str], comment: str | None = None) -> TableObserved:
    metadata_hash = f"h-{name}-{len(refs)}"
    return referencing_table(
        "shop", name, refs, metadata_hash=metadata_hash, row_count_approx=10, comment=comment
    )


def shop() -> list[TableObserved]:
    return [table(n, refs) for n, refs in FKS.items()]


def _domains() -> dict[str, str]:
    plan = plan_database("shop", {t.fully_qualified_name: t for t in shop()})
    return {f.rsplit(".", 1)[-1]: s.domain for f, s in plan.tables.items()}


def test_orders_and_catalog_form_separate_domains() -> None:
    domain = _domains()
    assert domain["orders"] == domain["payments"] == domain["shipments"]
    assert domain["products"] == domain["categories"] == domain["product_images"]
    assert domain["products"] != domain["orders"]
    assert len(set(domain.values()) - {"system"}) >= 3


def test_a_hub_referenced_by_everything_does_not_glue_the_domains() -> None:
    clusters = {
        "billing": ["invoice", "invoice_line", "credit_note", "tax_rate"],
        "fleet": ["vehicle", "trip", "fuel_stop", "driver_shift"],
        "hr": ["employee", "contract", "leave_request", "payslip"],
    }
    fks: dict[str, list[str]] = {"users": []}
    for names in clusters.values():
        head = names[0]
        fks[head] = ["users"]
        for name in names[1:]:
            fks[name] = [head, "users"]
    tables = [table(n, refs) for n, refs in fks.items()]
    plan = plan_database("shop", {t.fully_qualified_name: t for t in tables})
    domain = {f.rsplit(".", 1)[-1]: s.domain for f, s in plan.tables.items()}
    assert len({domain[names[0]] for names in clusters.values()}) == 3
    for names in clusters.values():
        assert {domain[n] for n in names} == {domain[names[0]]}
    assert plan.tables["shop.public.users"].priority == 1


def test_name_prefixes_group_tables_without_foreign_keys() -> None:
    domain = _domains()
    assert domain["auth_permission"] == domain["auth_user"] == domain["auth_user_groups"]
    assert domain["auth_user"] == "auth"


def test_migrations_and_audit_tables_are_system_priority_three() -> None:
    plan = plan_database("shop", {t.fully_qualified_name: t for t in shop()})
    assert plan.domains["system"] == ("shop.public.audit_log", "shop.public.schema_migrations")
    assert {plan.tables[f].priority for f in plan.domains["system"]} == {3}


def test_table_specs_carry_seed_001_fields_and_priorities() -> None:
    tables = shop()
    tables[0] = table("customers", [], comment="Buyers")
    plan = plan_database("shop", {t.fully_qualified_name: t for t in tables})
    customers = plan.tables["shop.public.customers"]
    assert customers.priority == 1
    assert (customers.incoming_fk_count, customers.outgoing_fk_count) == (4, 0)
    assert customers.existing_comment == "Buyers"
    assert customers.column_count == 1
    assert customers.row_count_approx == 10
    items = plan.tables["shop.public.order_items"]
    assert (items.priority, items.outgoing_fk_count, items.metadata_hash) == (
        2,
        2,
        "h-order_items-2",
    )


def test_the_plan_is_deterministic_whatever_the_input_order() -> None:
    forward = plan_database("shop", {t.fully_qualified_name: t for t in shop()})
    backward = plan_database("shop", {t.fully_qualified_name: t for t in reversed(shop())})
    assert forward.domains == backward.domains
