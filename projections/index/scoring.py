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
* **calibrated**: the ``relevance_score`` the API ranks by, in
  :mod:`projections.index.ranking`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar
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
SIDE_BEST_SHARE = 5
"""``limit // SIDE_BEST_SHARE`` of each side's best always make the fused cut."""

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
    """Fuse two best-first lists of ``(key, normalised score)`` by RRF, keeping ``limit``.

    Each side's best ``limit // SIDE_BEST_SHARE`` always make the cut. By RRF alone, a
    side found deep in both lists outranks the other side's best found in one: with
    both sides ``limit * CANDIDATES_PER_SIDE`` deep, a question whose words match many
    objects lost the nearest object by meaning (the right one for 4 of 58 paraphrased
    questions on one codebase) to ``limit`` objects sharing a word or two with it.

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
    best = limit // SIDE_BEST_SHARE
    kept = {key for side in (vector_side, lexical_side) for key, _ in side[:best]}
    chosen = [f for f in fused if f.key in kept]
    for f in fused:
        if len(chosen) >= limit:
            break
        if f.key not in kept:
            chosen.append(f)
    chosen.sort(key=lambda f: (-f.rrf, -f.score))
    return chosen[:limit]


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
