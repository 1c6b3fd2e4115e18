"""Retrieval metrics over ranked answers (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Ranked:
    """One labelled query's outcome: 1-based rank of the first correct answer (or None)."""

    kind: str
    rank: int | None
    query: str = ""
    top: tuple[str, ...] = ()
    """The first answers given (for the misses listing)."""


def misses(rows: Sequence[Ranked], depth: int = 1) -> list[dict[str, object]]:
    """Queries whose right answer is not in the first ``depth``: what came instead."""
    return [
        {"q": r.query, "kind": r.kind, "rank": r.rank, "top": list(r.top[:3])}
        for r in rows
        if r.rank is None or r.rank > depth
    ]


def ranking(rows: Sequence[Ranked]) -> dict[str, float]:
    """recall@1, recall@5 and MRR of rows; ``n`` counts them."""
    n = len(rows)
    if n == 0:
        return {"n": 0, "recall@1": 0.0, "recall@5": 0.0, "mrr": 0.0}
    at = [r.rank for r in rows]
    return {
        "n": n,
        "recall@1": round(sum(1 for r in at if r == 1) / n, 3),
        "recall@5": round(sum(1 for r in at if r is not None and r <= 5) / n, 3),
        "mrr": round(sum(1 / r for r in at if r is not None) / n, 3),
    }


def by_kind(rows: Sequence[Ranked]) -> dict[str, dict[str, float]]:
    """``all``, ``literal`` and ``paraphrase`` splits of :func:`ranking`."""
    return {
        "all": ranking(rows),
        "literal": ranking([r for r in rows if r.kind == "literal"]),
        "paraphrase": ranking([r for r in rows if r.kind == "paraphrase"]),
    }


def first_rank(answers: Sequence[object], correct: object) -> int | None:
    """1-based rank of the first answer for which ``correct(answer)`` holds."""
    for i, a in enumerate(answers, start=1):
        if correct(a):  # type: ignore[operator]
            return i
    return None


@dataclass(frozen=True)
class Sourced:
    """One retrieve_knowledge answer: sources (article ids) at >= 0.7 and the verdict."""

    kind: str
    expect: tuple[str, ...]
    sources: tuple[str, ...]
    coverage: str
    query: str = ""


def knowledge(rows: Sequence[Sourced]) -> dict[str, float | None]:
    """Precision of sources >= 0.7 (``None`` when no source was ever given: nothing to
    measure), hit rate (answerable questions with a right source), and the share of
    unanswerable questions judged ``none``/``low``."""
    answerable = [r for r in rows if r.expect]
    given = [s for r in answerable for s in r.sources]
    right = [s for r in answerable for s in r.sources if s in r.expect]
    wrong_unans = [r for r in rows if not r.expect for _ in r.sources]
    hits = [r for r in answerable if set(r.sources) & set(r.expect)]
    unanswerable = [r for r in rows if not r.expect]
    honest = [r for r in unanswerable if r.coverage in ("none", "low")]
    total = len(given) + len(wrong_unans)
    return {
        "n": len(rows),
        "precision@0.7": round(len(right) / total, 3) if total else None,
        "hit_rate@0.7": round(len(hits) / len(answerable), 3) if answerable else 0.0,
        "unanswerable_none_or_low": round(len(honest) / len(unanswerable), 3)
        if unanswerable
        else 1.0,
    }


def wrong_sources(rows: Sequence[Sourced]) -> list[dict[str, object]]:
    """Answers with a source >= 0.7 that is not a right one, or no right source at all."""
    return [
        {"q": r.query, "kind": r.kind, "expect": list(r.expect), "sources": list(r.sources),
         "coverage": r.coverage}
        for r in rows
        if set(r.sources) - set(r.expect) or (r.expect and not set(r.sources) & set(r.expect))
    ]  # fmt: skip


def knowledge_by_kind(rows: Sequence[Sourced]) -> dict[str, dict[str, float | None]]:
    unans = [r for r in rows if r.kind == "unanswerable"]
    return {
        "all": knowledge(rows),
        "literal": knowledge([r for r in rows if r.kind == "literal"] + unans),
        "paraphrase": knowledge([r for r in rows if r.kind == "paraphrase"] + unans),
    }
