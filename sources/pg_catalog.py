"""Introspect every table and view of one PostgreSQL database from ``pg_catalog``.

Five catalog queries cover the whole database (relations, partitions, columns, key
constraints, indexes), read in one repeatable-read snapshot, so the cost does not grow
with one round trip per table. Samples, when asked for, cost one query per table.

A partitioned table (``relkind = 'p'``) is observed once, as itself; its partitions
(``relispartition``, found through ``pg_inherits`` at every level) are listed in its
``partitions`` and never observed as tables of their own. A foreign key declared on a
partition, or pointing at one, is reported as the partitioned table's, once per
distinct key, so join paths run through the table people query. Primary keys and
indexes stay the partitioned table's own: one declared on a partition alone holds for
that partition only.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from events.schema import (
    Column,
    ForeignKey,
    IncomingForeignKey,
    Index,
    Partition,
    TableObserved,
)
from sources.schema_snapshot import is_sensitive_column, with_hash

log = logging.getLogger(__name__)

TRIGGER_SCHEMA = "tribal"  # where Tribal's DDL trigger lives; never observed
OBJECT_TYPES = {
    "r": "table",
    "p": "table",
    "v": "view",
    "m": "materialized_view",
    "f": "foreign_table",
}
SAMPLE_COUNT = 3
SAMPLE_SCAN_ROWS = 1000
SAMPLE_MAX_CHARS = 100
_UNSAMPLED_TYPES = ("bytea", "vector", "halfvec", "sparsevec", "tsvector", "oid")

RELATIONS = f"""
SELECT c.oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
       c.reltuples::float8 AS reltuples, obj_description(c.oid, 'pg_class') AS comment,
       CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', '{TRIGGER_SCHEMA}')
  AND n.nspname !~ '^pg_(toast|temp_)'
  AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY n.nspname, c.relname
"""

# Every partition of the database, at every level, with the top partitioned table it
# belongs to (its root) and the partitioned table right above it.
PARTITIONS = """
WITH RECURSIVE tree AS (
    SELECT i.inhrelid AS oid, i.inhparent AS parent, i.inhparent AS root
    FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhparent
    WHERE p.relkind = 'p' AND NOT p.relispartition
    UNION ALL
    SELECT i.inhrelid, i.inhparent, t.root
    FROM pg_inherits i JOIN tree t ON i.inhparent = t.oid
)
SELECT t.oid, t.root, t.parent, n.nspname AS schema, c.relname AS name,
       c.relkind::text AS kind, c.reltuples::float8 AS reltuples,
       pg_get_expr(c.relpartbound, c.oid) AS bound,
       rn.nspname AS root_schema, r.relname AS root_name,
       pn.nspname AS parent_schema, p.relname AS parent_name
FROM tree t
JOIN pg_class c ON c.oid = t.oid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class r ON r.oid = t.root JOIN pg_namespace rn ON rn.oid = r.relnamespace
JOIN pg_class p ON p.oid = t.parent JOIN pg_namespace pn ON pn.oid = p.relnamespace
WHERE c.relispartition AND c.relkind IN ('r', 'p', 'f')
ORDER BY n.nspname, c.relname
"""

COLUMNS = """
SELECT a.attrelid AS oid, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
       NOT a.attnotnull AS nullable, pg_get_expr(d.adbin, d.adrelid) AS default_value,
       col_description(a.attrelid, a.attnum) AS comment
FROM pg_attribute a
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""

# Primary keys of the observed tables (and their partitions) and foreign keys touching
# them in either direction; constraints a partition inherits from its parent, and the
# copies PostgreSQL makes of a key that points at a partitioned table, are skipped.
CONSTRAINTS = """
SELECT con.conname AS name, con.contype::text AS type, con.conrelid AS oid,
       con.confrelid AS ref_oid, sn.nspname AS schema, sc.relname AS table,
       rn.nspname AS ref_schema, rc.relname AS ref_table,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n
             ORDER BY k.i) AS columns,
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n
             ORDER BY k.i) AS ref_columns
FROM pg_constraint con
JOIN pg_class sc ON sc.oid = con.conrelid JOIN pg_namespace sn ON sn.oid = sc.relnamespace
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
WHERE con.contype IN ('p', 'f') AND con.conparentid = 0
  AND (con.conrelid IN (SELECT unnest($1::oid[])) OR con.confrelid IN (SELECT unnest($1::oid[])))
ORDER BY con.conname
"""

INDEXES = """
SELECT i.indrelid AS oid, ic.relname AS name, i.indisunique AS unique,
       ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true)
             FROM generate_series(1, i.indnkeyatts) k ORDER BY k) AS columns
FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE i.indrelid = ANY($1::oid[])
ORDER BY ic.relname
"""


def quote_ident(name: str) -> str:
    """``name`` as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


async def introspect(
    conn: Any,
    database: str,
    *,
    schemas: Sequence[str] | None = None,
    include_samples: bool = False,
    tenant: str = "default",
) -> list[TableObserved]:
    """Every table and view of the connected database as a hashed snapshot.

    ``database`` is the name used in fully qualified names (the source's name), not
    necessarily the server's database name.
    """
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        relations = await conn.fetch(RELATIONS, list(schemas) if schemas else None)
        oids = [r["oid"] for r in relations]
        partitions = await conn.fetch(PARTITIONS)
        observed = set(oids)
        owned = [p["oid"] for p in partitions if p["root"] in observed]
        columns = await conn.fetch(COLUMNS, oids)
        constraints = await conn.fetch(CONSTRAINTS, oids + owned)
        indexes = await conn.fetch(INDEXES, oids)

    def fqn(schema: str, table: str) -> str:
        return f"{database}.{schema}.{table}"

    cols: dict[int, list[Column]] = defaultdict(list)
    for c in columns:
        cols[c["oid"]].append(
            Column(
                name=c["name"],
                type=c["type"],
                nullable=c["nullable"],
                default_value=c["default_value"],
                comment=c["comment"],
            )
        )
    roots = {p["oid"]: _Root(p["root"], p["root_schema"], p["root_name"]) for p in partitions}
    pks, outgoing, incoming = _keys(constraints, roots, fqn)
    idx: dict[int, list[Index]] = defaultdict(list)
    for i in indexes:
        idx[i["oid"]].append(Index(name=i["name"], columns=tuple(i["columns"]), unique=i["unique"]))
    parts: dict[int, list[Partition]] = defaultdict(list)
    leaf_rows: dict[int, float] = {}
    for p in partitions:
        root = p["root"]
        if root not in observed:
            continue
        parent = None if p["parent"] == root else fqn(p["parent_schema"], p["parent_name"])
        parts[root].append(
            Partition(name=fqn(p["schema"], p["name"]), bound=p["bound"], parent=parent)
        )
        if p["kind"] != "p" and p["reltuples"] >= 0:  # only leaves hold rows
            leaf_rows[root] = leaf_rows.get(root, 0.0) + p["reltuples"]

    tables: list[TableObserved] = []
    for r in relations:
        oid, kind = r["oid"], r["kind"]
        # Autovacuum analyzes partitions, never their parent: their sum is the fresher count.
        estimate = leaf_rows.get(oid, r["reltuples"])
        table_columns = tuple(cols[oid])
        if include_samples and kind in ("r", "p", "m"):
            table_columns = await _with_samples(conn, r["schema"], r["name"], table_columns)
        observed_table = TableObserved(
            tenant=tenant,
            database=database,
            schema_name=r["schema"],
            table_name=r["name"],
            database_type="postgres",
            object_type=OBJECT_TYPES.get(kind, "table"),
            columns=table_columns,
            primary_key=pks.get(oid, ()),
            foreign_keys=tuple(outgoing[oid]),
            referenced_by=tuple(sorted(incoming[oid], key=lambda f: (f.from_table, f.name))),
            indexes=tuple(idx[oid]),
            comment=r["comment"],
            row_count_approx=None if kind == "v" or estimate < 0 else int(estimate),
            metadata_hash="",
            partition_key=r["partition_key"],
            partitions=tuple(parts[oid]),
        )
        tables.append(with_hash(observed_table))
    return tables


@dataclass(frozen=True)
class _Root:
    """The partitioned table a partition belongs to, at the top of its tree."""

    oid: int
    schema: str
    name: str


def _keys(
    constraints: Sequence[Any], roots: Mapping[int, _Root], fqn: Callable[[str, str], str]
) -> tuple[
    dict[int, tuple[str, ...]], dict[int, list[ForeignKey]], dict[int, list[IncomingForeignKey]]
]:
    """Primary keys, outgoing and incoming foreign keys by table oid.

    A partition at either end of a foreign key stands for its root partitioned table; the
    same key declared on several partitions is reported once. Keys declared on the
    tables themselves come first, so their names win; a partition's key whose name the
    table already uses is named after the partition too (``events_2024.user_fk``).
    """
    pks: dict[int, tuple[str, ...]] = {}
    outgoing: dict[int, list[ForeignKey]] = defaultdict(list)
    incoming: dict[int, list[IncomingForeignKey]] = defaultdict(list)
    seen: set[tuple[int, tuple[str, ...], int, tuple[str, ...]]] = set()
    names: dict[int, set[str]] = defaultdict(set)

    def order(k: Any) -> tuple[Any, ...]:
        return (k["oid"] in roots, k["ref_oid"] in roots, k["name"], k["schema"], k["table"])

    for k in sorted(constraints, key=order):
        if k["type"] == "p":
            if k["oid"] not in roots:  # a partition's own key is not its parent's
                pks[k["oid"]] = tuple(k["columns"])
            continue
        child = roots.get(k["oid"]) or _Root(k["oid"], k["schema"], k["table"])
        parent = roots.get(k["ref_oid"]) or _Root(k["ref_oid"], k["ref_schema"], k["ref_table"])
        columns, ref_columns = tuple(k["columns"]), tuple(k["ref_columns"])
        if (child.oid, columns, parent.oid, ref_columns) in seen:
            continue
        seen.add((child.oid, columns, parent.oid, ref_columns))
        name = k["name"]
        if name in names[child.oid]:
            name = f"{k['table']}.{name}"
        names[child.oid].add(name)
        outgoing[child.oid].append(
            ForeignKey(
                name=name,
                columns=columns,
                references_table=fqn(parent.schema, parent.name),
                references_columns=ref_columns,
            )
        )
        incoming[parent.oid].append(
            IncomingForeignKey(
                name=name,
                from_table=fqn(child.schema, child.name),
                from_columns=columns,
                columns=ref_columns,
            )
        )
    for keys in outgoing.values():
        keys.sort(key=lambda f: f.name)
    return pks, outgoing, incoming


def _sampleable(column: Column) -> bool:
    return not is_sensitive_column(column.name) and not column.type.startswith(_UNSAMPLED_TYPES)


async def _with_samples(
    conn: Any, schema: str, table: str, columns: tuple[Column, ...]
) -> tuple[Column, ...]:
    """A few distinct non-null values per non-sensitive column, from the first rows."""
    chosen = [c for c in columns if _sampleable(c)]
    if not chosen:
        return columns
    source = f"{quote_ident(schema)}.{quote_ident(table)}"
    parts = [
        f"ARRAY(SELECT DISTINCT left(v::text, {SAMPLE_MAX_CHARS}) FROM "
        f"(SELECT {quote_ident(c.name)} AS v FROM {source} WHERE {quote_ident(c.name)} "
        f"IS NOT NULL LIMIT {SAMPLE_SCAN_ROWS}) s ORDER BY 1 LIMIT {SAMPLE_COUNT})"
        for c in chosen
    ]
    try:
        async with conn.transaction(readonly=True):
            await conn.execute("SET LOCAL statement_timeout = '5s'")
            row = await conn.fetchrow("SELECT " + ", ".join(parts))
    except Exception as exc:  # samples are a nicety: a slow or odd table keeps none
        log.warning("no samples for %s.%s: %s", schema, table, type(exc).__name__)
        return columns
    values = {c.name: tuple(row[n]) for n, c in enumerate(chosen)}
    return tuple(c.model_copy(update={"sample_values": values.get(c.name, ())}) for c in columns)
