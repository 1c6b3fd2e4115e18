"""Seed 001's planner as a pure function: snapshots of one database → domains + TableSpecs.

Tables are grouped into business domains by foreign-key connectivity plus name
prefixes (see :mod:`streams.documenter.graph`); system tables (migrations, audit,
logs) form their own ``system`` domain. A domain's key is deterministic: a name
prefix most of its tables share, else its most central table. The LLM may give it a
display title later, but never a different key, so replays and re-documentation
never move files around.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from events.schema import ForeignKey, TableObserved
from streams.documenter.graph import communities, name_tokens, prefix_edges, undirected

SYSTEM_DOMAIN = "system"
_SYSTEM_NAMES = {
    "alembic_version", "ar_internal_metadata", "schema_version", "flyway_schema_history",
    "spatial_ref_sys", "knex_migrations_lock", "goose_db_version",
}  # fmt: skip
_SYSTEM_WORDS = {"migration", "audit", "changelog"}
_LOG_WORDS = {"log", "logs", "journal"}


@dataclass(frozen=True)
class TableSpec:
    """Seed 001 ``TableSpec``: one table to document."""

    fully_qualified_name: str
    schema_name: str
    table_name: str
    domain: str
    priority: int
    column_count: int
    row_count_approx: int
    incoming_fk_count: int
    outgoing_fk_count: int
    metadata_hash: str
    existing_comment: str | None = None


@dataclass(frozen=True)
class DatabasePlan:
    """Domains of one database: ``domains`` maps a domain key to its sorted FQNs."""

    database: str
    tables: Mapping[str, TableSpec] = field(default_factory=dict)
    domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    centres: Mapping[str, str] = field(default_factory=dict)
    domain_hashes: Mapping[str, str] = field(default_factory=dict)
    """Per domain: hash of its tables, their keys and the foreign keys touching them."""


def is_system_table(name: str) -> bool:
    """Migrations, audit trails and logs: documented, but as priority 3."""
    lower = name.lower()
    words = lower.split("_")
    tokens = set(name_tokens(lower))
    return (
        lower in _SYSTEM_NAMES
        or lower.startswith(("django_", "pg_"))
        or bool(tokens & _SYSTEM_WORDS)
        or words[-1] in _LOG_WORDS
    )


def edges_of(tables: Mapping[str, TableObserved]) -> list[tuple[str, str]]:
    """(from, to) per foreign key between known tables, self-references included."""
    return [
        (fqn, fk.references_table)
        for fqn, t in sorted(tables.items())
        for fk in t.foreign_keys
        if fk.references_table in tables
    ]


Incoming = Mapping[str, list[tuple[TableObserved, ForeignKey]]]


def incoming_index(
    tables: Mapping[str, TableObserved],
) -> dict[str, list[tuple[TableObserved, ForeignKey]]]:
    """FQN → (referencing table, its FK), for every FK between known tables."""
    index: dict[str, list[tuple[TableObserved, ForeignKey]]] = {}
    for fqn in sorted(tables):
        for fk in tables[fqn].foreign_keys:
            if fk.references_table in tables:
                index.setdefault(fk.references_table, []).append((tables[fqn], fk))
    return index


def graph_signature(t: TableObserved) -> tuple[object, ...]:
    """What domains and ER diagrams depend on: name, keys, FKs and key columns' shape."""
    fks = sorted((fk.columns, fk.references_table, fk.references_columns) for fk in t.foreign_keys)
    keys = set(t.primary_key) | {c for fk in t.foreign_keys for c in fk.columns}
    shape = tuple((c.name, c.type, c.nullable) for c in t.columns if c.name in keys)
    unique = tuple(sorted(i.columns for i in t.indexes if i.unique))
    return (t.fully_qualified_name, t.primary_key, tuple(fks), shape, unique)


def stable_hash(parts: Iterable[object]) -> str:
    return hashlib.sha256(repr(list(parts)).encode()).hexdigest()


def plan_database(database: str, tables: Mapping[str, TableObserved]) -> DatabasePlan:
    """Group ``tables`` (FQN → snapshot) into domains and give each a TableSpec."""
    edges = edges_of(tables)
    incoming = Counter(to for frm, to in edges if frm != to)
    system = {f for f, t in tables.items() if is_system_table(t.table_name)}
    business = {f: t.table_name for f, t in tables.items() if f not in system}
    weighted = [(a, b, 1.0) for a, b in edges] + prefix_edges(business)
    graph = undirected(business, weighted)
    groups = communities(graph)
    domains: dict[str, tuple[str, ...]] = {}
    centres: dict[str, str] = {}
    for group in groups:
        centre = max(
            sorted(group),
            key=lambda f: (sum(graph[f].values()), incoming[f], -len(f)),
        )
        key = _unique(_domain_key(group, centre, tables), domains)
        domains[key] = tuple(sorted(group))
        centres[key] = centre
    if system:
        key = _unique(SYSTEM_DOMAIN, domains)
        domains[key] = tuple(sorted(system))
        centres[key] = min(system)
    domain_of = {f: d for d, fs in domains.items() for f in fs}
    specs = {
        f: _spec(t, domain_of[f], f in system, incoming[f], centres[domain_of[f]] == f)
        for f, t in tables.items()
    }
    hashes = {
        d: stable_hash(
            [graph_signature(tables[f]) for f in fs]
            + sorted(e for e in edges if e[0] in fs or e[1] in fs)
        )
        for d, fs in domains.items()
    }
    return DatabasePlan(database, specs, domains, centres, hashes)


def _domain_key(group: frozenset[str], centre: str, tables: Mapping[str, TableObserved]) -> str:
    firsts = Counter(name_tokens(tables[f].table_name)[:1][0] for f in group)
    word, count = firsts.most_common(1)[0] if firsts else ("", 0)
    if len(group) > 1 and count / len(group) >= 0.75:
        return _slug(word)
    return _slug(tables[centre].table_name)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "domain"


def _unique(key: str, taken: Mapping[str, object]) -> str:
    n, candidate = 1, key
    while candidate in taken:
        n += 1
        candidate = f"{key}_{n}"
    return candidate


def _spec(t: TableObserved, domain: str, system: bool, incoming: int, centre: bool) -> TableSpec:
    if system:
        priority = 3
    elif incoming >= 3 or (centre and incoming >= 1):
        priority = 1
    else:
        priority = 2
    return TableSpec(
        fully_qualified_name=t.fully_qualified_name,
        schema_name=t.schema_name,
        table_name=t.table_name,
        domain=domain,
        priority=priority,
        column_count=len(t.columns),
        row_count_approx=max(t.row_count_approx or 0, 0),
        incoming_fk_count=incoming,
        outgoing_fk_count=len(t.foreign_keys),
        metadata_hash=t.metadata_hash,
        existing_comment=t.comment,
    )
