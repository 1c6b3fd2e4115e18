"""Fit the calibrated relevance (``projections/index/calibration.json``) on the labelled sets.

Every labelled query is searched the way its service searches
(same lexical query, same candidate depth, hybrid mode); each candidate's features
(:func:`projections.index.ranking.features`) are labelled relevant or not.

* Tables and code are *ranked*: a pairwise logistic regression (no intercept) learns
  the weights under which the right candidate of a query outscores each wrong one,
  then a one-variable logistic regression maps that ranking score to a probability.
  The stored weights are the product, so the API's probability orders candidates
  exactly as the ranking score does.
* Articles are *thresholded* (sources need 0.7): one pointwise logistic regression.

At most seven weights and an intercept per kind, fitted on 450-3,000 labelled
candidates: too few parameters to memorise a set. :func:`held_out` measures that:
every query scored by weights fitted without it (leave one query out).
``make eval`` reports the fit; ``make eval EVAL_ARGS=--fit`` also writes it where the
API reads it from.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from api.services import catalog, code, knowledge
from bench.eval.metrics import Ranked, Sourced, by_kind, knowledge_by_kind
from bench.eval.runs import Runner, code_hit
from projections.index.port import Hit, Kind, SearchMode
from projections.index.ranking import (
    CALIBRATION_FILE,
    FEATURES,
    features,
    interpret,
    margin,
    relevance,
)

DEV_EVERY = 1
"""Fit on every n-th query (1: all of them)."""
DEPTH = {Kind.TABLE_DOC: catalog.CANDIDATES, Kind.CODE_CHUNK: code.CANDIDATES,
         Kind.KB_CHUNK: knowledge.CANDIDATES}  # fmt: skip
UNUSED = {
    Kind.TABLE_DOC: {"gap", "support", "top", "vector_z", "lexical_share"},
    # Code ranks by the per-query forms of the two scores: the absolute ones move with
    # the corpus (held out, they ranked one codebase below plain vector search).
    Kind.CODE_CHUNK: {"gap", "support", "top", "vector", "lexical"},
    Kind.KB_CHUNK: {"vector_z", "lexical_share"},
}
"""Features a kind does not use (always 0 or left out): left out of its fit."""
PAIRWISE = {Kind.TABLE_DOC, Kind.CODE_CHUNK}
"""Kinds fitted for ranking (pairwise), not for a threshold."""
C = 10.0
"""Inverse L2 regularisation strength of every fit."""
LEADER = ("top_intercept", "top_z", "top_margin", "top_margin_cap")
"""The weights of a ranked kind's leader model (:func:`_leader_fit`)."""


def dev(queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [q for i, q in enumerate(queries) if i % DEV_EVERY == 0]


def _label(kind: Kind, item: dict[str, Any], urls: dict[str, str]) -> Callable[[Hit], bool]:
    if kind == Kind.TABLE_DOC:
        return lambda h: h.object.fully_qualified_name in item["expect"]
    if kind == Kind.CODE_CHUNK:
        ok = code_hit(item)
        return lambda h: ok({"repo": h.object.repo, "path": h.object.path,
                             "symbol": h.object.symbol,
                             "fully_qualified_name": h.object.fully_qualified_name})  # fmt: skip
    names = set(item["expect"])
    return lambda h: _identity(kind, h, urls) in names


@dataclass(frozen=True)
class Group:
    """One labelled query's candidates: features, labels, and what each candidate is
    (articles: their id; code: its symbol), in the index's order."""

    item: dict[str, Any]
    x: np.ndarray
    y: np.ndarray
    article: tuple[str, ...]
    corpus: str = ""


def _identity(kind: Kind, h: Hit, urls: dict[str, str]) -> str:
    if kind == Kind.KB_CHUNK:
        url = h.object.url or ""
        return urls.get(url, url.rstrip("/").rsplit("/", 1)[-1])
    if kind == Kind.CODE_CHUNK:
        o = h.object
        return f"{o.repo}:{o.path}:{o.fully_qualified_name or o.symbol or o.chunk_id}"
    return h.object.chunk_id


async def groups(
    run: Runner, kind: Kind, queries: Sequence[dict[str, Any]], tenant: str = "default",
    corpus: str = "", urls: dict[str, str] | None = None,
) -> list[Group]:  # fmt: skip
    """Each query searched as its service searches (same lexical query, candidate depth,
    hybrid mode) in ``tenant``; its candidates' features and labels."""
    out: list[Group] = []
    for item in dev(queries):
        text = item["q"]
        if kind != Kind.KB_CHUNK:
            text = interpret(item["q"]).lexical_query(item["q"])
        vector = list(run.embedder.encode([item["q"]])[0])
        hits = await run.index.search(
            text, vector, kind, None, DEPTH[kind], tenant, SearchMode.HYBRID
        )
        correct = _label(kind, item, urls or {})
        rows = [f.as_dict() for f in features(kind, item["q"], hits)]
        used = _used(kind)
        x = np.array([[row[name] for name in used] for row in rows]).reshape(-1, len(used))
        ids = tuple(_identity(kind, h, urls or {}) for h in hits)
        out.append(Group(item, x, np.array([int(correct(h)) for h in hits]), ids, corpus))
    return out


def _used(kind: Kind) -> list[str]:
    return [f for f in FEATURES if f not in UNUSED[kind]]


def fit_groups(kind: Kind, found: Sequence[Group]) -> dict[str, Any]:
    """The calibration of ``kind`` fitted on ``found``, as :func:`write` stores it."""
    y = np.concatenate([g.y for g in found]) if found else np.array([])
    if len(set(y.tolist())) < 2:
        return {"n": len(y), "error": "one class only"}
    fitted = _fit(kind, found)
    weights = dict(zip(_used(kind), (round(float(c), 3) for c in fitted.coef), strict=True))
    return {"intercept": round(fitted.intercept, 3),
            **{f: weights.get(f, 0.0) for f in FEATURES}, "lead": round(fitted.lead, 3),
            **{k: round(v, 3) for k, v in (fitted.top or {}).items()},
            "n": len(y), "positives": int(y.sum())}  # fmt: skip


async def fit(run: Runner, kind: Kind, queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"intercept": b0, <feature>: weight, ..., "n": rows, "positives": p,
    "held_out": {...}}``; ``held_out`` holds the set's key metrics computed on
    candidates with weights fitted without the query (leave one query out)."""
    found = await groups(run, kind, queries)
    out = fit_groups(kind, found)
    if "error" not in out:
        out["held_out"] = held_out(kind, found)
    return out


def score(kind: Kind, train: Sequence[Group], test: Sequence[Group]) -> tuple[
    list[Ranked], list[Sourced]
]:  # fmt: skip
    """``test`` ranked by weights fitted on ``train`` alone, as the services rank:
    one answer per symbol (code), articles at their best passage (help desk)."""
    fitted = _fit(kind, train)
    ranks: list[Ranked] = []
    sourced: list[Sourced] = []
    for g in test:
        if not len(g.y):
            if kind in PAIRWISE:
                ranks.append(Ranked(g.item["kind"], None, g.item["q"]))
            else:
                sourced.append(Sourced(g.item["kind"], tuple(g.item["expect"]), (), "none",
                                       g.item["q"]))  # fmt: skip
            continue
        p = fitted.predict(g.x, g.article)
        if kind in PAIRWISE:
            order = np.argsort(-p, kind="stable")
            seen: set[str] = set()
            rank = None
            position = 0
            for j in order:
                if g.article[j] in seen:
                    continue  # one answer per symbol / table
                seen.add(g.article[j])
                position += 1
                if g.y[j]:
                    rank = position
                    break
            ranks.append(Ranked(g.item["kind"], rank, g.item["q"]))
            continue
        best: dict[str, float] = {}
        for article, s in zip(g.article, p, strict=True):
            best[article] = max(best.get(article, 0.0), float(s))
        ordered = sorted(best.items(), key=lambda kv: -kv[1])
        chosen = [a for a, s in ordered if s >= 0.7][:3]
        top = ordered[0][1] if ordered else 0.0
        coverage = "medium" if chosen else "low" if top >= 0.5 else "none"
        sourced.append(Sourced(g.item["kind"], tuple(g.item["expect"]), tuple(chosen), coverage,
                               g.item["q"]))  # fmt: skip
    return ranks, sourced


@dataclass(frozen=True)
class Fit:
    """Weights as the API applies them: ``intercept``, per-feature ``coef`` and the
    ``lead`` weight of a candidate's distance below the query's best; for ranked kinds,
    the leader's own model (``top_*``: its ranking score and its margin over the best
    rival answer, :func:`projections.index.ranking.relevance`)."""

    intercept: float
    coef: np.ndarray
    lead: float = 0.0
    top: dict[str, float] | None = None

    def weights(self) -> dict[str, float]:
        return {"intercept": self.intercept, "lead": self.lead, **(self.top or {})}

    def predict(self, x: np.ndarray, keys: Sequence[str] | None = None) -> np.ndarray:
        if not len(x):
            return np.zeros(0)
        z = [float(v) for v in x @ self.coef]
        return np.asarray(relevance(self.weights(), z, keys))


def _fit(kind: Kind, groups: Sequence[Group]) -> Fit:
    x = np.vstack([g.x for g in groups])
    y = np.concatenate([g.y for g in groups])
    if kind in PAIRWISE:
        return _ranking_fit([(g.x, g.y, g.article) for g in groups])
    model = LogisticRegression(C=C, max_iter=3000).fit(x, y)
    return Fit(float(model.intercept_[0]), model.coef_[0])


def held_out(kind: Kind, groups: Sequence[Group]) -> dict[str, Any]:
    """Leave-one-query-out: each query scored by weights fitted on all the others.
    Tables and code: recall@1/@5 and MRR over the candidates; articles: precision and
    hit rate of sources >= 0.7 (best passage per article, at most three)."""
    ranks: list[Ranked] = []
    sourced: list[Sourced] = []
    for i, g in enumerate(groups):
        rest = [o for j, o in enumerate(groups) if j != i]
        if len({int(v) for o in rest for v in o.y}) < 2:
            continue
        p = _fit(kind, rest).predict(g.x, g.article)
        if kind in PAIRWISE:
            order = np.argsort(-p, kind="stable")
            rank = next((r for r, j in enumerate(order, start=1) if g.y[j]), None)
            ranks.append(Ranked(g.item["kind"], rank, g.item["q"]))
            continue
        best: dict[str, float] = {}
        for url, score in zip(g.article, p, strict=True):
            best[url] = max(best.get(url, 0.0), float(score))
        chosen = [u for u, s in sorted(best.items(), key=lambda kv: -kv[1]) if s >= 0.7][:3]
        sourced.append(Sourced(g.item["kind"], tuple(g.item["expect"]), tuple(chosen), ""))
    if kind in PAIRWISE:
        return {split: dict(m) for split, m in by_kind(ranks).items()}
    return {split: {k: v for k, v in m.items() if k != "unanswerable_none_or_low"}
            for split, m in knowledge_by_kind(sourced).items()}  # fmt: skip


def _ranking_fit(groups: Sequence[tuple[np.ndarray, np.ndarray, Sequence[str]]]) -> Fit:
    """Pairwise ranking weights ``w`` (right minus wrong candidate of one query, both
    ways round), then a probability from the ranking score ``z = w . x`` and the
    candidate's *lead* ``z - max z`` over its query's candidates:
    ``sigmoid(a + b * z + c * lead)``. Stored as ``(a, b * w, c / b)``, so the API
    computes the lead on the stored weights. The lead makes a score mean the same on
    any corpus: how far a candidate stands from the best one of its own query, not an
    absolute similarity whose scale moves with the corpus."""
    diffs: list[np.ndarray] = []
    for gx, gy, _ in groups:
        right, wrong = gx[gy == 1], gx[gy == 0]
        if len(right) and len(wrong):
            diffs.append((right[:, None, :] - wrong[None, :, :]).reshape(-1, gx.shape[1]))
    pairs = np.vstack(diffs)
    both = np.vstack([pairs, -pairs])
    labels = np.concatenate([np.ones(len(pairs)), np.zeros(len(pairs))])
    w = LogisticRegression(C=C, max_iter=3000, fit_intercept=False).fit(both, labels).coef_[0]
    rows = []
    for gx, _, _ in groups:
        if len(gx):
            z = gx @ w
            rows.append(np.column_stack([z, z - z.max()]))
    y = np.concatenate([gy for gx, gy, _ in groups if len(gx)])
    scale = LogisticRegression(C=C, max_iter=3000).fit(np.vstack(rows), y)
    b, c = (float(v) for v in scale.coef_[0])
    if abs(b) < 1e-6:
        b = 1e-6
    return Fit(float(scale.intercept_[0]), b * w, c / b, _leader_fit(groups, b * w))


def _leader_fit(
    groups: Sequence[tuple[np.ndarray, np.ndarray, Sequence[str]]], coef: np.ndarray
) -> dict[str, float] | None:
    """How likely a query's best candidate is right, from its ranking score and its
    margin over the best rival answer (``sigmoid(top_intercept + top_z * z + top_margin *
    margin)``), fitted on the best candidates alone; ``top_margin_cap`` is the largest
    margin seen (a lone candidate counts that)."""
    rows: list[tuple[float, float]] = []
    right: list[int] = []
    leads: list[tuple[list[float], Sequence[str]]] = []
    for gx, gy, keys in groups:
        if len(gx):
            z = [float(v) for v in gx @ coef]
            leads.append((z, keys))
            right.append(int(gy[int(np.argmax(z))]))
    if len(set(right)) < 2:
        return None
    seen = [m for m in (margin(z, keys, math.inf) for z, keys in leads) if m < math.inf]
    cap = max(seen, default=1.0)
    rows = [(max(z), margin(z, keys, cap)) for z, keys in leads]
    model = LogisticRegression(C=C, max_iter=3000).fit(np.array(rows), np.array(right))
    top_z, top_margin = (float(v) for v in model.coef_[0])
    return {"top_intercept": float(model.intercept_[0]), "top_z": top_z,
            "top_margin": top_margin, "top_margin_cap": float(cap)}  # fmt: skip


def write(fits: dict[str, dict[str, Any]], backend: str, path: Path = CALIBRATION_FILE) -> None:
    """Store the fits where :func:`projections.index.ranking.calibration` reads them;
    kinds not in ``fits`` keep their stored weights."""
    record: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"kinds": {}}
    for k, f in fits.items():
        record["kinds"][k] = {n: f.get(n, 0.0) for n in ("intercept", *FEATURES, "lead")}
        record["kinds"][k].update({n: f[n] for n in LEADER if n in f})
    when = datetime.now(UTC).date().isoformat()
    rows = ", ".join(f"{k} {f['n']} candidates ({f['positives']} relevant)"
                     for k, f in fits.items())  # fmt: skip
    kept = [k for k in record["kinds"] if k not in fits]
    note = f"{when}, {backend}, make eval corpora (all of a kind): {rows}"
    if kept:  # what the kept kinds were fitted on stays said
        note += f"; {', '.join(kept)} kept as before ({record.get('fitted_on', 'unknown')})"
    record["fitted_on"] = note
    path.write_text(json.dumps(record, indent=2) + "\n")
