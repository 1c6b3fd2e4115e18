"""Introspect every table and view of one PostgreSQL database from ``pg_catalog``.

Four catalog queries cover the whole database (relations, columns, key constraints,
indexes), read in one repeatable-read snapshot, so the cost does not grow with one
round trip per table. Samples, when asked for, cost one query per table.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from events.schema import Column, ForeignKey, IncomingForeignKey, Index, TableObserved
from events.sources.schema_snapshot import is_sensitive_column, with_hash

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
       c.reltuples::float8 AS reltuples, obj_description(c.oid, 'pg_class') AS comment
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', '{TRIGGER_SCHEMA}')
  AND n.nspname !~ '^pg_(toast|temp_)'
  AND ($1::text[] IS NULL OR n.nspname = ANY($1::text[]))
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                  AND d.objid = c.oid AND d.deptype = 'e')
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

# Primary keys of the observed tables and foreign keys touching them in either
# direction; constraints a partition inherits from its parent are skipped.
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
        columns = await conn.fetch(COLUMNS, oids)
        constraints = await conn.fetch(CONSTRAINTS, oids)
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
    pks: dict[int, tuple[str, ...]] = {}
    outgoing: dict[int, list[ForeignKey]] = defaultdict(list)
    incoming: dict[int, list[IncomingForeignKey]] = defaultdict(list)
    for k in constraints:
        if k["type"] == "p":
            pks[k["oid"]] = tuple(k["columns"])
            continue
        outgoing[k["oid"]].append(
            ForeignKey(
                name=k["name"],
                columns=tuple(k["columns"]),
                references_table=fqn(k["ref_schema"], k["ref_table"]),
                references_columns=tuple(k["ref_columns"]),
            )
        )
        incoming[k["ref_oid"]].append(
            IncomingForeignKey(
                name=k["name"],
                from_table=fqn(k["schema"], k["table"]),
                from_columns=tuple(k["columns"]),
                columns=tuple(k["ref_columns"]),
            )
        )
    idx: dict[int, list[Index]] = defaultdict(list)
    for i in indexes:
        idx[i["oid"]].append(Index(name=i["name"], columns=tuple(i["columns"]), unique=i["unique"]))

    tables: list[TableObserved] = []
    for r in relations:
        oid, kind = r["oid"], r["kind"]
        estimate = r["reltuples"]
        table_columns = tuple(cols[oid])
        if include_samples and kind in ("r", "p", "m"):
            table_columns = await _with_samples(conn, r["schema"], r["name"], table_columns)
        observed = TableObserved(
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
        )
        tables.append(with_hash(observed))
    return tables


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
