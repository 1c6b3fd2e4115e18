"""Read the schema catalog: what the API's table, domain and join-path endpoints answer.

Every function takes ``db`` (a :class:`~projections.catalog.port.CatalogReads`, such as
an asyncpg pool or connection), works within one ``tenant`` (``"default"`` unless given)
and reads the projection's ``schema`` (``tribal_catalog`` unless given, e.g. a rebuild's
shadow schema).
"""

from __future__ import annotations

import json
from typing import Any

from projections.catalog.joins import Edge, TableRef, join_steps, shortest_path, sql_snippet
from projections.catalog.models import (
    ColumnDetail,
    DomainInfo,
    DomainOverview,
    ForeignKeyDetail,
    IndexDetail,
    JoinPath,
    RelatedTable,
    TableNotFoundError,
    TableSchema,
    TableSummary,
)
from projections.catalog.port import CatalogReads
from projections.catalog.projection import DEFAULT_SCHEMA
from projections.rows import contains_pattern, from_row, quoted

MAX_HOPS_LIMIT = 6

_SUMMARY = (
    'SELECT t.fqn AS name, t.database, t.schema_name AS schema, t.table_name AS "table", '
    "t.object_type, greatest(0, coalesce(t.row_count_approx, d.row_count_approx, 0)) AS row_count, "
    "coalesce(d.domain, '') AS domain, coalesce(d.description, t.comment, '') AS description "
    "FROM {s}.tables t LEFT JOIN {s}.table_docs d ON d.tenant = t.tenant AND d.fqn = t.fqn "
)
"""A :class:`TableSummary` a row."""


async def get_table(
    db: CatalogReads,
    fqn: str,
    *,
    tenant: str = "default",
    schema: str = DEFAULT_SCHEMA,
    include_samples: bool = False,
    include_relationships: bool = True,
) -> TableSchema | None:
    """The observed table ``fqn`` merged with its documentation, or None if unknown."""
    s = quoted(schema)
    row = await db.fetchrow(
        f"SELECT t.*, d.domain, d.description, d.column_descriptions::text AS column_docs, "
        "d.keywords, d.priority, d.key_columns, d.metadata_hash AS documented_hash, "
        "d.row_count_approx AS documented_rows "
        f"FROM {s}.tables t LEFT JOIN {s}.table_docs d ON d.tenant = t.tenant AND d.fqn = t.fqn "
        "WHERE t.tenant = $1 AND t.fqn = $2",
        tenant, fqn,
    )  # fmt: skip
    if row is None:
        return None
    edges = await db.fetch(
        "SELECT f.*, coalesce(d.description, t.comment, '') AS other_description FROM "
        "(SELECT *, CASE WHEN from_fqn = $2 THEN to_fqn ELSE from_fqn END AS other "
        f"FROM {s}.foreign_keys WHERE tenant = $1 AND (from_fqn = $2 OR to_fqn = $2)) f "
        f"LEFT JOIN {s}.table_docs d ON d.tenant = f.tenant AND d.fqn = f.other "
        f"LEFT JOIN {s}.tables t ON t.tenant = f.tenant AND t.fqn = f.other ORDER BY f.name",
        tenant, fqn,
    )  # fmt: skip
    documented = row["documented_hash"] is not None
    column_docs: dict[str, str] = json.loads(row["column_docs"]) if documented else {}
    outgoing = [e for e in edges if e["from_fqn"] == fqn]
    fk_columns = {c for e in outgoing for c in e["from_columns"]}
    pk = tuple(row["primary_key"])
    columns = tuple(
        ColumnDetail(
            name=c["name"],
            type=c["type"],
            nullable=c["nullable"],
            default_value=c["default_value"],
            description=column_docs.get(c["name"]) or c["comment"] or "",
            is_primary_key=c["name"] in pk,
            is_foreign_key=c["name"] in fk_columns,
            samples=tuple(c["sample_values"]) if include_samples else None,
        )
        for c in json.loads(row["columns"])
    )
    related = [
        RelatedTable(e["to_fqn"], "references", tuple(e["from_columns"]), e["other_description"])
        for e in outgoing
    ] + [
        RelatedTable(
            e["from_fqn"], "referenced_by", tuple(e["from_columns"]), e["other_description"]
        )
        for e in edges
        if e["to_fqn"] == fqn and e["from_fqn"] != fqn
    ]
    return TableSchema(
        name=fqn,
        database=row["database"],
        schema=row["schema_name"],
        table=row["table_name"],
        domain=row["domain"] or "",
        description=row["description"] or row["comment"] or "",
        row_count=max(0, row["row_count_approx"] or row["documented_rows"] or 0),
        columns=columns,
        primary_key=pk,
        foreign_keys=tuple(
            ForeignKeyDetail(
                e["name"], tuple(e["from_columns"]), e["to_fqn"], tuple(e["to_columns"])
            )
            for e in outgoing
        ),
        indexes=tuple(
            IndexDetail(i["name"], tuple(i["columns"]), i["unique"])
            for i in json.loads(row["indexes"])
        ),
        related_tables=tuple(related) if include_relationships else None,
        object_type=row["object_type"],
        database_type=row["database_type"],
        comment=row["comment"],
        keywords=tuple(row["keywords"] or ()),
        priority=row["priority"] or 2,
        key_columns=tuple(row["key_columns"] or ()),
        metadata_hash=row["metadata_hash"],
        documented=documented,
        documentation_stale=documented and row["documented_hash"] != row["metadata_hash"],
    )


async def search_tables_by_name(
    db: CatalogReads,
    pattern: str,
    *,
    tenant: str = "default",
    schema: str = DEFAULT_SCHEMA,
    limit: int = 20,
) -> list[TableSummary]:
    """Observed tables whose FQN contains ``pattern`` (case-insensitive, no wildcards).

    Exact table-name matches come first, then shorter names.
    """
    rows = await db.fetch(
        _SUMMARY.format(s=quoted(schema))
        + "WHERE t.tenant = $1 AND t.fqn ILIKE $2 "
        "ORDER BY lower(t.table_name) = lower($3) DESC, length(t.fqn), t.fqn LIMIT $4",
        tenant, contains_pattern(pattern), pattern, limit,
    )  # fmt: skip
    return [from_row(TableSummary, r) for r in rows]


async def _domain_tables(db: CatalogReads, tenant: str, schema: str) -> dict[str, set[str]]:
    """domain -> FQNs: those its overview lists, plus observed tables documented in it."""
    s = quoted(schema)
    rows = await db.fetch(
        f"SELECT domain, unnest(tables) AS fqn FROM {s}.domains WHERE tenant = $1 UNION "
        f"SELECT d.domain, d.fqn FROM {s}.table_docs d JOIN {s}.tables t "
        "ON t.tenant = d.tenant AND t.fqn = d.fqn WHERE d.tenant = $1",
        tenant,
    )
    out: dict[str, set[str]] = {}
    for r in rows:
        out.setdefault(r["domain"], set()).add(r["fqn"])
    return out


async def list_domains(
    db: CatalogReads,
    *,
    tenant: str = "default",
    database: str | None = None,
    schema: str = DEFAULT_SCHEMA,
) -> list[DomainInfo]:
    """Every domain with its description, table count and databases, by name."""
    s = quoted(schema)
    members = await _domain_tables(db, tenant, schema)
    docs = await db.fetch(
        f"SELECT domain, database, description FROM {s}.domains WHERE tenant = $1 "
        "ORDER BY domain, database",
        tenant,
    )
    databases = await db.fetch(
        f"SELECT DISTINCT d.domain, t.database FROM {s}.table_docs d JOIN {s}.tables t "
        "ON t.tenant = d.tenant AND t.fqn = d.fqn WHERE d.tenant = $1",
        tenant,
    )
    described: dict[str, str] = {}
    where: dict[str, set[str]] = {name: set() for name in members}
    for r in [*docs, *databases]:
        where.setdefault(r["domain"], set()).add(r["database"])
    for r in docs:
        described.setdefault(r["domain"], r["description"])
    return [
        DomainInfo(name, described.get(name, ""), len(members.get(name, ())), tuple(sorted(dbs)))
        for name, dbs in sorted(where.items())
        if database is None or database in dbs
    ]


async def get_domain(
    db: CatalogReads,
    name: str,
    *,
    tenant: str = "default",
    database: str | None = None,
    schema: str = DEFAULT_SCHEMA,
) -> DomainOverview | None:
    """A domain's overview and its tables, or None if no table or overview names it."""
    s = quoted(schema)
    docs = await db.fetch(
        f"SELECT * FROM {s}.domains WHERE tenant = $1 AND domain = $2 "
        "AND ($3::text IS NULL OR database = $3) ORDER BY database",
        tenant, name, database,
    )  # fmt: skip
    fqns = sorted((await _domain_tables(db, tenant, schema)).get(name, set()))
    rows = await db.fetch(
        _SUMMARY.format(s=s) + "WHERE t.tenant = $1 AND t.fqn = ANY($2::text[]) "
        "AND ($3::text IS NULL OR t.database = $3) ORDER BY t.fqn",
        tenant, fqns, database,
    )  # fmt: skip
    if not docs and not rows:
        return None
    return DomainOverview(
        domain=name,
        title=next((d["title"] for d in docs if d["title"]), name),
        description="\n\n".join(d["description"] for d in docs if d["description"]),
        databases=tuple(sorted({d["database"] for d in docs} | {r["database"] for r in rows})),
        tables=tuple(from_row(TableSummary, r) for r in rows),
        er_diagram=next((d["er_diagram"] for d in docs if d["er_diagram"]), None),
        common_joins=tuple(j for d in docs for j in d["common_joins"]),
    )


def _edge(row: Any) -> Edge:
    db, kind = row["database"], row["database_type"]
    return Edge(
        name=row["name"],
        child=TableRef(row["from_fqn"], db, row["from_schema"], row["from_table"], kind),
        child_columns=tuple(row["from_columns"]),
        parent=TableRef(row["to_fqn"], db, row["to_schema"], row["to_table"], kind),
        parent_columns=tuple(row["to_columns"]),
        required=row["required"],
    )


async def join_path(
    db: CatalogReads,
    from_fqn: str,
    to_fqn: str,
    max_hops: int = 3,
    *,
    tenant: str = "default",
    schema: str = DEFAULT_SCHEMA,
) -> JoinPath:
    """The shortest foreign-key path between two tables, in either key direction.

    Raises :class:`TableNotFoundError` when either table is unknown and ``ValueError``
    when ``max_hops`` is outside 0..6. The join types follow
    :mod:`projections.catalog.joins`.
    """
    if not 0 <= max_hops <= MAX_HOPS_LIMIT:
        raise ValueError(f"max_hops must be between 0 and {MAX_HOPS_LIMIT}, got {max_hops}")
    s = quoted(schema)
    ends = await db.fetch(
        f"SELECT fqn, database, schema_name, table_name, database_type FROM {s}.tables "
        "WHERE tenant = $1 AND fqn = ANY($2::text[])",
        tenant, [from_fqn, to_fqn],
    )  # fmt: skip
    tables = {
        r["fqn"]: TableRef(
            r["fqn"], r["database"], r["schema_name"], r["table_name"], r["database_type"]
        )
        for r in ends
    }
    for fqn in (from_fqn, to_fqn):
        if fqn not in tables:
            raise TableNotFoundError(fqn)
    edges = [
        _edge(r)
        for r in await db.fetch(f"SELECT * FROM {s}.foreign_keys WHERE tenant = $1", tenant)
    ]
    path = shortest_path(edges, from_fqn, to_fqn, max_hops)
    if path is None:
        return JoinPath(source=from_fqn, target=to_fqn, path_found=False)
    return JoinPath(
        source=from_fqn,
        target=to_fqn,
        path_found=True,
        path=tuple(join_steps(path)),
        sql_snippet=sql_snippet(tables[from_fqn], path),
    )
