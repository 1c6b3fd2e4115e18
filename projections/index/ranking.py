"""Ranking, top to bottom: what a question asks for, the features of each candidate,
and the calibrated relevance every search service ranks by.

1. **Interpretation** (seed 001's ``QueryInterpretation``): the query's concepts,
   expanded with singular/plural forms, the abbreviations schemas use and business
   synonyms. The expanded terms feed the lexical side of the search; the vector side
   embeds the question as asked.
2. **Features** of each candidate (:data:`FEATURES`): ``vector`` and ``lexical`` (the
   index's normalised similarity and keyword scores), their per-query forms
   ``vector_z`` (standard deviations above the mean similarity of the query's
   candidates) and ``lexical_share`` (the keyword score over the query's best one),
   whose scale does not move with the corpus, ``name`` (how well the object's
   own name and the query name each other), ``coverage`` (the share of the question's
   words the candidate holds, weighted by rarity among the candidates), ``negated``
   (its title names what the question rules out), and for articles ``gap``, ``support``
   and ``top`` (see :func:`features`).
3. **Calibration**: the weights fitted per kind (``calibration.json`` beside this
   module, written by ``make eval EVAL_ARGS=--fit`` from every labelled corpus; the
   numbers ``make eval`` reports are leave-one-corpus-out), and :func:`probabilities`,
   which turns one query's candidates into ``relevance_score`` values.

The calibrated relevance of a candidate is ``sigmoid(b0 + z + c * (z - max z))`` with
``z = sum(b_f * f)`` over its features and ``max z`` over its query's candidates: the
*lead* term lets the best candidate's score say how likely the best answer is right,
whatever the corpus's scale. For tables and code the best candidate's score comes from
a model of its own: its ``z`` and its **margin** over the best rival answer (a leader
far above the rest is right far more often than one level with the next), and the
other candidates keep their share of it (:func:`relevance`).

Articles have three more features: ``gap``, how far the hit's similarity falls below
the query's best one (it lowers the runners-up, never the best hit, so a query nothing
answers still scores low everywhere); ``support``, the share of the candidates that are
passages of the hit's article; and ``top``, 1 for the passages of the article holding
the most similar passage. Tables and code are fitted for *ranking* first (pairwise
logistic regression: which of two candidates of one query is the right one), then
mapped to a probability from ``z``, the lead and the leader's margin; articles are
fitted pointwise, because what matters there is the 0.7 threshold, not the order.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from projections.index.port import Hit, Kind
from streams.documenter.graph import name_tokens
from streams.memory.statements import RELATIONS
from streams.vocabulary import ABBREVIATIONS, DOMAINS, SYNONYMS, expand_abbreviations, words

# -- 1. interpretation ----------------------------------------------------------
STOP = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in",
        "is", "it", "me", "of", "on", "or", "show", "the", "to", "what", "where", "which",
        "who", "with", "do", "does", "data", "table", "tables", "find", "list", "all", "my",
        "we", "our", "each", "per", "their", "its", "that", "this", "there", "get", "can",
    }
)  # fmt: skip
_RELATIONAL = frozenset(
    {"join", "joins", "joined", "between", "relationship", "relationships", "related", "link",
     "linked", "connect", "connected", "relate", "relates"}
)  # fmt: skip
_FULL_OF: dict[str, str] = {}
for _abbr, _full in ABBREVIATIONS.items():
    _FULL_OF.setdefault(_full, _abbr)


@dataclass(frozen=True)
class Interpretation:
    concepts: tuple[str, ...]
    expanded_terms: tuple[str, ...]
    domain_hint: str | None
    is_relationship_query: bool

    def lexical_query(self, query: str) -> str:
        """The query text for keyword search: the question plus every expanded term."""
        return " ".join([query, *self.expanded_terms])


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")) and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def expand(concept: str) -> list[str]:
    base = singular(concept)
    out = [base, base + "s"] if base != concept else [base + "s"]
    full = ABBREVIATIONS.get(base)
    if full is not None:
        out += full.split()
    abbr = _FULL_OF.get(base)
    if abbr is not None:
        out.append(abbr)
    for term in SYNONYMS.get(base, ()):
        out += term.split()
        abbr = _FULL_OF.get(term)
        if abbr is not None:
            out.append(abbr)
    return out


def interpret(query: str, domain: str | None = None) -> Interpretation:
    """Concepts, expanded terms, domain hint and relationship flag of a query."""
    tokens = words(query)
    concepts = [w for w in dict.fromkeys(tokens) if w not in STOP and len(w) > 1]
    seen = set(concepts)
    expanded: list[str] = []
    for c in concepts:
        for term in expand(c):
            if term not in seen:
                seen.add(term)
                expanded.append(term)
    hint = domain
    if hint is None:
        votes = [DOMAINS[t] for t in [*concepts, *expanded] if t in DOMAINS]
        hint = max(set(votes), key=votes.count) if votes else None
    return Interpretation(
        concepts=tuple(concepts),
        expanded_terms=tuple(expanded),
        domain_hint=hint,
        is_relationship_query=bool(_RELATIONAL & set(tokens)),
    )


# -- 2. features ---------------------------------------------------------------
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
    vector_z: float = 0.0
    """``vector`` in standard deviations above the mean of the query's candidates."""
    lexical_share: float = 0.0
    """``lexical`` over the best keyword score among the query's candidates."""

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
    similar = [h.vector_score or 0.0 for h in hits]
    mean = sum(similar) / len(similar) if similar else 0.0
    spread = math.sqrt(sum((v - mean) ** 2 for v in similar) / len(similar)) if similar else 0.0
    best_lexical = max((h.lexical_score or 0.0 for h in hits), default=0.0)
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
                vector_z=(v - mean) / spread if spread > 1e-9 else 0.0,
                lexical_share=(h.lexical_score or 0.0) / best_lexical if best_lexical else 0.0,
            )
        )
    return out


def answer_key(hit: Hit, kind: Kind) -> str:
    """What one answer is: a code symbol (its chunks and ``@overload`` stubs answer once),
    a table, an article's passage."""
    o = hit.object
    if kind == Kind.CODE_CHUNK and o.symbol:
        return f"{o.repo}:{o.path}:{o.fully_qualified_name or o.symbol}"
    return o.chunk_id


def ranked(
    kind: Kind, query: str, hits: Sequence[Hit], meaning: Interpretation | None = None
) -> list[tuple[Hit, float]]:
    """``(hit, calibrated relevance)``, best first (ties keep the index's order)."""
    rows = [f.as_dict() for f in features(kind, query, hits, meaning)]
    keys = [answer_key(h, kind) for h in hits]
    scored = list(zip(hits, probabilities(kind.value, rows, keys), strict=True))
    return sorted(scored, key=lambda hs: -hs[1])


# -- 3. calibration ------------------------------------------------------------

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
"""The fitted calibration (``make eval EVAL_ARGS=--fit`` writes it): per kind, the
logistic weights of the relevance features, and what they were fitted on."""
FEATURES = (
    "vector", "lexical", "name", "coverage", "gap", "support", "top", "negated",
    "vector_z", "lexical_share",
)  # fmt: skip
"""The relevance features of a hit (see the module docstring). ``vector``, ``lexical``
and ``name`` depend on the hit and the query alone; the others on the query's other
candidates too."""


@functools.cache
def calibration() -> dict[str, dict[str, float]]:
    """``{kind: {"intercept": b0, "vector": bv, ...}}`` from :data:`CALIBRATION_FILE`."""
    data: dict[str, Any] = json.loads(CALIBRATION_FILE.read_text())
    return {kind: {k: float(v) for k, v in fit.items()} for kind, fit in data["kinds"].items()}


def probabilities(
    kind: str, rows: Sequence[Mapping[str, float]], keys: Sequence[str] | None = None
) -> list[float]:
    """The calibrated relevance of each of one query's candidates (``keys``: what answer
    each candidate is, so that two chunks of one symbol are not each other's rival;
    default: every candidate its own answer). See :func:`relevance`."""
    w = calibration()[kind]
    z = [sum(w.get(f, 0.0) * row.get(f, 0.0) for f in FEATURES) for row in rows]
    return relevance(w, z, keys)


def margin(z: Sequence[float], keys: Sequence[str] | None, cap: float) -> float:
    """How far the best candidate's ranking score stands above the best *other* answer's
    (at most ``cap``; ``cap`` when no other answer competes)."""
    if not z:
        return 0.0
    best = max(range(len(z)), key=lambda i: z[i])
    rivals = [v for i, v in enumerate(z) if i != best and (keys is None or keys[i] != keys[best])]
    return min(cap, z[best] - max(rivals)) if rivals else cap


def _sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def relevance(
    w: Mapping[str, float], z: Sequence[float], keys: Sequence[str] | None = None
) -> list[float]:
    """One query's probabilities from its candidates' ranking scores ``z`` (the weighted
    sums of their features) and the weights ``w`` of the kind.

    Each candidate's is ``sigmoid(intercept + z + lead_weight * (z - max z))``: the
    others fall away from the query's best by how far below it they stand, on any corpus.
    Kinds fitted for ranking (tables, code) also say how likely the **best** answer is
    right from how clearly it leads: ``sigmoid(top_intercept + top_z * max z +
    top_margin * margin)`` (:func:`margin`; a leader far above every rival is right more
    often than one tied with the next), fitted on the queries' best candidates alone; the
    other candidates keep their share of the best one's score, so the order is the
    ranking score's.
    """
    if not z:
        return []
    best = max(z)
    lead = w.get("lead", 0.0)
    scores = [_sigmoid(w["intercept"] + v + lead * (v - best)) for v in z]
    if "top_margin" not in w:
        return scores
    leader = _sigmoid(
        w["top_intercept"] + w["top_z"] * best
        + w["top_margin"] * margin(z, keys, w["top_margin_cap"])
    )  # fmt: skip
    scale = leader / scores[z.index(best)]
    return [min(1.0, s * scale) for s in scores]


# -- 4. facts ------------------------------------------------------------------

RELATION_CUES: dict[str, frozenset[str]] = {
    relation: frozenset(cues.split())
    for relation, cues in {
        "lives_in": "live lives living home city town based reside resides moved move",
        "located_in": "located based headquarters headquartered office offices where",
        "works_at": "work works working employer company employed job firm",
        "role": "role title job position",
        "email": "email e-mail mail address",
        "phone": "phone number call mobile cell reach ring",
        "manager": "manager boss report reports supervisor lead",
        "colleague": "colleague coworker co-worker teammate",
        "billing_contact": "billing invoice invoices invoicing finance",
        "contact": "contact point",
        "uses": "use uses using tool platform provider warehouse crm processor stack run "
        "software system gateway host database",
        "plan": "plan tier subscription package",
        "team_size": "team size people many headcount employees staff big large",
        "prefers": "prefer prefers preference preferred contacted like likes",
        "owns": "own owns device car printer laptop phone",
        "language": "language speak speaks",
        "timezone": "timezone time zone",
        "budget": "budget spend",
        "birthday": "birthday born",
    }.items()
}
"""The words a question uses to ask for a relation ("where does Priya live" → lives_in)."""
ANSWER_KINDS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), frozenset(kinds.split()))
    for pattern, kinds in (
        (r"\bhow (?:many|big|large)\b", "quantity"),
        (r"\bhow much\b", "quantity"),
        (r"\b(?:which|what) (?:city|town|country|suburb|region|area|place|office)\b|\bwhere\b",
         "place"),
        (r"\b(?:which|what) (?:company|employer|firm|agency|club|organi[sz]ation|business)\b",
         "organization"),
        (r"\b(?:which|what) (?:plan|tier|subscription|package|membership)\b", "plan"),
        (r"\b(?:e-?mail|phone|number|mobile|reach|call|text)\b", "contact"),
        (r"\bwho(?:m|se)?\b", "person"),
        (r"\bwhen\b|\bbirthday\b", "date"),
    )
)  # fmt: skip
"""What kind of value a question asks for ("who" a person, "where" a place, …); the
first that matches counts."""
FACT_WEIGHTS = {"vector": 1.0, "relation": 0.35, "names": 0.25, "kind": 0.3}
"""How a fact's relevance to a question is made of its parts (see :func:`fact_relevance`)."""


def fact_text(source: str | None, relation: str, target: str | None) -> str:
    """A fact as words, for embedding and keyword matching: "Priya Raman lives in Bristol"."""
    return f"{source or ''} {relation.replace('_', ' ')} {target or ''}".strip()


QUESTION_RELATIONS_FILE = Path(__file__).with_name("question_relations.json")
"""Which relation a question asks for, from its embedding: a multinomial logistic model
fitted on the questions of the memory train split (``python -m bench.eval.memory_fit``)."""


@functools.cache
def _question_relations() -> tuple[tuple[str, ...], Any, Any] | None:
    """The question model's classes, weights (classes x dims) and biases."""
    if not QUESTION_RELATIONS_FILE.exists():
        return None
    import numpy as np

    data = json.loads(QUESTION_RELATIONS_FILE.read_text())
    weights = np.asarray(data["weights"], dtype=np.float64)
    return tuple(data["classes"]), weights, np.asarray(data["bias"], dtype=np.float64)


def asked_relations(vector: Sequence[float] | None) -> dict[str, float]:
    """The probability that a question (its embedding) asks for each fact relation
    ("Who employs Marta these days?" → ``works_at``); empty without a vector or a model."""
    model = _question_relations()
    if model is None or vector is None:
        return {}
    import numpy as np

    classes, weights, bias = model
    given = np.asarray(vector, dtype=np.float64)[: weights.shape[1]]
    scores = (bias + weights[:, : len(given)] @ given).tolist()
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return {c: e / total for c, e in zip(classes, exps, strict=True)}


ASKED_FLOOR = 0.4
"""What is left of a fact's relevance when the question model says its relation is not
asked for at all (chosen on the train splits, each scored with a question model fitted
on the other: answered first 0.463 -> 0.577 and 0.604 -> 0.615; 0.6 and 0.2 were
tried)."""


@functools.lru_cache(maxsize=1024)
def _singulars(tokens: tuple[str, ...]) -> frozenset[str]:
    return frozenset(singular(w) for w in tokens)


@functools.lru_cache(maxsize=256)
def _read_question(question: str) -> tuple[frozenset[str], frozenset[str] | None]:
    """A question's words (singular) and the kinds of value it asks for (None: any),
    read once for all the facts it is matched against."""
    wanted = next((kinds for p, kinds in ANSWER_KINDS if p.search(question)), None)
    return _singulars(tuple(words(question))), wanted


def fact_relevance(
    question: str,
    source: str | None,
    relation: str,
    target: str | None,
    similarity: float,
    asked_for: Mapping[str, float] | None = None,
) -> float:
    """How well one fact answers ``question`` (at most 1): the semantic ``similarity`` of
    question and fact text, whether the question asks for this relation (its words name
    it, or ``asked_for``, :func:`asked_relations` of its embedding, says so), the share of
    the fact's subject words the question names, and whether the fact's value is of the
    kind the question asks for (a "who" question and a place lose). With ``asked_for``,
    a fact of a relation the question is unlikely to ask for keeps only part of its
    score (:data:`ASKED_FLOOR`), so the turn that says the answer can come first."""
    asked, wanted = _read_question(question)
    cues = _singulars(tuple(RELATION_CUES.get(relation, frozenset(relation.split("_")))))
    subject = _singulars(tuple(w for w in words(source or "") if w not in STOP))
    named = len(asked & subject) / len(subject) if subject else 0.0
    cue = 1.0 if asked & cues else 0.0
    relation_asked = max(cue, (asked_for or {}).get(relation, 0.0))
    kind = RELATIONS.get(relation)
    kind_fits = 0.0 if wanted is None or kind is None else (1.0 if kind in wanted else -1.0)
    total = sum(FACT_WEIGHTS.values())
    score = (
        FACT_WEIGHTS["vector"] * max(0.0, similarity)
        + FACT_WEIGHTS["relation"] * relation_asked
        + FACT_WEIGHTS["names"] * named
        + FACT_WEIGHTS["kind"] * kind_fits
    )
    if asked_for:  # a fact of a relation the question does not ask for yields to the turns
        score *= ASKED_FLOOR + (1 - ASKED_FLOOR) * asked_for.get(relation, cue)
    return round(score / total, 4)


RECENCY = 1.0
"""How much more the last turn of a conversation weighs than its first, for the same
similarity: what was said last is what holds now (chosen on the train splits, each
scored with a question model fitted on the other: answered first 0.517 -> 0.56-0.57 and
0.665 -> 0.70, a stale value first 70 -> 35 and 23 -> 14; 0.5, 0.8 and 1.2 were tried)."""


def recency(when: datetime | None, first: datetime, last: datetime) -> float:
    """Where ``when`` falls between a conversation's ``first`` and ``last`` turns (0 to 1;
    0 when unknown, 1 in a conversation of one moment)."""
    if when is None:
        return 0.0
    return (when - first) / (last - first) if last > first else 1.0


FACT_SHARE = 0.7
"""What a fact's relevance counts for among the turns (:func:`answer_relevance`): a fact
that names the relation, the subject and the kind of value asked for still ranks above
the turn it came from, and a turn that says a newer value can rank above a fact the
reader did not see replaced (chosen with 7 train splits, each conversation read and
answered by models fitted without it: answered first 0.626 -> 0.649, a stale value first
112 -> 78; 1.0, 0.9, 0.8 and 0.5 were tried)."""


def answer_relevance(relevance: float, recency: float = 0.0) -> float:
    """A fact's relevance (:func:`fact_relevance`) on the scale it shares with turns in
    one list of answers: :data:`FACT_SHARE` of it, lifted by when it was stated as a
    turn is (``recency`` of its ``valid_from``, up to :data:`RECENCY`)."""
    return round(relevance * FACT_SHARE * (1 + RECENCY * min(1.0, max(0.0, recency))), 4)


def episode_relevance(similarity: float, recency: float = 0.0) -> float:
    """An episode's relevance to a question on the scale of :func:`fact_relevance`: its
    semantic similarity, so a fact that names the relation, the subject and the kind of
    value asked for ranks above the turn it came from, and a fact of the wrong kind ranks
    below it; ``recency`` (0 for the conversation's first turn, 1 for its last, as of the
    question) lifts later turns by up to :data:`RECENCY`."""
    score = FACT_WEIGHTS["vector"] * max(0.0, similarity) / sum(FACT_WEIGHTS.values())
    return round(score * (1 + RECENCY * min(1.0, max(0.0, recency))), 4)
