"""``search_code``: symbols of indexed repositories, filtered by repo, path, language, kind."""

from __future__ import annotations

from api.auth import data_tenant
from api.schemas.code import CodeHit, SearchCodeInput, SearchCodeOutput
from api.services.budget import clip, fit
from api.services.context import ServiceContext, index_unavailable
from api.services.errors import ServiceError
from projections.index.port import Filters, Hit, Kind
from projections.index.ranking import interpret, ranked

SNIPPET = 400
CANDIDATES = 50
"""Candidates re-ranked by calibrated relevance (:mod:`projections.index.ranking`): meaning
on the vector side (code is embedded with a natural-language view: symbol words,
docstring, signature), keywords on the lexical side, and how much of the symbol's
name the query names."""


def one_per_symbol(scored: list[tuple[Hit, float]]) -> list[tuple[Hit, float]]:
    """The best-scored chunk of each symbol: a long function split into several chunks,
    or ``@overload`` stubs beside their implementation, answer once."""
    seen: set[tuple[str | None, str | None, str | None]] = set()
    out = []
    for hit, score in scored:
        o = hit.object
        key = (o.repo, o.path, o.fully_qualified_name or o.symbol)
        if o.symbol and key in seen:
            continue
        seen.add(key)
        out.append((hit, score))
    return out


async def search_code(ctx: ServiceContext, req: SearchCodeInput, tenant: str) -> SearchCodeOutput:
    """Search indexed source code by meaning and keywords. Returns symbols with fully qualified
    names, file paths and line ranges. Filter by repo, path glob (e.g. 'api/*.py'), language,
    symbol_kind."""
    tenant = data_tenant(tenant)
    if ctx.index is None:
        raise ServiceError(503, *index_unavailable(ctx), True)
    filters = Filters(
        repo=req.repo, path_glob=req.path, language=req.language, symbol_kind=req.symbol_kind
    )
    want = max(req.offset + req.limit + 1, CANDIDATES)
    meaning = interpret(req.query)
    text = meaning.lexical_query(req.query)
    try:
        vector = await ctx.vector(req.query)
        found = await ctx.index.search(text, vector, Kind.CODE_CHUNK, filters, want, tenant)
    except ServiceError:
        raise
    except Exception as exc:
        raise ServiceError(503, "INDEX_UNAVAILABLE", f"search index failed: {exc}", True) from exc
    scored = one_per_symbol(ranked(Kind.CODE_CHUNK, req.query, found, meaning))
    hits = [h for h, _ in scored]
    score = {id(h): s for h, s in scored}
    page = hits[req.offset : req.offset + req.limit]
    out = SearchCodeOutput(
        results=[
            CodeHit(
                symbol=h.object.symbol,
                fully_qualified_name=h.object.fully_qualified_name or h.object.symbol,
                symbol_kind=h.object.symbol_kind,
                repo=h.object.repo,
                path=h.object.path,
                language=h.object.language,
                start_line=h.object.start_line,
                end_line=h.object.end_line,
                relevance_score=round(score[id(h)], 4),
                snippet=clip(h.object.text, SNIPPET),
            )
            for h in page
        ],
        has_more=len(hits) > req.offset + req.limit,
    )
    return fit(out, req.max_tokens, out.results)
