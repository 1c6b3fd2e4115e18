"""Object ids and relevance scores shared by every index adapter (pure functions).

Scores are in [0, 1] and mean the same on every adapter, so seed 002's
``relevance_score >= 0.7`` selects the same kind of match on pgvector and Weaviate:

* **vector**: the cosine similarity of query and object vectors, clamped to [0, 1]
  (``1 - cosine distance``). Embeddings are normalised, so this is their dot product;
  negative similarity (opposite meaning) scores 0. With all-MiniLM-L6-v2 a paraphrase
  scores about 0.7-0.9, a related text 0.4-0.6 and an unrelated one below 0.2.
* **bm25**: the store's raw lexical score ``r`` (pgvector: ``ts_rank_cd``; Weaviate:
  BM25F) saturated as ``r / (r + c)`` with a per-store constant ``c`` (the raw score
  that counts as half relevant). The raw scales differ, the saturation makes both
  "half relevant" at 0.5 and "strong" near 1. Issue 7 calibrates ``c`` on real data.
* **hybrid**: candidates of both lists are *ordered* by reciprocal rank fusion
  (``sum 1 / (k + rank)``, k = 60), which needs no common scale. The *score* reported
  is the calibrated blend ``alpha * vector + (1 - alpha) * lexical`` (alpha = 0.7) of
  the two normalised scores, a missing side counting 0; an object without any vector
  (summaries, chunks whose embedding has not arrived) is scored on its lexical side
  alone so that it is not punished for what it cannot have.
* **calibrated** (issue 7): what the API reports as ``relevance_score`` and ranks by.
  A logistic map ``1 / (1 + exp(-(b0 + sum(b_f * f))))`` over the features ``f`` of
  :data:`FEATURES`, fitted per kind on the labelled sets (``make eval EVAL_ARGS=--fit``
  writes ``calibration.json``), so that 0.7 means "relevant with high precision".
  ``name`` is how much of the object's own name (a code symbol split into words, a
  table name with its abbreviations spelled out) the query names; ``coverage`` is the
  share of the query's words the object's text contains, each weighted by how rare it
  is among the query's candidates. Articles have three more: ``gap``, how far the hit's
  similarity falls below the query's best one (it lowers the runners-up, never the
  best hit, so a query nothing answers still scores low everywhere; rescaling by the
  top hit would call every query covered); ``support``, the share of the candidates
  that are passages of the hit's article (an article several passages of which match
  is more likely the answer); and ``top``, 1 for the passages of the article holding
  the most similar passage.
  Tables and code are fitted for *ranking* first (a pairwise logistic regression:
  which of two candidates of one query is the right one), then that ranking score is
  mapped to a probability by a one-variable logistic fit; the product of the two is
  stored as one set of weights. Articles are fitted pointwise, because what matters
  there is the 0.7 threshold, not the order.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar
from uuid import UUID, uuid5

OBJECT_NAMESPACE = UUID("0b7d6c2e-5f0a-5e8b-8f3c-2a9e4d1b7c60")
"""uuid5 namespace of every index object id (all adapters)."""

RRF_K = 60
HYBRID_ALPHA = 0.7
PG_TS_RANK_HALF = 0.1
"""``ts_rank_cd`` (no normalisation) of a query term found once in a short text."""
WEAVIATE_BM25_HALF = 1.0
"""BM25F score of a query term found once in a short text."""
CANDIDATES_PER_SIDE = 4
"""Hybrid fetches ``limit * CANDIDATES_PER_SIDE`` candidates from each side."""

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
"""The fitted calibration (``make eval EVAL_ARGS=--fit`` writes it): per kind, the
logistic weights of the relevance features, and what they were fitted on."""
FEATURES = ("vector", "lexical", "name", "coverage", "gap", "support", "top", "negated")
"""The relevance features of a hit (see the module docstring). ``vector``, ``lexical``
and ``name`` depend on the hit and the query alone; the others on the query's other
candidates too."""


@functools.cache
def calibration() -> dict[str, dict[str, float]]:
    """``{kind: {"intercept": b0, "vector": bv, ...}}`` from :data:`CALIBRATION_FILE`."""
    data: dict[str, Any] = json.loads(CALIBRATION_FILE.read_text())
    return {kind: {k: float(v) for k, v in fit.items()} for kind, fit in data["kinds"].items()}


T = TypeVar("T", bound=Hashable)


def object_uuid(tenant: str, chunk_id: str) -> UUID:
    """The store id of an object: the same on every adapter and every replay.

    The tenant is part of the name because two tenants may index the same repository
    (same chunk ids); the default tenant's ids are uuid5 of the chunk id alone.
    """
    name = chunk_id if tenant == "default" else f"{tenant}\x1f{chunk_id}"
    return uuid5(OBJECT_NAMESPACE, name)


def vector_score(cosine_similarity: float) -> float:
    """Cosine similarity clamped to [0, 1]."""
    return min(1.0, max(0.0, cosine_similarity))


def vector_score_from_distance(cosine_distance: float) -> float:
    """Cosine distance (``1 - similarity``, as pgvector ``<=>`` and Weaviate return)."""
    return vector_score(1.0 - cosine_distance)


def lexical_score(raw: float, half: float) -> float:
    """A store's raw lexical score saturated to [0, 1); ``half`` scores 0.5."""
    if raw <= 0:
        return 0.0
    return raw / (raw + half)


def blend(vector: float | None, lexical: float | None, alpha: float = HYBRID_ALPHA) -> float:
    """The hybrid score of one object from its two normalised sides."""
    if vector is None:
        return lexical or 0.0
    return alpha * vector + (1 - alpha) * (lexical or 0.0)


def calibrated(kind: str, features: Mapping[str, float]) -> float:
    """The probability-like relevance of one hit alone from its features
    (:data:`FEATURES`; a missing feature counts 0), as if it led its query."""
    return probabilities(kind, [features])[0]


def probabilities(kind: str, rows: Sequence[Mapping[str, float]]) -> list[float]:
    """The calibrated relevance of each of one query's candidates.

    ``z`` is the weighted sum of a candidate's features; its *lead* ``z - max z`` says
    how far below the query's best candidate it stands. The probability is
    ``sigmoid(intercept + z + lead_weight * lead)``: the best candidate's score says how
    likely the best answer is right, and the others fall away from it, on any corpus.
    """
    w = calibration()[kind]
    z = [sum(w.get(f, 0.0) * row.get(f, 0.0) for f in FEATURES) for row in rows]
    best = max(z, default=0.0)
    lead = w.get("lead", 0.0)
    return [1.0 / (1.0 + math.exp(-(w["intercept"] + v + lead * (v - best)))) for v in z]


@dataclass(frozen=True)
class Fused(Generic[T]):
    key: T
    score: float
    vector: float | None
    lexical: float | None
    rrf: float


def fuse(
    vector_side: Sequence[tuple[T, float]],
    lexical_side: Sequence[tuple[T, float]],
    limit: int,
    vector_of: Mapping[T, float | None] | None = None,
    k: int = RRF_K,
    alpha: float = HYBRID_ALPHA,
) -> list[Fused[T]]:
    """Fuse two best-first lists of ``(key, normalised score)`` by RRF.

    ``vector_of`` gives the vector score of lexical-side keys the vector side did not
    return (``None``: the object has no vector), so their blend is still exact.
    """
    rrf: dict[T, float] = {}
    vec = dict(vector_side)
    lex = dict(lexical_side)
    for side in (vector_side, lexical_side):
        for rank, (key, _) in enumerate(side, start=1):
            rrf[key] = rrf.get(key, 0.0) + 1.0 / (k + rank)
    fused = []
    for key, total in rrf.items():
        v = vec[key] if key in vec else (vector_of or {}).get(key)
        fused.append(Fused(key, blend(v, lex.get(key), alpha), v, lex.get(key), total))
    fused.sort(key=lambda f: (-f.rrf, -f.score))
    return fused[:limit]


_WEAVIATE_TENANT = re.compile(r"[A-Za-z0-9_-]{1,64}")


def weaviate_tenant(tenant: str) -> str:
    """A Tribal tenant (``[A-Za-z0-9_.-]{1,128}``) as a Weaviate tenant name.

    Weaviate allows neither ``.`` nor more than 64 characters; such names (and names
    starting with the reserved ``x-``) become ``x-`` and 40 hex digits of their sha256.
    """
    if _WEAVIATE_TENANT.fullmatch(tenant) and not tenant.startswith("x-"):
        return tenant
    return "x-" + hashlib.sha256(tenant.encode()).hexdigest()[:40]


def glob_to_like(glob: str) -> str:
    """A path glob as a SQL ``LIKE`` pattern (escape ``\\``): ``*`` → ``%``, ``?`` → ``_``."""
    out = []
    for ch in glob:
        if ch == "*":
            out.append("%")
        elif ch == "?":
            out.append("_")
        elif ch in "%_\\":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
