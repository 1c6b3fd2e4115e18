"""Memory: facts and episodes of one ``group_id``, an entity's history, new turns.

A caller reads only groups of its own tenant: ``group_id`` is ``tenant:session``
and its tenant part must be the caller's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from api.auth import ANY_TENANT
from api.schemas.memory import (
    AddMemoryInput,
    AddMemoryOutput,
    AnswerOut,
    EntityOut,
    EpisodeOut,
    FactOut,
    GetEntityInput,
    GetEntityOutput,
    SearchMemoryInput,
    SearchMemoryOutput,
    SummaryOut,
)
from api.services.budget import clip, fit
from api.services.context import ServiceContext, require_db
from api.services.errors import ServiceError, forbidden
from api.services.recall import recall, said_span
from projections.graph import queries as g
from projections.graph.models import Fact
from projections.index.port import Filters, Hit, Kind
from projections.index.ranking import (
    answer_relevance,
    asked_relations,
    episode_relevance,
    fact_relevance,
    fact_text,
    recency,
)

log = logging.getLogger(__name__)
_WORD = re.compile(r"\w{3,}")


def check_group(group_id: str, tenant: str) -> str:
    """``group_id`` if it belongs to ``tenant``; a 403 :class:`ServiceError` otherwise."""
    if tenant != ANY_TENANT and group_id.partition(":")[0] != tenant:
        raise forbidden(f"group {group_id}")
    return group_id


def _mentions(f: Fact, words: set[str]) -> bool:
    text = " ".join(str(x) for x in (f.fact, f.source_name, f.target_name, f.relation_type))
    return bool(words & {w.lower() for w in _WORD.findall(text)})


FACT_CANDIDATES = 64
"""Facts of one group embedded per question at most (the rest by keywords alone)."""
FACT_FLOOR = 0.3
"""A fact that shares no word with the question is kept only from this relevance up."""


async def rank_facts(ctx: ServiceContext, query: str, facts: list[Fact]) -> list[Fact]:
    """The facts that answer ``query``, best first (see :func:`score_facts`)."""
    return [f for _, f in await score_facts(ctx, query, facts)]


async def score_facts(
    ctx: ServiceContext, query: str, facts: list[Fact]
) -> list[tuple[float, Fact]]:
    """The facts that answer ``query`` with their relevance, best first: semantic
    similarity of question and fact, whether the question asks for the fact's relation
    ("where … live" → ``lives_in``), names its subject and asks for its kind of value
    (:func:`projections.index.ranking.fact_relevance`). Without an embedder, the keyword
    parts alone."""
    words = {w.lower() for w in _WORD.findall(query)}

    def keywords(f: Fact) -> float:
        return fact_relevance(query, f.source_name, f.relation_type, f.target_name, 0.0)

    ordered = sorted(facts, key=keywords, reverse=True)[:FACT_CANDIDATES]
    similarity: dict[int, float] = {}
    asked_for: dict[str, float] = {}
    try:
        question = await ctx.vector(query)
        asked_for = asked_relations(question)
        if question is not None:
            texts = [fact_text(f.source_name, f.relation_type, f.target_name) for f in ordered]
            vectors = await asyncio.gather(*(ctx.vector(t) for t in texts))
            similarity = dict(enumerate(cosines(question, vectors)))
    except Exception as exc:  # keywords still rank
        log.warning("search_memory: fact vectors unavailable: %s", exc)
    scored = [
        (fact_relevance(query, f.source_name, f.relation_type, f.target_name,
                        similarity.get(i, 0.0), asked_for), f)
        for i, f in enumerate(ordered)
    ]  # fmt: skip
    kept = [(s, f) for s, f in scored if _mentions(f, words) or s >= FACT_FLOOR]
    return sorted(kept, key=lambda sf: -sf[0])


def _span(group: str, as_of: datetime | None) -> tuple[datetime, datetime] | None:
    """When the group's first turn was said and its last one, as of ``as_of``."""
    span = said_span(group)
    if span is None:
        return None
    first, last = span
    return first, min(last, as_of) if as_of is not None else last


async def rank_together(
    ctx: ServiceContext,
    query: str,
    facts: list[tuple[float, Fact]],
    episodes: list[EpisodeOut],
    stored: Sequence[Sequence[float] | None] = (),
    span: tuple[datetime, datetime] | None = None,
) -> list[AnswerOut]:
    """Facts and episodes in one list, best first, on one relevance scale. ``stored``:
    the episodes' vectors as the index holds them (embedded again when missing);
    ``span``: when the conversation's first and last turns were said (as of the
    question), so that a later turn or fact counts for more (:func:`episode_relevance`,
    :func:`answer_relevance`)."""
    answers = [
        AnswerOut(
            kind="fact", text=fact_text(f.source_name, f.relation_type, f.target_name),
            relevance=answer_relevance(score, recency(f.valid_from, *span) if span else 0.0),
            relationship_id=f.relationship_id, valid_from=f.valid_from,
            valid_to=f.valid_to, episode_ids=list(f.episode_ids),
        )
        for score, f in facts
    ]  # fmt: skip
    try:
        question = await ctx.vector(query)
        known = list(stored) + [None] * (len(episodes) - len(stored))
        vectors = await asyncio.gather(
            *(_known(v) if v is not None else ctx.vector(e.content)
              for e, v in zip(episodes, known, strict=True))
        )  # fmt: skip
    except Exception as exc:  # the facts still rank
        log.warning("search_memory: episode vectors unavailable: %s", exc)
        question, vectors = None, [None] * len(episodes)
    similarities = cosines(question, vectors) if question is not None else [0.0] * len(episodes)
    for e, similarity in zip(episodes, similarities, strict=True):
        answers.append(
            AnswerOut(
                kind="episode", text=e.content,
                relevance=episode_relevance(
                    similarity, recency(e.occurred_at, *span) if span else 0.0
                ),
                episode_id=e.episode_id, occurred_at=e.occurred_at, turn_id=e.turn_id,
                speaker=e.speaker,
            )
        )  # fmt: skip
    return sorted(answers, key=lambda a: -a.relevance)


async def _known(vector: Sequence[float]) -> Sequence[float]:
    return vector


def cosines(a: Sequence[float], others: Sequence[Sequence[float] | None]) -> list[float]:
    """The cosine of ``a`` and each of ``others`` (0 for a missing or zero vector, or one
    of another length), in one matrix product."""
    question = np.asarray(a, dtype=np.float64)
    size = len(question)
    rows = [i for i, v in enumerate(others) if v is not None and len(v) == size]
    out = [0.0] * len(others)
    if not rows or not size:
        return out
    matrix = np.asarray([others[i] for i in rows], dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(question))
    dots = matrix @ question
    for i, dot, norm in zip(rows, dots.tolist(), norms.tolist(), strict=True):
        out[i] = dot / norm if norm else 0.0
    return out


_APART = ("content_type", "source", "source_event_id", "turn_id", "speaker", "times")
"""Index metadata of an episode that its result shows as fields of their own."""


def best_first(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` in the order of the score they report. The index returns a hybrid
    search's hits in fused (reciprocal-rank) order, while each hit's score blends its
    vector and keyword similarity: the two orders differ (scores came back 0.484, 0.379,
    0.459, 0.349), so results follow the score they carry; fused order breaks ties."""
    return sorted(hits, key=lambda h: -h.score)


def episode_out(hit: Hit) -> EpisodeOut:
    """An episode hit with its provenance: the turn and event it came from, who said it
    and when, and the turn's own metadata."""
    meta = dict(hit.object.metadata)
    return EpisodeOut(
        episode_id=hit.object.document_id, content=clip(hit.object.text, 500),
        relevance_score=round(hit.score, 4), occurred_at=hit.object.updated_at,
        turn_id=meta.get("turn_id"), source_event_id=meta.get("source_event_id"),
        speaker=meta.get("speaker"), content_type=meta.get("content_type"),
        times=meta.get("times", "").split(),
        metadata={k: v for k, v in meta.items() if k not in _APART},
    )  # fmt: skip


def summary_out(hit: Hit) -> SummaryOut:
    """A summary hit with the episodes (and, for a meta summary, the summaries) it covers."""
    meta = hit.object.metadata
    return SummaryOut(
        summary_id=hit.object.document_id, summary_type=meta.get("summary_type", "window"),
        content=clip(hit.object.text, 500), relevance_score=round(hit.score, 4),
        occurred_at=hit.object.updated_at,
        episode_ids=[x for x in meta.get("episode_ids", "").split(",") if x],
        summary_ids=[x for x in meta.get("summary_ids", "").split(",") if x],
    )  # fmt: skip


async def _memory_hits(
    ctx: ServiceContext, req: SearchMemoryInput, group: str, kind: Kind
) -> list[Hit]:
    """The group's episodes or summaries matching the query that existed at ``as_of``,
    best first; none when the index is away (facts still answer)."""
    if not req.query or ctx.index is None:
        return []
    try:
        vector = await ctx.vector(req.query)
        hits = await ctx.index.search(
            req.query, vector, kind, Filters(group_id=group), req.limit, group.partition(":")[0]
        )
    except Exception as exc:
        log.warning("search_memory: %s unavailable: %s", kind.value, exc)
        return []
    return best_first(
        [
            h
            for h in hits
            if req.as_of is None or h.object.updated_at is None or h.object.updated_at <= req.as_of
        ]
    )


async def _episode_hits(ctx: ServiceContext, req: SearchMemoryInput, group: str) -> list[Hit]:
    """The turns that answer the query: the conversation read whole and ranked with its
    neighbours, sessions and times (:mod:`api.services.recall`); the index's own
    search when it cannot be read whole."""
    if req.query:
        found = await recall(ctx, group, req.query, req.limit, req.as_of)
        if found is not None:
            return found
    return await _memory_hits(ctx, req, group, Kind.EPISODE)


async def _scored_facts(
    ctx: ServiceContext, req: SearchMemoryInput, group: str
) -> list[tuple[float, Fact]]:
    """The group's facts (valid as of ``req.as_of``, known at ``req.known_at``), ranked by
    relevance to the query when there is one."""
    try:
        facts = await g.facts_for(require_db(ctx), group, as_of=req.as_of, known_at=req.known_at)
    except ValueError as exc:
        raise ServiceError(422, "INVALID_REQUEST", str(exc)) from exc
    except ServiceError:
        raise
    except Exception as exc:  # the graph projection has not created its tables yet
        log.warning("search_memory: graph unavailable: %s", exc)
        facts = []
    return await score_facts(ctx, req.query, facts) if req.query else [(0.0, f) for f in facts]


def within_budget(out: SearchMemoryOutput, max_tokens: int) -> SearchMemoryOutput:
    """``out`` cut to ``max_tokens``, each list from its least relevant end: summaries
    first (the largest items, a meta summary listing up to a hundred episode ids), then
    the facts page, then the answers (facts and episodes ranked together: the facts and
    episodes again), and the episodes last (the evidence, each with its turn, speaker,
    time and metadata). Cut answers first, a 4,000-token answer over a loaded history
    kept neither answers nor episodes: its 20 summaries alone took ~42,000 characters."""
    return fit(out, max_tokens, out.summaries, out.facts, out.answers, out.episodes)


async def search_memory(
    ctx: ServiceContext, req: SearchMemoryInput, tenant: str
) -> SearchMemoryOutput:
    """What the memory of one conversation (group_id 'tenant:session') holds: facts (relationships
    between entities, with validity times) and, given a query, matching episodes. as_of asks
    what was true at a time; known_at what was known then."""
    # Facts, episodes and summaries each say where they came from (episodes, turns,
    # speakers, times).
    group = check_group(req.group_id, tenant)
    scored = await _scored_facts(ctx, req, group)
    episode_hits, summary_hits = await asyncio.gather(
        _episode_hits(ctx, req, group), _memory_hits(ctx, req, group, Kind.SUMMARY)
    )
    facts = [f for _, f in scored]
    page = facts[req.offset : req.offset + req.limit]
    episodes = [episode_out(h) for h in episode_hits]
    answers = (
        await rank_together(
            ctx,
            req.query,
            scored[req.offset : req.offset + req.limit],
            episodes,
            [h.object.vector for h in episode_hits],
            _span(group, req.as_of),
        )
        if req.query
        else []
    )
    out = SearchMemoryOutput(
        group_id=group,
        answers=answers,
        facts=[FactOut.of(f) for f in page],
        episodes=episodes,
        summaries=[summary_out(h) for h in summary_hits],
        has_more=len(facts) > req.offset + req.limit,
    )
    return within_budget(out, req.max_tokens)


async def get_entity(ctx: ServiceContext, req: GetEntityInput, tenant: str) -> GetEntityOutput:
    """One entity of a conversation's memory by id, with every version, merged duplicates and every
    relationship version (history and provenance)."""
    group = check_group(req.group_id, tenant)
    try:
        found = await g.entity_with_history(require_db(ctx), group, req.entity_id)
    except ServiceError:
        raise
    except Exception as exc:
        log.warning("get_entity: graph unavailable: %s", exc)
        found = None
    if found is None:
        raise ServiceError(404, "ENTITY_NOT_FOUND", f"no entity {req.entity_id} in {group}")
    out = GetEntityOutput(
        group_id=group,
        entity=EntityOut(**vars(found.entity)),
        versions=[_jsonable(dataclasses.asdict(v)) for v in found.versions],
        relationships=[FactOut.of(f) for f in found.relationships],
    )
    return fit(out, req.max_tokens, out.versions, out.relationships)


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value)


async def add_memory(ctx: ServiceContext, req: AddMemoryInput, tenant: str) -> AddMemoryOutput:
    """Record a conversation turn (user message and agent response) into the memory of group_id;
    entities and facts are extracted from it asynchronously. speaker names who said it (any
    number of people per group); occurred_at when (default now)."""
    # Returns once Kafka has acknowledged the turn.
    from sources.turns import IngestionError, Session, Turn

    group = check_group(req.group_id, tenant)
    if ctx.ingestor is None:
        raise ServiceError(503, "EVENT_LOG_UNAVAILABLE", "no Kafka broker is configured", True)
    session_tenant, _, session_id = group.partition(":")
    turn = Turn(
        user_message=req.user_message, agent_response=req.agent_response, metadata=req.metadata,
        speaker=req.speaker, occurred_at=req.occurred_at,
    )  # fmt: skip
    try:
        receipt = await ctx.ingestor.ingest_turn(
            turn, Session(tenant_id=session_tenant, id=session_id)
        )
    except IngestionError as exc:
        raise ServiceError(422, exc.code, exc.message) from exc
    out = AddMemoryOutput(
        group_id=group,
        episode_id=str(receipt.episode_id),
        event_id=str(receipt.event_id),
        partition=receipt.partition,
        offset=receipt.offset,
    )
    return fit(out, 1000)
