"""Relevance features of search hits, and the calibrated ranking by them (issue 7).

Every search service ranks its candidates the same way: the index returns hybrid
candidates (vector and BM25 sides fused), then each hit gets the features of
:data:`projections.index.scoring.FEATURES` and is ordered by its calibrated
relevance, the probability-like ``relevance_score`` the caller sees.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from api.services.interpret import STOP, Interpretation, expand, interpret, singular
from projections.index.port import Hit, Kind
from projections.index.scoring import FEATURES, probabilities
from streams.documenter.graph import name_tokens
from streams.vocabulary import expand_abbreviations, words


@dataclass(frozen=True)
class Features:
    """One hit's relevance features (:data:`projections.index.scoring.FEATURES`)."""

    vector: float
    lexical: float
    name: float = 0.0
    coverage: float = 0.0
    gap: float = 0.0
    support: float = 0.0
    top: float = 0.0
    negated: float = 0.0
    """1 when the object's title names what the question rules out ("not Docker")."""

    def as_dict(self) -> dict[str, float]:
        return {f: getattr(self, f) for f in FEATURES}


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


_TOKEN = re.compile(r"[a-z0-9]+")
_NEGATION = re.compile(
    r"\b(?:not|without|no|except|excluding|instead of|other than|rather than|"
    r"isn't|aren't|don't|doesn't|never)\s+(?:(?:a|an|the|any|use|using|with|via|on|in|"
    r"through|run|running|have|having)\s+)*([a-z0-9][a-z0-9+.-]*)",
    re.IGNORECASE,
)


def negated_terms(query: str) -> frozenset[str]:
    """The words a question rules out: "without Docker", "not using systemd",
    "other than PostgreSQL" (singular, lower case)."""
    found = (m.group(1).lower().strip(".-") for m in _NEGATION.finditer(query))
    return frozenset(singular(w) for w in found if w and w not in STOP)


def _tokens(text: str) -> set[str]:
    return {singular(w) for w in _TOKEN.findall(text.lower()) if len(w) > 1 and w not in STOP}


def term_coverage(query: str, texts: Sequence[str]) -> list[float]:
    """For each text, the share of the query's words it contains, each word weighted by
    its rarity among ``texts`` (``log(1 + (n + 1) / (df + 0.5))``): a word every
    candidate has tells them apart less than one only the right one has, and a word no
    candidate has lowers every candidate's coverage (the question asks for more than
    is there)."""
    wanted = _tokens(query)
    if not wanted or not texts:
        return [0.0] * len(texts)
    have = [_tokens(t) & wanted for t in texts]
    n = len(texts)
    idf = {w: math.log(1 + (n + 1) / (sum(w in h for h in have) + 0.5)) for w in wanted}
    total = sum(idf.values())
    return [sum(idf[w] for w in h) / total for h in have]


def features(
    kind: Kind, query: str, hits: Sequence[Hit], meaning: Interpretation | None = None
) -> list[Features]:
    """The features of each hit of one query, in order (``meaning``: the query's
    interpretation, when the caller has it already)."""
    terms = query_terms(meaning or query)
    top = max((h.vector_score or 0.0 for h in hits), default=0.0)
    best = max(hits, key=lambda h: h.vector_score or 0.0, default=None)
    per_document = Counter(h.object.document_id for h in hits)
    coverage = term_coverage(query, [f"{h.object.title or ''} {h.object.text}" for h in hits])
    articles = kind == Kind.KB_CHUNK
    ruled_out = negated_terms(query)
    out = []
    for h, covered in zip(hits, coverage, strict=True):
        if h.vector_score is None:
            # No semantic evidence (the model is loading, or the object's vector has not
            # arrived): keyword evidence alone never makes a confident answer.
            out.append(Features(vector=0.0, lexical=h.lexical_score or 0.0))
            continue
        v = h.vector_score
        on_top = best is not None and h.object.document_id == best.object.document_id
        out.append(
            Features(
                vector=v,
                lexical=h.lexical_score or 0.0,
                name=name_match(terms, name_words(h, kind)),
                coverage=covered,
                gap=v - top if articles else 0.0,
                support=per_document[h.object.document_id] / len(hits) if articles else 0.0,
                top=float(on_top) if articles else 0.0,
                negated=float(bool(ruled_out & _tokens(h.object.title or h.object.symbol or ""))),
            )
        )
    return out


def ranked(
    kind: Kind, query: str, hits: Sequence[Hit], meaning: Interpretation | None = None
) -> list[tuple[Hit, float]]:
    """``(hit, calibrated relevance)``, best first (ties keep the index's order)."""
    rows = [f.as_dict() for f in features(kind, query, hits, meaning)]
    scored = list(zip(hits, probabilities(kind.value, rows), strict=True))
    return sorted(scored, key=lambda hs: -hs[1])
