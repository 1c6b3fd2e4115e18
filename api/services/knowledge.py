"""Seed 002 ``retrieve_knowledge``: help-desk articles for a support message, in 100 ms.

Never raises: a timeout, an unavailable index or embedder, or any other failure
answers the seed's fallback body (coverage ``none``, gap "Knowledge retrieval
unavailable"). Sources are the best three *articles* (chunks of one article count
once, at their best score) whose ``relevance_score`` (the calibrated relevance of
message and article, :func:`projections.index.ranking.probabilities`) is at least 0.7.

Coverage rules (also in README "Knowledge retrieval"):

* ``high``: at least one source is tagged with both the intent and the customer's
  device (``metadata.device``, else ``metadata.product``; any device when none is
  given): an article written for this problem on this device.
* ``medium``: at least one source, but not ``high``.
* ``low``: no source reaches 0.7, but some article scores >= 0.5 (the knowledge base
  touches the topic without answering it); ``sources_consulted`` stays empty.
* ``none``: nothing scores >= 0.5, or retrieval failed.

Gaps name what is missing: "No {device} specific troubleshooting guide for this
issue" for each device the request names (product and device) that no source is
tagged for, "No article tagged for intent
'{intent}'" when none carries the intent, and "No knowledge base article matches
this question" when there is no source at all.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
import time
from datetime import UTC
from typing import Any

from api.auth import data_tenant
from api.schemas.knowledge import (
    MIN_RELEVANCE,
    TOP_K,
    Coverage,
    FallbackReason,
    RetrieveRequest,
    RetrieveResponse,
    Source,
    fallback,
)
from api.services.answers import MAX_RUNNING, Answers
from api.services.budget import clip
from api.services.context import ServiceContext
from projections.index.port import Filters, Hit, Kind, SearchMode
from projections.index.ranking import ranked
from runtime.observability.metrics import RETRIEVE_FALLBACKS

log = logging.getLogger(__name__)

BUDGET_S = 0.100
NEAR_MISS = 0.5
CANDIDATES = 10


def relevance(hit: Hit) -> float:
    """Raw semantic similarity when the hit has a vector side, else the blended score."""
    return hit.vector_score if hit.vector_score is not None else hit.score


def _tagged(values: tuple[str, ...], wanted: str | None) -> bool:
    return wanted is not None and wanted.lower() in {v.lower() for v in values}


_TAG = re.compile(r"<[^>]*>?")
_SCHEME = re.compile(r"(?i)\b(?:javascript|vbscript|data)\s*:")


def inert(text: str) -> str:
    """Article text made safe to show: tags dropped, script URLs defused, HTML escaped.

    Help-desk articles are user content; an excerpt must never carry live markup into
    an agent's context or a web page that renders it.
    """
    stripped = _SCHEME.sub("", _TAG.sub(" ", html.unescape(text)))
    return html.escape(stripped, quote=False)


def _source(hit: Hit, score: float) -> Source:
    obj = hit.object
    title = obj.title or obj.document_id
    text = obj.text.removeprefix(title).strip() if obj.text.startswith(title) else obj.text
    when = obj.updated_at.astimezone(UTC) if obj.updated_at is not None else None
    return Source(
        title=clip(title, 200),
        url=(obj.url or "")[:500],
        relevance_score=round(min(1.0, score), 4),
        excerpt=clip(inert(text), 150),
        last_updated=when.isoformat().replace("+00:00", "Z") if when else "",
    )


def assess(
    req: RetrieveRequest, best: list[tuple[Hit, float]]
) -> tuple[Coverage, list[str], list[Source]]:
    """Coverage, gaps and sources from candidate articles (best first), per the rules above."""
    chosen = [(h, s) for h, s in best if s >= MIN_RELEVANCE][:TOP_K]
    devices = req.metadata.device_names
    gaps: list[str] = []
    on_intent = any(_tagged(h.object.intent, req.intent) for h, _ in chosen)
    exact = any(
        _tagged(h.object.intent, req.intent)
        and (not devices or _tagged(h.object.device, devices[0]))
        for h, _ in chosen
    )
    for device in devices:
        if not any(_tagged(h.object.device, device) for h, _ in chosen):
            gaps.append(f"No {device} specific troubleshooting guide for this issue")
    if not chosen:
        gaps.append("No knowledge base article matches this question")
        near = bool(best) and best[0][1] >= NEAR_MISS
        return ("low" if near else "none"), gaps, []
    if req.intent and not on_intent:
        gaps.append(f"No article tagged for intent '{req.intent}'")
    return ("high" if exact else "medium"), gaps, [_source(h, s) for h, s in chosen]


async def _query_vector(ctx: ServiceContext, req: RetrieveRequest) -> tuple[Any, SearchMode]:
    """The message's vector and the search mode it allows."""
    if ctx.embedder is not None and (
        ctx.embedder.ready or ctx.embedder.cached(req.message) is not None
    ):
        return await ctx.embedder.embed(req.message), SearchMode.HYBRID
    return None, SearchMode.BM25  # the model is still loading: lexical, not a 5 s wait


async def _retrieve(
    ctx: ServiceContext,
    req: RetrieveRequest,
    tenant: str,
    query: tuple[Any, SearchMode] | None = None,
) -> RetrieveResponse:
    tenant = data_tenant(tenant)
    index = ctx.index
    if index is None:
        raise RuntimeError("no search index")
    vector, mode = query or await _query_vector(ctx, req)
    searches = [index.search(req.message, vector, Kind.KB_CHUNK, None, CANDIDATES, tenant, mode)]
    for device in req.metadata.device_names or ((None,) if req.intent else ()):
        scoped = Filters(intent=req.intent or None, device=device)
        searches.append(
            index.search(req.message, vector, Kind.KB_CHUNK, scoped, CANDIDATES, tenant, mode)
        )
    unique: dict[str, Hit] = {}
    for hits in await asyncio.gather(*searches):
        for hit in hits:
            unique.setdefault(hit.object.chunk_id, hit)
    # The calibrated relevance (issue 7): the hit's similarity and keyword match, and how
    # far it falls below the best hit; never rescaled by the top hit.
    per_article: dict[str, tuple[Hit, float]] = {}
    for hit, score in ranked(Kind.KB_CHUNK, req.message, list(unique.values())):
        per_article.setdefault(hit.object.document_id, (hit, score))
    best = sorted(per_article.values(), key=lambda hs: -hs[1])
    coverage, gaps, sources = assess(req, best)
    return RetrieveResponse(sources_consulted=sources, coverage=coverage, gaps=gaps)


class _Throttled:
    """A warning logged at most once per ``every_s``, with how many were held back."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self._last = -every_s
        self._held = 0

    def warning(self, msg: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s:
            self._held += 1
            return
        held, self._held, self._last = self._held, 0, now
        suffix = f" (and {held} more like it in the last {self.every_s:.0f} s)" if held else ""
        log.warning(msg + suffix, *args)


_over_budget = _Throttled()
_failed = _Throttled()


def _missed(why: FallbackReason, t0: float) -> RetrieveResponse:
    """Seed 002's fallback body, told apart from an empty answer: why, and how long the
    caller waited (the body's ``retrieval_time_ms`` stays 0, as the seed says)."""
    waited = round((time.perf_counter() - t0) * 1000)
    RETRIEVE_FALLBACKS.labels(reason=why).inc()
    return fallback(why=why, waited_ms=waited)


async def retrieve_knowledge(
    ctx: ServiceContext, req: RetrieveRequest, tenant: str, budget_s: float = BUDGET_S
) -> RetrieveResponse:
    """Help-desk articles answering a customer's support message. Give the classified intent (e.g.
    'not_hashing'), the message, and metadata.product (the device). Returns at most 3 sources
    with relevance_score >= 0.7, coverage (high/medium/low/none) and gaps naming missing
    documentation. Never fails: coverage 'none' when unavailable."""
    # Seed 002: never raises, and answers within budget_s.
    t0 = time.perf_counter()
    answers: Answers[RetrieveResponse] = ctx.answers
    key = (tenant, req.model_dump_json())
    out = answers.get(key)
    if out is not None and answers.stale(key):
        answers.start(key, lambda: _retrieve(ctx, req, tenant))  # refresh ahead
    if out is None:
        # Waiting for the query vector is cancelled with the budget (the question leaves
        # the embedding queue); the search, once started, is not (see Answers).
        try:
            query = await asyncio.wait_for(_query_vector(ctx, req), budget_s)
        except TimeoutError:
            _over_budget.warning("retrieve_knowledge: over the %.0f ms budget", budget_s * 1000)
            return _missed("budget_exceeded", t0)
        except Exception as exc:  # seed 002: degrade, never fail
            _failed.warning("retrieve_knowledge: %s: %s", type(exc).__name__, exc)
            return _missed("unavailable", t0)
        remaining = max(0.0, budget_s - (time.perf_counter() - t0))
        task = answers.start(key, lambda: _retrieve(ctx, req, tenant, query))
        if task is None:
            _over_budget.warning("retrieve_knowledge: %d retrievals running, shed", MAX_RUNNING)
            return _missed("shed", t0)
        done, _ = await asyncio.wait({task}, timeout=remaining)
        if not done:
            _over_budget.warning("retrieve_knowledge: over the %.0f ms budget", budget_s * 1000)
            return _missed("budget_exceeded", t0)
        error = task.exception()
        if error is not None:  # seed 002: degrade, never fail
            _failed.warning("retrieve_knowledge: %s: %s", type(error).__name__, error)
            return _missed("unavailable", t0)
        out = task.result()
    elapsed = max(1, round((time.perf_counter() - t0) * 1000))
    return out.model_copy(update={"retrieval_time_ms": elapsed})
