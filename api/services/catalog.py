"""Seed 001 §6 over the schema catalog and the search index."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from api.auth import data_tenant
from api.schemas.catalog import (
    ColumnSummary,
    DomainTableSummary,
    GetDomainOverviewInput,
    GetDomainOverviewOutput,
    GetJoinPathInput,
    GetJoinPathOutput,
    GetTableSchemaInput,
    GetTableSchemaOutput,
    JoinStep,
    ListDomainsInput,
    ListDomainsOutput,
    QueryInterpretation,
    SearchTablesInput,
    SearchTablesOutput,
    TableSchema,
    TableSearchResult,
)
from api.services.budget import clip, fit
from api.services.context import ServiceContext, require_db
from api.services.errors import ServiceError
from projections.catalog import queries as q
from projections.catalog.models import TableNotFoundError
from projections.index import ranking
from projections.index.port import Filters, Kind
from projections.index.ranking import Interpretation, singular
from projections.index.ranking import interpret as interpret_query
from streams.vocabulary import words

log = logging.getLogger(__name__)

CANDIDATES = 100
NAME_MATCH_SCORE = 1.0
KEY_COLUMNS = 8


def interpret(req: SearchTablesInput, domain_hint: str | None) -> QueryInterpretation:
    """Seed 001's interpretation; the caller's domain, else ``domain_hint``, else the
    vocabulary's guess."""
    found = interpret_query(req.query, req.domain or domain_hint)
    return QueryInterpretation(
        original_query=req.query,
        concepts=list(found.concepts),
        expanded_terms=list(found.expanded_terms),
        domain_hint=found.domain_hint,
        is_relationship_query=found.is_relationship_query,
    )


async def _ranked(
    ctx: ServiceContext, req: SearchTablesInput, tenant: str, meaning: Interpretation
) -> list[tuple[str, float]]:
    """(fqn, score) best first: a query that *is* a table name, then calibrated hybrid
    relevance."""
    db = require_db(ctx)
    concepts = list(meaning.concepts) or [req.query.lower()]
    scores: dict[str, float] = {}
    named = "_".join(words(req.query))
    if named:
        wanted = {named, singular(named), singular(named) + "s"}
        for t in await q.search_tables_by_name(db, named, tenant=tenant, limit=5):
            if t.table.lower() in wanted and _matches(t, req):
                scores[t.name] = NAME_MATCH_SCORE
    if ctx.index is not None:
        try:
            vector = await ctx.vector(req.query)
            hits = await ctx.index.search(
                meaning.lexical_query(req.query), vector, Kind.TABLE_DOC,
                Filters(database=req.database, domain=req.domain), CANDIDATES, tenant,
            )  # fmt: skip
        except Exception as exc:  # lexical name matches still answer
            log.warning("search_tables: index unavailable: %s", exc)
            hits = []
        for h, score in ranking.ranked(Kind.TABLE_DOC, req.query, hits, meaning):
            fqn = h.object.fully_qualified_name or h.object.document_id.removeprefix("table:")
            scores.setdefault(fqn, round(score, 4))
    if not scores:
        for word in concepts[:5]:
            for t in await q.search_tables_by_name(db, word, tenant=tenant, limit=CANDIDATES):
                if _matches(t, req):
                    scores.setdefault(t.name, 0.5)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    return [(fqn, s) for fqn, s in ranked if s >= req.min_score]


def _matches(t: Any, req: SearchTablesInput) -> bool:
    return (req.database is None or t.database == req.database) and (
        req.domain is None or t.domain == req.domain
    )


async def search_tables(
    ctx: ServiceContext, req: SearchTablesInput, tenant: str
) -> SearchTablesOutput:
    """Find database tables relevant to a natural-language question (e.g. 'customer orders and
    payments'). Returns fully qualified names (database.schema.table), descriptions, key columns
    and a 0-1 relevance_score, best first. Filter by database or domain."""
    tenant = data_tenant(tenant)
    meaning = interpret_query(req.query, req.domain)
    ranked = await _ranked(ctx, req, tenant, meaning)
    page = ranked[req.offset : req.offset + req.limit]
    tables = []
    for fqn, score in page:
        table = await q.get_table(require_db(ctx), fqn, tenant=tenant, include_relationships=False)
        if table is None:  # indexed documentation of a table since dropped
            continue
        keys = [
            c for c in table.columns
            if c.is_primary_key or c.is_foreign_key or c.name in table.key_columns
        ][:KEY_COLUMNS]  # fmt: skip
        tables.append(
            TableSearchResult(  # type: ignore[call-arg]
                name=table.name,
                database=table.database,
                schema=table.schema,
                table=table.table,
                domain=table.domain,
                description=clip(table.description, 500),
                key_columns=[ColumnSummary.model_validate(dataclasses.asdict(c)) for c in keys],
                row_count=table.row_count,
                relevance_score=min(1.0, max(0.0, score)),
            )
        )
    hint = tables[0].domain if tables else None
    out = SearchTablesOutput(
        tables=tables,
        total_matches=len(ranked),
        has_more=req.offset + req.limit < len(ranked),
        query_interpretation=interpret(req, hint or None),
    )
    return fit(out, req.max_tokens, out.tables)


async def get_table_schema(
    ctx: ServiceContext, req: GetTableSchemaInput, tenant: str
) -> GetTableSchemaOutput:
    """Full schema of one table by fully qualified name: columns with types, nullability, defaults
    and descriptions; primary key; foreign keys; indexes; related tables. Use before writing SQL
    against a table."""
    tenant = data_tenant(tenant)
    table = await q.get_table(
        require_db(ctx), req.table, tenant=tenant,
        include_samples=req.include_samples, include_relationships=req.include_relationships,
    )  # fmt: skip
    if table is None:
        raise ServiceError(404, "TABLE_NOT_FOUND", f"table not found: {req.table}")
    schema = TableSchema.model_validate(dataclasses.asdict(table))
    out = GetTableSchemaOutput(schema=schema)
    return fit(out, req.max_tokens, schema.related_tables or [], schema.indexes, schema.columns)


async def get_join_path(
    ctx: ServiceContext, req: GetJoinPathInput, tenant: str
) -> GetJoinPathOutput:
    """How to join two tables: the shortest foreign-key path (up to max_hops, default 3) with each
    join's ON clause and a ready-to-run SELECT in sql_snippet."""
    tenant = data_tenant(tenant)
    try:
        found = await q.join_path(
            require_db(ctx), req.source_table, req.target_table, req.max_hops, tenant=tenant
        )
    except TableNotFoundError as exc:
        raise ServiceError(404, exc.code, str(exc), context={"table": exc.fqn}) from exc
    out = GetJoinPathOutput(
        path_found=found.path_found,
        source=found.source,
        target=found.target,
        hop_count=found.hop_count,
        path=[JoinStep.model_validate(dataclasses.asdict(s)) for s in found.path]
        if found.path_found
        else None,
        sql_snippet=found.sql_snippet,
    )
    return fit(out, req.max_tokens)


async def get_domain_overview(
    ctx: ServiceContext, req: GetDomainOverviewInput, tenant: str
) -> GetDomainOverviewOutput:
    """Overview of one business domain (e.g. 'orders'): what it covers, its tables, a Mermaid ER
    diagram and common joins."""
    tenant = data_tenant(tenant)
    found = await q.get_domain(require_db(ctx), req.domain, tenant=tenant, database=req.database)
    if found is None:
        raise ServiceError(404, "DOMAIN_NOT_FOUND", f"domain not found: {req.domain}")
    tables = found.tables[req.offset : req.offset + req.limit]
    out = GetDomainOverviewOutput(
        domain=found.domain,
        description=found.description,
        databases=list(found.databases),
        tables=[DomainTableSummary.model_validate(dataclasses.asdict(t)) for t in tables],
        er_diagram=found.er_diagram,
        common_joins=list(found.common_joins),
        has_more=req.offset + req.limit < len(found.tables),
    )
    return fit(out, req.max_tokens, out.common_joins or [], out.tables)


async def list_domains(
    ctx: ServiceContext, req: ListDomainsInput, tenant: str
) -> ListDomainsOutput:
    """List the business domains the databases are organised into, with table counts. A good first
    call to orient yourself."""
    tenant = data_tenant(tenant)
    found = await q.list_domains(require_db(ctx), tenant=tenant, database=req.database)
    page = found[req.offset : req.offset + req.limit]
    out = ListDomainsOutput(
        domains=list(page),
        has_more=req.offset + req.limit < len(found),
    )
    return fit(out, req.max_tokens, out.domains)
