"""Relevance features of search hits, and the calibrated ranking by them (issue 7).

Every search service ranks its candidates the same way: the index returns hybrid
candidates (vector and BM25 sides fused), then each hit gets the features of
:data:`projections.index.scoring.FEATURES` and is ordered by its calibrated
relevance, the probability-like ``relevance_score`` the caller sees.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from api.services.interpret import STOP, Interpretation, expand, interpret, singular
from projections.index.port import Hit, Kind
from projections.index.scoring import calibrated
from streams.documenter.graph import name_tokens
from streams.vocabulary import expand_abbreviations, words


@dataclass(frozen=True)
class Features:
    vector: float
    lexical: float
    name: float = 0.0
    gap: float = 0.0
    support: float = 0.0

    def as_list(self) -> list[float]:
        return [self.vector, self.lexical, self.name, self.gap, self.support]


@dataclass(frozen=True)
class QueryTerms:
    """A query's concepts, each with the words that name it (itself, singular and
    plural, abbreviation and synonyms)."""

    concepts: tuple[frozenset[str], ...]

    @property
    def words(self) -> frozenset[str]:
        return frozenset().union(*self.concepts)


def query_terms(query: str | Interpretation) -> QueryTerms:
    meaning = interpret(query) if isinstance(query, str) else query
    return QueryTerms(
        tuple(
            frozenset(singular(w) for t in [c, *expand(c)] for w in t.split())
            for c in meaning.concepts
        )
    )


def name_words(hit: Hit, kind: Kind) -> frozenset[str]:
    """The words of an object's own name: a code symbol, a table name spelled out."""
    obj = hit.object
    if kind == Kind.CODE_CHUNK:
        return frozenset(singular(w) for w in words(obj.symbol) if len(w) > 1)
    if kind == Kind.TABLE_DOC:
        table = (obj.fully_qualified_name or obj.title or "").rsplit(".", 1)[-1]
        tokens = name_tokens(table)
        return frozenset(singular(w) for w in [*tokens, *expand_abbreviations(tokens)])
    return frozenset(singular(w) for w in words(obj.title or "") if w not in STOP)


def name_match(terms: QueryTerms, name: frozenset[str]) -> float:
    """How well the object's name and the query name each other: the harmonic mean of
    the share of the name's words the query uses and the share of the query's concepts
    the name covers (0 when either is empty)."""
    if not name or not terms.concepts:
        return 0.0
    precision = len(name & terms.words) / len(name)
    recall = sum(1 for c in terms.concepts if c & name) / len(terms.concepts)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def features(kind: Kind, query: str | Interpretation, hits: Sequence[Hit]) -> list[Features]:
    """The features of each hit of one query, in order."""
    terms = query_terms(query)
    top = max((h.vector_score or 0.0 for h in hits), default=0.0)
    per_document = Counter(h.object.document_id for h in hits)
    articles = kind == Kind.KB_CHUNK
    out = []
    for h in hits:
        if h.vector_score is None:
            # No semantic evidence (the model is loading, or the object's vector has not
            # arrived): keyword evidence alone never makes a confident answer.
            out.append(Features(vector=0.0, lexical=h.lexical_score or 0.0))
            continue
        v = h.vector_score
        out.append(
            Features(
                vector=v,
                lexical=h.lexical_score or 0.0,
                name=name_match(terms, name_words(h, kind)),
                gap=v - top if articles else 0.0,
                support=per_document[h.object.document_id] / len(hits) if articles else 0.0,
            )
        )
    return out


def ranked(kind: Kind, query: str | Interpretation, hits: Sequence[Hit]) -> list[tuple[Hit, float]]:
    """``(hit, calibrated relevance)``, best first (ties keep the index's order)."""
    scored = [
        (h, calibrated(kind.value, f.vector, f.lexical, f.name, f.gap, f.support))
        for h, f in zip(hits, features(kind, query, hits), strict=True)
    ]
    return sorted(scored, key=lambda hs: -hs[1])
