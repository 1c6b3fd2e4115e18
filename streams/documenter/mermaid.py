"""Mermaid ``erDiagram`` and common joins of a domain, from foreign keys alone.

Cardinality follows the FK: the referenced side is exactly one (``||``) when every FK
column is NOT NULL, else zero or one (``|o``); the referencing side is zero or one
(``o|``) when the FK columns are unique in it (its primary key or a unique index),
else zero or more (``o{``). The line is identifying (``--``) when the FK columns are
part of the referencing table's primary key, else non-identifying (``..``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from events.schema import ForeignKey, TableObserved
from streams.documenter.planner import Incoming

_WORD = re.compile(r"[^A-Za-z0-9_]+")


def _word(text: str, fallback: str) -> str:
    clean = _WORD.sub("_", text).strip("_") or fallback
    return f"_{clean}" if clean[0].isdigit() else clean


def entity_name(fqn: str) -> str:
    """``shop.public.orders`` → ``orders``; other schemas keep theirs: ``sales_orders``."""
    parts = fqn.split(".")
    schema, table = (parts[-2], parts[-1]) if len(parts) >= 2 else ("", parts[-1])
    return _word(table if schema in ("", "public") else f"{schema}_{table}", "entity")


def _attr_type(sql_type: str) -> str:
    return _word(sql_type.split("(")[0].split("[")[0], "unknown")


def _attributes(table: TableObserved) -> list[str]:
    fk_cols = {c for fk in table.foreign_keys for c in fk.columns}
    lines = []
    for col in table.columns:
        keys = [
            k
            for k, on in (("PK", col.name in table.primary_key), ("FK", col.name in fk_cols))
            if on
        ]
        if keys:
            lines.append(
                f"        {_attr_type(col.type)} {_word(col.name, 'column')} {', '.join(keys)}"
            )
    return lines


def cardinality(child: TableObserved, fk: ForeignKey) -> str:
    """The relationship operator for ``parent <op> child`` of one foreign key."""
    cols = set(fk.columns)
    nullable = {c.name for c in child.columns if c.nullable}
    parent = "||" if not cols & nullable else "|o"
    unique = cols == set(child.primary_key) or any(
        i.unique and set(i.columns) == cols for i in child.indexes
    )
    line = "--" if cols <= set(child.primary_key) else ".."
    return f"{parent}{line}{'o|' if unique else 'o{'}"


def touching(
    members: Sequence[TableObserved], tables: Mapping[str, TableObserved], incoming: Incoming
) -> list[tuple[TableObserved, ForeignKey]]:
    """(child, FK) for every FK between known tables with an end in ``members``."""
    pairs = {
        (child.fully_qualified_name, fk.name): (child, fk)
        for t in members
        for child, fk in [
            *((t, fk) for fk in t.foreign_keys if fk.references_table in tables),
            *incoming.get(t.fully_qualified_name, []),
        ]
    }
    return [pairs[k] for k in sorted(pairs)]


def er_diagram(
    members: Sequence[TableObserved], tables: Mapping[str, TableObserved], incoming: Incoming
) -> str:
    """The domain's diagram: its tables with key attributes, and every FK touching them."""
    out = ["erDiagram"]
    for t in sorted(members, key=lambda t: t.fully_qualified_name):
        attrs = _attributes(t)
        name = entity_name(t.fully_qualified_name)
        out += [f"    {name} {{", *attrs, "    }"] if attrs else [f"    {name}"]
    for child, fk in touching(members, tables, incoming):
        label = _word("_".join(fk.columns), "fk")
        out.append(
            f"    {entity_name(fk.references_table)} {cardinality(child, fk)} "
            f'{entity_name(child.fully_qualified_name)} : "{label}"'
        )
    return "\n".join(out) + "\n"


def common_joins(
    members: Sequence[TableObserved], tables: Mapping[str, TableObserved], incoming: Incoming
) -> list[str]:
    """One SQL join per FK touching the domain: ``a JOIN b ON a.x = b.y``."""
    joins = []
    for child, fk in touching(members, tables, incoming):
        a, b = child.table_name, tables[fk.references_table].table_name
        b_alias = b if a != b else f"parent_{b}"
        on = " AND ".join(
            f"{a}.{x} = {b_alias}.{y}"
            for x, y in zip(fk.columns, fk.references_columns, strict=False)
        )
        target = b if a != b else f"{b} AS {b_alias}"
        joins.append(f"{a} JOIN {target} ON {on}")
    return joins
