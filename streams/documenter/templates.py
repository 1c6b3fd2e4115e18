"""Deterministic local answers for the documenter's tasks (the ``local`` provider).

Built from names, types, keys and comments only, so the same snapshot always gives the
same words.
"""

from __future__ import annotations

from typing import Any

from events.schema import Column, TableObserved
from streams.documenter.planner import TableSpec
from streams.documenter.prompts import (
    DOMAIN_TASK,
    TABLE_TASK,
    ColumnNote,
    DomainDoc,
    Neighbour,
    TableDoc,
)
from streams.inflection import singular_phrase
from streams.llm import LocalProvider
from streams.vocabulary import expand_abbreviations, words

_TIME_TYPES = ("timestamp", "date", "time")


def name_words(table_name: str) -> list[str]:
    """The words of a table name, abbreviations spelled out and only the head noun
    singular: ``order_status_history`` → ``order status history``, ``sales_taxes`` →
    ``sales tax``, ``cust_mstr`` → ``customer master``."""
    return expand_abbreviations(singular_phrase(words(table_name)))


def entity(table_name: str) -> str:
    """What one row of ``table_name`` is: ``order_items`` → ``order item``."""
    return " ".join(name_words(table_name)) or table_name


def readable(name: str) -> str:
    """A column name in words, abbreviations spelled out: ``crdt_lmt_amt`` → ``credit
    limit amount``."""
    return " ".join(expand_abbreviations([w for w in name.lower().split("_") if w]))


def _short(fqn: str) -> str:
    return fqn.rsplit(".", 1)[-1]


def key_columns(table: TableObserved) -> list[str]:
    """Primary key, then foreign-key and unique columns, in column order."""
    fk = {c for f in table.foreign_keys for c in f.columns}
    unique = {c for i in table.indexes if i.unique for c in i.columns}
    rest = [
        c.name for c in table.columns if c.name in fk | unique and c.name not in table.primary_key
    ]
    return list(table.primary_key) + rest


def describe_column(table: TableObserved, column: Column) -> str:
    """One sentence from the column's name, type and keys."""
    thing = entity(table.table_name)
    name = column.name.lower()
    words = readable(name)
    refs = [f for f in table.foreign_keys if column.name in f.columns]
    if refs:
        target, cols = _short(refs[0].references_table), ", ".join(refs[0].references_columns)
        text = f"References {target} ({cols})."
    elif column.name in table.primary_key and len(table.primary_key) == 1:
        text = f"Unique identifier of the {thing}."
    elif name.startswith(("is_", "has_")):
        text = f"Whether the {thing} {words}."
    elif name.endswith("_at") or column.type.startswith(_TIME_TYPES):
        verb = words.removesuffix(" at")
        text = f"When the {thing} was {verb}." if name.endswith("_at") else f"{words.capitalize()}."
    elif name.endswith("_cents"):
        text = f"{words.removesuffix(' cents').capitalize()} amount in cents."
    elif name == "status":
        text = f"Lifecycle status of the {thing}."
    elif name.endswith("_id"):
        text = f"Identifier of the related {words.removesuffix(' id')} (no foreign key)."
    else:
        text = f"{words.capitalize()} of the {thing} ({column.type})."
    if column.sample_values:
        text += f" Examples: {', '.join(column.sample_values[:3])}."
    return text


def describe_table(table: TableObserved, spec: TableSpec, near: list[Neighbour]) -> TableDoc:
    thing = entity(table.table_name)
    refs = sorted(
        {_short(f) for f, d, _ in near if d == "references" and f != table.fully_qualified_name}
    )
    by = sorted({_short(f) for f, d, _ in near if d == "referenced_by"})
    fk_cols = {c for f in table.foreign_keys for c in f.columns}
    if len(table.primary_key) > 1 and set(table.primary_key) <= fk_cols and len(refs) >= 2:
        text = f"Links {refs[0]} to {refs[1]}: each row is one pair."
    elif table.object_type != "table":
        text = f"A {table.object_type.replace('_', ' ')} over {thing} data."
    else:
        text = f"Each row is one {thing}."
    text += f" Part of the {spec.domain} domain"
    text += " (system table)." if spec.priority == 3 else "."
    if refs:
        text += f" References {', '.join(refs)}."
    if by:
        text += f" Referenced by {', '.join(by)}."
    if table.primary_key:
        text += f" Keyed by ({', '.join(table.primary_key)})."
    if table.partitions:
        key = f" by {table.partition_key}" if table.partition_key else ""
        names = ", ".join(_short(p.name) for p in table.partitions)
        text += f" Partitioned{key} into {names}."
    own = singular_phrase(words(table.table_name))
    keywords = list(
        dict.fromkeys(
            [
                *own,
                *expand_abbreviations(own),
                spec.domain,
                *(w for r in refs for w in name_words(r)),
            ]
        )
    )
    return TableDoc(
        description=text,
        columns=[
            ColumnNote(name=c.name, description=describe_column(table, c)) for c in table.columns
        ],
        key_columns=key_columns(table),
        keywords=keywords[:12],
    )


def describe_domain(domain: str, members: list[TableObserved], centre: str) -> DomainDoc:
    title = domain.replace("_", " ").title()
    names = ", ".join(t.table_name for t in members)
    return DomainDoc(
        title=title,
        description=(
            f"The {title} domain groups {len(members)} table(s) around {_short(centre)}: {names}."
        ),
    )


def _table_handler(ctx: dict[str, Any]) -> TableDoc:
    return describe_table(ctx["table"], ctx["spec"], ctx["neighbours"])


def _domain_handler(ctx: dict[str, Any]) -> DomainDoc:
    return describe_domain(ctx["domain"], ctx["members"], ctx["centre"])


def register(local: LocalProvider) -> LocalProvider:
    """Register the documenter's tasks on ``local`` (returned for chaining)."""
    local.register(TABLE_TASK, _table_handler)
    local.register(DOMAIN_TASK, _domain_handler)
    return local
