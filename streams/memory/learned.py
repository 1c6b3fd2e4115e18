"""Statements read by a model fitted on labelled conversations, beside the patterns.

The patterns of :mod:`streams.memory.statements` know the phrasings they were written
from; this reader generalises from examples instead. Two small logistic models over
spaCy's parse, fitted on the train split of ``tests/eval/memory`` (``python -m
bench.eval.memory_fit``) and shipped as ``learned_model.json`` beside this file:

* **what is stated**: every candidate value of a user line (named entities, noun
  phrases, emails and phone numbers) gets a relation or ``none`` from its syntax: the
  words that govern it, its preposition, the subject of its verb ("my *email* is …"),
  its neighbours and its kind;
* **about whom**: each value's possible subjects (the speaker, their organisation, the
  people and organisations named in the line or just before) are scored by how they
  stand to it: who governs it, which pronoun the clause uses, which name precedes it,
  whether an email spells the name.

A statement is kept when both probabilities multiplied reach the model's ``gate``
(chosen by cross-validation on the train split, never on the test split). Inference is
a sparse dot product: no fitting library at run time.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streams.memory.statements import full_name

MODEL_PATH = Path(__file__).with_name("learned_model.json")

WINDOW = 15
"""Tokens either side of a value (within its sentence) whose words are its context."""
REACH = 40
"""Tokens from a value within which a name of the line can be its subject."""
MAX_CANDIDATES = 200
"""Candidate values read per line: a hostile run of names costs a bounded time."""

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"\+?\(?\d[\d ()-]{5,18}\d")
_SKIPPED_ENTITIES = frozenset({"DATE", "TIME", "ORDINAL", "PERCENT"})
_LEADING = frozenset({"new", "old", "current", "own"})
_FIRST = frozenset({"i", "me", "my", "myself", "mine"})
_WE = frozenset({"we", "our", "us", "ours"})
_HESHE = frozenset({"he", "she", "his", "her", "him", "hers"})
_THEY = frozenset({"they", "their", "them", "there"})

Features = dict[str, float]


@dataclass
class Context:
    """Who a line's words can point at: the speaker, their organisation, and the
    people (full names) and organisations named so far, most recent last."""

    speaker: str
    organisation: str | None = None
    people: list[str] = field(default_factory=list)
    organisations: list[str] = field(default_factory=list)

    def person(self, name: str) -> str:
        """A first name as the full name it stands for, when one was seen."""
        return full_name(name, self.speaker, self.people)

    def see(self, doc: Any) -> None:
        """Remember the people and organisations a parsed line names."""
        for ent in doc.ents:
            name = _name(ent.text)
            if ent.label_ == "PERSON" and " " in name:
                if name in self.people:
                    self.people.remove(name)
                self.people.append(name)
            elif ent.label_ == "ORG" and name:
                self.organisations.append(name)


def _name(text: str) -> str:
    return re.sub(r"(?:'s|\u2019s)$", "", text.strip())


def candidates(doc: Any) -> list[tuple[Any, frozenset[str]]]:
    """The spans of ``doc`` that could be a stated value, each with where it came from
    (``ent:LABEL``, ``nc`` a noun phrase without its determiner, ``re`` an email or a
    phone number, ``propn`` a run of proper nouns)."""
    found: dict[tuple[int, int], tuple[Any, set[str]]] = {}

    def add(span: Any, source: str) -> None:
        if span is not None and len(span):
            found.setdefault((span.start_char, span.end_char), (span, set()))[1].add(source)

    for ent in doc.ents:
        if ent.label_ not in _SKIPPED_ENTITIES:
            add(ent, f"ent:{ent.label_}")
    for chunk in doc.noun_chunks:
        span = chunk
        while len(span) and (
            span[0].pos_ in ("DET", "PRON", "PUNCT") or span[0].lower_ in _LEADING
        ):
            span = span[1:]
        add(span, "nc")
    for pattern in (_EMAIL, _PHONE):
        for m in pattern.finditer(doc.text):
            add(doc.char_span(m.start(), m.end(), alignment_mode="expand"), "re")
    run: list[Any] = []
    for token in [*doc, None]:
        if token is not None and (
            token.pos_ == "PROPN" or (run and (token.is_title or token.like_num))
        ):
            run.append(token)
            continue
        if run:
            add(doc[run[0].i : run[-1].i + 1], "propn")
        run = []
    return [(span, frozenset(sources)) for span, sources in found.values()][:MAX_CANDIDATES]


def _lemma(token: Any) -> str:
    return str(token.lemma_ or token.lower_).lower()


def relation_features(span: Any, sources: frozenset[str], doc: Any) -> Features:
    """What says which relation a candidate value stands in, if any."""
    f: Features = {f"src={s}": 1.0 for s in sources}
    root, head = span.root, span.root.head
    text = span.text
    f[f"root_lemma={_lemma(root)}"] = 1.0
    f[f"root_dep={root.dep_}"] = 1.0
    f[f"ntok={min(len(span), 4)}"] = 1.0
    f["shape:digit"] = float(any(c.isdigit() for c in text))
    f["shape:at"] = float("@" in text)
    f["shape:title"] = float(text[:1].isupper())
    f["shape:allnum"] = float(bool(re.fullmatch(r"[\d ()+-]+", text)))
    f["shape:money"] = float(bool(re.search(r"[£$€₹¥]|\blakh\b|\bk\b", text)))
    f[f"head_lemma={_lemma(head)}"] = 1.0
    f[f"head_pos={head.pos_}"] = 1.0
    f[f"dep+head={root.dep_}:{_lemma(head)}"] = 1.0
    if root.dep_ == "pobj":
        f[f"prep={head.lower_}"] = 1.0
        f[f"prep+gov={head.lower_}:{_lemma(head.head)}"] = 1.0
        f[f"gov={_lemma(head.head)}"] = 1.0
    if root.dep_ in ("attr", "dobj", "appos", "npadvmod", "oprd") or head.pos_ in ("AUX", "VERB"):
        for child in head.children:
            if child.dep_ in ("nsubj", "nsubjpass") and child.i != root.i:
                f[f"vsubj={_lemma(child)}"] = 1.0
                for g in child.children:
                    if g.dep_ == "poss":
                        f[f"vsubj_poss={g.lower_}"] = 1.0
                    if g.dep_ in ("amod", "compound"):
                        f[f"vsubj_mod={_lemma(g)}"] = 1.0
    if root.dep_ == "appos":
        f[f"appos_of={_lemma(head)}"] = 1.0
        for g in head.children:
            if g.dep_ == "poss":
                f[f"appos_poss={g.lower_}"] = 1.0
    for child in root.children:
        if child.dep_ == "poss":
            f[f"poss={child.lower_}"] = 1.0
        if child.dep_ in ("amod", "compound") and child.i < span.start:
            f[f"mod={_lemma(child)}"] = 1.0
        if child.dep_ == "appos":
            f[f"has_appos={_lemma(child)}"] = 1.0
    for k in range(1, 4):
        if span.start - k >= 0:
            word = _lemma(doc[span.start - k])
            f[f"L{k}={word}"] = 1.0
            f[f"Lbag={word}"] = 1.0
    for k in range(2):
        if span.end + k < len(doc):
            f[f"R{k + 1}={_lemma(doc[span.end + k])}"] = 1.0
    sent = span.sent
    for token in doc[max(sent.start, span.start - WINDOW) : min(sent.end, span.end + WINDOW)]:
        if not token.is_punct and not span.start <= token.i < span.end:
            f[f"sbag={_lemma(token)}"] = 0.3
    node, path = root, list[str]()
    while node.head.i != node.i and len(path) < 4:
        path.append(node.dep_)
        node = node.head
        if node.pos_ in ("VERB", "AUX"):
            break
    f[f"path={'/'.join(path)}"] = 1.0
    f[f"path+verb={'/'.join(path)}:{_lemma(node)}"] = 1.0
    return f


def _pronoun(word: str) -> str | None:
    w = word.lower()
    for kind, words in (("first", _FIRST), ("we", _WE), ("heshe", _HESHE), ("they", _THEY)):
        if w in words:
            return kind
    return None


Subject = tuple[str, str, Any]
"""(kind, name, the entity span naming it in this line or None)."""


def subject_candidates(span: Any, doc: Any, ctx: Context) -> list[Subject]:
    """Whom a value can be about: the speaker, their organisation, the people and
    organisations the line names (not the value itself), the last two named before."""
    found: list[Subject] = [("speaker", ctx.speaker, None)]
    organisation = ctx.organisation or (ctx.organisations[0] if ctx.organisations else None)
    if organisation:
        found.append(("org", organisation, None))
    for ent in doc.ents:
        if (ent.start < span.end and span.start < ent.end) or abs(ent.start - span.start) > REACH:
            continue
        if ent.label_ == "PERSON":
            name = ctx.person(_name(ent.text))
            if name != ctx.speaker:
                found.append(("person_here", name, ent))
        elif ent.label_ == "ORG":
            found.append(("org_here", _name(ent.text), ent))
    named = {name for _, name, _ in found}
    for kind, recent in (("person_prev", ctx.people[-2:]), ("org_prev", ctx.organisations[-2:])):
        for name in reversed(recent):
            if name not in named:
                found.append((kind, name, None))
                named.add(name)
    return found


def _ancestors(token: Any, n: int) -> Iterator[Any]:
    for _ in range(n):
        if token.head.i == token.i:
            return
        token = token.head
        yield token


def subject_features(span: Any, doc: Any, relation: str, subject: Subject) -> Features:
    """How a possible subject stands to a value stated in ``relation``."""
    kind, name, ent = subject
    f: Features = {f"type={kind}": 1.0, f"type+rel={kind}:{relation}": 1.0}
    sent = span.sent
    for token in reversed(doc[max(sent.start, span.start - 2 * WINDOW) : span.start]):
        pronoun = _pronoun(token.text)
        if pronoun:
            f[f"pron+type={pronoun}:{kind}"] = 1.0
            f[f"pron+type+rel={pronoun}:{kind}:{relation}"] = 1.0
            break
    for node in [span.root, *_ancestors(span.root, 3)]:
        for child in node.children:
            if (
                child.dep_ in ("poss", "nsubj", "nsubjpass")
                and not span.start <= child.i < span.end
            ):
                pronoun = _pronoun(child.text)
                if pronoun:
                    f[f"gov_pron+type={pronoun}:{kind}"] = 1.0
                if ent is not None and ent.start <= child.i < ent.end:
                    f[f"cand_is_gov_{child.dep_}"] = 1.0
                    f[f"cand_is_gov+rel={relation}"] = 1.0
        if ent is not None and ent.start <= node.i < ent.end:
            f["cand_is_ancestor"] = 1.0
            f[f"cand_anc+dep={span.root.dep_}"] = 1.0
    if ent is not None:
        if span.start <= ent.root.head.i < span.end:
            f["span_is_head_of_cand"] = 1.0
        f["same_sent"] = float(ent.sent.start == sent.start)
        gap = span.start - ent.end
        where = (
            "adj"
            if 0 <= gap <= 1
            else "near"
            if 0 <= gap <= 4
            else "before"
            if gap > 0
            else "after"
        )
        f[f"dist={where}"] = 1.0
        f[f"dist+rel={'before' if gap >= 0 else 'after'}:{relation}"] = 1.0
        between = doc[ent.end : span.start] if gap > 0 else doc[span.end : ent.start]
        words = [t.lower_ for t in between][:3]
        for word in words:
            f[f"between={word}"] = 1.0
        if len(words) <= 2:
            f[f"between_seq={'_'.join(words)}"] = 1.0
        nearer = (
            e
            for e in doc.ents
            if e.label_ == ent.label_ and ent.end <= e.start and e.end <= span.start
        )
        if gap >= 0 and next(nearer, None) is None:
            f["nearest_before"] = 1.0
    value = span.text.lower()
    if "@" in value:
        words = [w.lower() for w in re.findall(r"\w+", name) if len(w) > 2]
        local, _, domain = value.partition("@")
        if any(w in local for w in words):
            f["email_has_name"] = 1.0
        if any(w in domain for w in words):
            f["email_domain_name"] = 1.0
    return f


@dataclass(frozen=True)
class Reading:
    """One statement the model reads: subject, relation, the value's span and how sure."""

    subject: str
    relation: str
    span: Any
    p_relation: float
    p_subject: float
    subject_kind: str = "person"

    @property
    def object(self) -> str:
        return str(self.span.text).strip()

    @property
    def probability(self) -> float:
        return self.p_relation * self.p_subject


@dataclass(frozen=True)
class Model:
    """The fitted weights: a multinomial model over relations (``none`` among them)
    and a binary one over (value, subject) pairs."""

    classes: tuple[str, ...]
    relation_weights: dict[str, list[float]]
    relation_bias: list[float]
    subject_weights: dict[str, float]
    subject_bias: float
    gate: float
    fitted_on: str = ""

    def relation(self, features: Features) -> tuple[str, float]:
        """The likeliest relation other than ``none``, and its probability."""
        scores = list(self.relation_bias)
        for name, value in features.items():
            weights = self.relation_weights.get(name)
            if weights is not None:
                for k, w in enumerate(weights):
                    scores[k] += w * value
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        best = max((k for k, c in enumerate(self.classes) if c != "none"), key=exps.__getitem__)
        return self.classes[best], exps[best] / total

    def subject(self, features: Features) -> float:
        z = self.subject_bias + sum(
            self.subject_weights.get(name, 0.0) * value for name, value in features.items()
        )
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {
            "fitted_on": self.fitted_on,
            "gate": self.gate,
            "relation": {
                "classes": list(self.classes),
                "bias": self.relation_bias,
                "weights": self.relation_weights,
            },
            "subject": {"bias": self.subject_bias, "weights": self.subject_weights},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Model:
        return cls(
            classes=tuple(data["relation"]["classes"]),
            relation_weights=data["relation"]["weights"],
            relation_bias=data["relation"]["bias"],
            subject_weights=data["subject"]["weights"],
            subject_bias=data["subject"]["bias"],
            gate=data["gate"],
            fitted_on=data.get("fitted_on", ""),
        )


@functools.cache
def shipped_model() -> Model | None:
    """The model shipped beside this module, or None when it is absent."""
    if not MODEL_PATH.exists():
        return None
    return Model.from_json(json.loads(MODEL_PATH.read_text()))


def read(doc: Any, ctx: Context, model: Model, gate: float | None = None) -> list[Reading]:
    """The statements of one parsed line at or above ``gate`` (the model's own when
    None), one per value: overlapping candidates keep the likelier."""
    threshold = model.gate if gate is None else gate
    scored: list[tuple[float, Any, str]] = []
    for span, sources in candidates(doc):
        relation, p = model.relation(relation_features(span, sources, doc))
        if p >= threshold:
            scored.append((p, span, relation))
    scored.sort(key=lambda x: -x[0])
    taken: list[tuple[int, int]] = []
    readings: list[Reading] = []
    for p, span, relation in scored:
        if any(span.start < end and start < span.end for start, end in taken):
            continue
        taken.append((span.start, span.end))
        subjects = subject_candidates(span, doc, ctx)
        ps = [model.subject(subject_features(span, doc, relation, s)) for s in subjects]
        best = max(range(len(subjects)), key=ps.__getitem__)
        kind, name, _ = subjects[best]
        subject_kind = "organization" if kind.startswith("org") else "person"
        reading = Reading(name, relation, span, p, ps[best], subject_kind)
        if reading.probability >= threshold:
            readings.append(reading)
        if relation == "works_at" and reading.subject == ctx.speaker and not ctx.organisation:
            ctx.organisation = reading.object
    return readings


def lines_read(docs: Sequence[Any], ctx: Context, model: Model) -> list[list[Reading]]:
    """Each parsed line of one conversation read in order, the context carried along."""
    out = []
    for doc in docs:
        out.append(read(doc, ctx, model))
        ctx.see(doc)
    return out
