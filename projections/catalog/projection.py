"""Fold schema snapshots and generated documentation into the catalog tables.

Snapshots and documentation travel on different topics, so either may arrive first:
they live in separate tables (``tables`` and ``table_docs``) joined when read, and a
table is listed once it has been observed. Foreign keys are edges owned by both ends:
the referencing table reports them as ``foreign_keys``, the referenced one as
``referenced_by``; an edge lives while either end still reports it, and goes with
either end's ``TableDropped``.
"""

from __future__ import annotations

import json
from typing import Any

from events.documents import DomainDocumented, TableDocumented
from events.schema import TableDropped, TableObserved
from projections.base import Applied
from projections.pg import PgProjection
from sources.schema_snapshot import split_fqn

DEFAULT_SCHEMA = "tribal_catalog"

TABLES = (
    """CREATE TABLE IF NOT EXISTS {s}.tables (
        tenant text NOT NULL, fqn text NOT NULL,
        database text NOT NULL, schema_name text NOT NULL, table_name text NOT NULL,
        database_type text NOT NULL, object_type text NOT NULL, comment text,
        row_count_approx bigint, metadata_hash text NOT NULL,
        primary_key text[] NOT NULL, columns jsonb NOT NULL, indexes jsonb NOT NULL,
        observed_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, fqn))""",
    """CREATE TABLE IF NOT EXISTS {s}.foreign_keys (
        tenant text NOT NULL, from_fqn text NOT NULL, name text NOT NULL,
        database text NOT NULL, database_type text NOT NULL,
        from_schema text NOT NULL, from_table text NOT NULL, from_columns text[] NOT NULL,
        to_fqn text NOT NULL, to_schema text NOT NULL, to_table text NOT NULL,
        to_columns text[] NOT NULL,
        required boolean NOT NULL DEFAULT false,
        seen_by_child boolean NOT NULL DEFAULT false,
        seen_by_parent boolean NOT NULL DEFAULT false,
        PRIMARY KEY (tenant, from_fqn, name))""",
    "CREATE INDEX IF NOT EXISTS foreign_keys_to ON {s}.foreign_keys (tenant, to_fqn)",
    """CREATE TABLE IF NOT EXISTS {s}.table_docs (
        tenant text NOT NULL, fqn text NOT NULL, domain text NOT NULL,
        description text NOT NULL, column_descriptions jsonb NOT NULL,
        keywords text[] NOT NULL, priority integer NOT NULL, key_columns text[] NOT NULL,
        metadata_hash text NOT NULL, row_count_approx bigint,
        related_tables text[] NOT NULL, generated_by text NOT NULL, model text NOT NULL,
        documented_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, fqn))""",
    "CREATE INDEX IF NOT EXISTS table_docs_domain ON {s}.table_docs (tenant, domain)",
    """CREATE TABLE IF NOT EXISTS {s}.domains (
        tenant text NOT NULL, domain text NOT NULL, database text NOT NULL,
        title text NOT NULL, description text NOT NULL, tables text[] NOT NULL,
        er_diagram text, common_joins text[] NOT NULL,
        generated_by text NOT NULL, model text NOT NULL, documented_at timestamptz NOT NULL,
        PRIMARY KEY (tenant, domain, database))""",
)
"""The catalog's tables, ``{s}`` standing for its schema."""


class CatalogProjection(PgProjection):
    """The schema catalog in its own PostgreSQL schema (``tribal_catalog`` by default)."""

    name: str = "catalog"
    topics: tuple[str, ...] = ("schema.changes", "tables.documented")
    tables = TABLES

    @PgProjection.handles(TableObserved)
    async def on_table_observed(self, conn: Any, e: TableObserved, applied: Applied) -> None:
        fqn = e.fully_qualified_name
        columns = [c.model_dump(mode="json") for c in e.columns]
        indexes = [i.model_dump(mode="json") for i in e.indexes]
        await conn.execute(
            f"INSERT INTO {self._s}.tables VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb, $14) "
            "ON CONFLICT (tenant, fqn) DO UPDATE SET database = EXCLUDED.database, "
            "schema_name = EXCLUDED.schema_name, table_name = EXCLUDED.table_name, "
            "database_type = EXCLUDED.database_type, object_type = EXCLUDED.object_type, "
            "comment = EXCLUDED.comment, row_count_approx = EXCLUDED.row_count_approx, "
            "metadata_hash = EXCLUDED.metadata_hash, primary_key = EXCLUDED.primary_key, "
            "columns = EXCLUDED.columns, indexes = EXCLUDED.indexes, "
            "observed_at = EXCLUDED.observed_at",
            e.tenant, fqn, e.database, e.schema_name, e.table_name, e.database_type,
            e.object_type, e.comment, e.row_count_approx, e.metadata_hash,
            list(e.primary_key), json.dumps(columns), json.dumps(indexes), e.occurred_at,
        )  # fmt: skip
        await self._replace_edges(conn, e)

    async def _replace_edges(self, conn: Any, e: TableObserved) -> None:
        fqn = e.fully_qualified_name
        not_null = {c.name for c in e.columns if not c.nullable}
        # The table's own end of each of its edges is unreported until this snapshot
        # reports it again below; the other end's report stands.
        await conn.execute(
            f"UPDATE {self._s}.foreign_keys SET seen_by_child = seen_by_child AND from_fqn <> $2, "
            "seen_by_parent = seen_by_parent AND to_fqn <> $2 "
            "WHERE tenant = $1 AND (from_fqn = $2 OR to_fqn = $2)",
            e.tenant, fqn,
        )  # fmt: skip
        insert = (
            f"INSERT INTO {self._s}.foreign_keys (tenant, from_fqn, name, database, "
            "database_type, from_schema, from_table, from_columns, to_fqn, to_schema, "
            "to_table, to_columns, required, seen_by_child, seen_by_parent) VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) "
        )
        for fk in e.foreign_keys:
            to_schema, to_table = split_fqn(fk.references_table, e.database)
            required = bool(fk.columns) and all(c in not_null for c in fk.columns)
            # The referencing table knows the columns and their nullability: its report wins.
            await conn.execute(
                insert + "ON CONFLICT (tenant, from_fqn, name) DO UPDATE SET "
                "from_columns = EXCLUDED.from_columns, to_fqn = EXCLUDED.to_fqn, "
                "to_schema = EXCLUDED.to_schema, to_table = EXCLUDED.to_table, "
                "to_columns = EXCLUDED.to_columns, required = EXCLUDED.required, "
                "seen_by_child = true",
                e.tenant, fqn, fk.name, e.database, e.database_type, e.schema_name,
                e.table_name, list(fk.columns), fk.references_table, to_schema, to_table,
                list(fk.references_columns), required, True, False,
            )  # fmt: skip
        for inc in e.referenced_by:
            from_schema, from_table = split_fqn(inc.from_table, e.database)
            await conn.execute(
                insert + "ON CONFLICT (tenant, from_fqn, name) DO UPDATE SET seen_by_parent = true",
                e.tenant, inc.from_table, inc.name, e.database, e.database_type, from_schema,
                from_table, list(inc.from_columns), fqn, e.schema_name, e.table_name,
                list(inc.columns), False, False, True,
            )  # fmt: skip
        await conn.execute(
            f"DELETE FROM {self._s}.foreign_keys WHERE tenant = $1 "
            "AND (from_fqn = $2 OR to_fqn = $2) AND NOT seen_by_child AND NOT seen_by_parent",
            e.tenant, fqn,
        )  # fmt: skip

    @PgProjection.handles(TableDropped)
    async def on_table_dropped(self, conn: Any, e: TableDropped, applied: Applied) -> None:
        fqn = e.fully_qualified_name
        await conn.execute(
            f"DELETE FROM {self._s}.tables WHERE tenant = $1 AND fqn = $2", e.tenant, fqn
        )
        await conn.execute(
            f"DELETE FROM {self._s}.foreign_keys WHERE tenant = $1 "
            "AND (from_fqn = $2 OR to_fqn = $2)",
            e.tenant, fqn,
        )  # fmt: skip
        # Documentation written after the drop belongs to a re-created table: keep it.
        await conn.execute(
            f"DELETE FROM {self._s}.table_docs WHERE tenant = $1 AND fqn = $2 "
            "AND documented_at <= $3",
            e.tenant, fqn, e.occurred_at,
        )  # fmt: skip

    @PgProjection.handles(TableDocumented)
    async def on_table_documented(self, conn: Any, e: TableDocumented, applied: Applied) -> None:
        await conn.execute(
            f"INSERT INTO {self._s}.table_docs AS d VALUES "
            "($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14) "
            "ON CONFLICT (tenant, fqn) DO UPDATE SET domain = EXCLUDED.domain, "
            "description = EXCLUDED.description, "
            "column_descriptions = EXCLUDED.column_descriptions, keywords = EXCLUDED.keywords, "
            "priority = EXCLUDED.priority, key_columns = EXCLUDED.key_columns, "
            "metadata_hash = EXCLUDED.metadata_hash, "
            "row_count_approx = EXCLUDED.row_count_approx, "
            "related_tables = EXCLUDED.related_tables, generated_by = EXCLUDED.generated_by, "
            "model = EXCLUDED.model, documented_at = EXCLUDED.documented_at "
            "WHERE EXCLUDED.documented_at >= d.documented_at",
            e.tenant, e.fully_qualified_name, e.domain, e.description,
            json.dumps(e.column_descriptions), list(e.keywords), e.priority,
            list(e.key_columns), e.metadata_hash, e.row_count_approx,
            list(e.related_tables), e.generated_by, e.model, e.occurred_at,
        )  # fmt: skip

    @PgProjection.handles(DomainDocumented)
    async def on_domain_documented(self, conn: Any, e: DomainDocumented, applied: Applied) -> None:
        if not e.tables:  # a domain with no tables left is retired
            await conn.execute(
                f"DELETE FROM {self._s}.domains WHERE tenant = $1 AND domain = $2 "
                "AND database = $3 AND documented_at <= $4",
                e.tenant, e.domain, e.database, e.occurred_at,
            )  # fmt: skip
            return
        await conn.execute(
            f"INSERT INTO {self._s}.domains AS d VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
            "ON CONFLICT (tenant, domain, database) DO UPDATE SET title = EXCLUDED.title, "
            "description = EXCLUDED.description, tables = EXCLUDED.tables, "
            "er_diagram = EXCLUDED.er_diagram, common_joins = EXCLUDED.common_joins, "
            "generated_by = EXCLUDED.generated_by, model = EXCLUDED.model, "
            "documented_at = EXCLUDED.documented_at "
            "WHERE EXCLUDED.documented_at >= d.documented_at",
            e.tenant, e.domain, e.database, e.title, e.description, list(e.tables),
            e.er_diagram, list(e.common_joins), e.generated_by, e.model, e.occurred_at,
        )  # fmt: skip
