"""The local extraction rules: deterministic, no model, the ``local`` provider's answer.

Identifiers (order numbers, emails, ticket ids, street addresses), a configurable
gazetteer, person names (introductions, greetings, known first names), capitalised
noun phrases (low confidence: dropped at the default ``min_confidence``), first-person
statements of the user (``I live at …``, ``my email is …``) and "X is/has/uses Y".
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from streams.memory.english import english_doc
from streams.memory.extraction import ExtractedEntity, ExtractedRelationship, ExtractionOutput
from streams.memory.learned import Context, Reading, read, shipped_model
from streams.memory.names import FIRST_NAMES
from streams.memory.statements import (
    CHANGE,
    NEGATED,
    RELATIONS,
    SINGLE_VALUED,
    Scope,
    introduced_name,
    replaced_value,
    statements,
)
from streams.memory.succession import holders_of, people_in, successions

_ORDER = re.compile(r"#\s?([A-Z]{1,3}-?\d{3,})\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_TICKET = re.compile(r"\b(?:TCK|TKT|INC)-\d{2,}\b")
_ADDRESS = re.compile(
    r"\b\d{1,5}(?: [A-Z][a-z]+)+ (?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Drive|Dr|Way)\b"
)
_CAPS = re.compile(r"\b[A-Z][a-zA-Z'-]+(?: [A-Z][a-zA-Z'-]+)+\b")
_INTRO = re.compile(
    r"\b(?:[Mm]y name is|I am|I'm|[Cc]all me|this is)\s+([A-Z][a-z]+(?: [A-Z][a-z]+)?)"
)
_GREETING = re.compile(r"\b(?:Hi|Hello|Hey|Thanks|Thank you|Dear|Sorry),? ([A-Z][a-z]+)\b")
_STOP = {"I", "Hi", "Hello", "Hey", "Thanks", "Thank", "The", "A", "An", "My", "Your", "Our",
         "Could", "Can", "Please", "Yes", "No", "Sure", "Ok", "Okay", "Great", "We", "It",
         "This", "That", "User", "Agent", "Also", "And", "But", "So", "Dear", "Sorry"}  # fmt: skip

# (what a User line says right before a mention, the relation from the speaker to it)
_FIRST_PERSON: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)\b(?:I live at|I moved to|I now live at|my (?:new )?address is)\s+$"),
     "lives_at"),
    (re.compile(r"(?i)\bI work (?:at|for)\s+$"), "works_at"),
    (re.compile(r"(?i)\bmy (?:new )?email(?: address)? is\s+$"), "email"),
    (re.compile(r"(?i)\bI (?:also )?(?:ordered|bought|purchased)\s+(?:a |an |the )?$"), "ordered"),
    (re.compile(r"(?i)\bI (?:use|am using|have been using)\s+(?:a |an |the |my )?$"), "uses"),
    (re.compile(r"(?i)\bI(?:'m| am) on\s+(?:a |an |the )?$"), "plan"),
    (re.compile(r"(?i)\bmy order\s+$"), "placed"),
)  # fmt: skip
_BETWEEN = re.compile(r"^\s+(is|has|uses|contains|includes|is for|was for)\s+(?:a |an |the )?$")
_VERB = {"is": "is_a", "has": "has", "uses": "uses", "contains": "contains",
         "includes": "contains", "is for": "contains", "was for": "contains"}  # fmt: skip


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    entity: ExtractedEntity


def _mentions(text: str, gazetteer: dict[str, str]) -> list[Mention]:
    found: list[Mention] = []

    def add(span: tuple[int, int], name: str, kind: str, confidence: str = "high") -> None:
        if any(f.start < span[1] and span[0] < f.end for f in found):
            return  # an earlier (more specific) rule already claimed this text
        entity = ExtractedEntity.model_validate(
            {"name": name, "entity_type": kind, "confidence": confidence}
        )
        found.append(Mention(span[0], span[1], entity))

    for m in _ORDER.finditer(text):
        add(m.span(), f"#{m.group(1)}", "order")
    for m in _EMAIL.finditer(text):
        add(m.span(), m.group(0).lower(), "email")
    for m in _TICKET.finditer(text):
        add(m.span(), m.group(0), "issue")
    for m in _ADDRESS.finditer(text):
        add(m.span(), m.group(0), "address")
    for name, kind in sorted(gazetteer.items(), key=lambda kv: -len(kv[0])):
        for m in re.finditer(rf"(?i)\b{re.escape(name)}\b", text):
            add(m.span(), name, kind)
    for m in _INTRO.finditer(text):
        add(m.span(1), m.group(1), "person", "high")
    for m in _GREETING.finditer(text):
        if m.group(1) in FIRST_NAMES:
            add(m.span(1), m.group(1), "person", "medium")
    for m in _CAPS.finditer(text):
        words = m.group(0).split(" ")
        while words and words[0] in _STOP:
            words = words[1:]
        if len(words) < 2:
            if len(words) == 1 and words[0] in FIRST_NAMES:
                start = m.end() - len(words[0])
                add((start, m.end()), words[0], "person", "medium")
            continue
        phrase = " ".join(words)
        start = m.end() - len(phrase)
        kind, confidence = ("person", "medium") if words[0] in FIRST_NAMES else ("concept", "low")
        add((start, m.end()), phrase, kind, confidence)
    return sorted(found, key=lambda f: f.start)


def _lines(content: str, speaker: str | None = None) -> list[tuple[str, str]]:
    """(role, text) pairs: ``user`` for what the user or the named ``speaker`` said,
    ``agent``; a system event's content is one ``system`` line."""
    out: list[tuple[str, str]] = []
    named = f"{speaker}: " if speaker else None
    for line in content.splitlines():
        role, sep, rest = line.partition(": ")
        if named is not None and line.startswith(named):  # a name may hold ": " itself
            out.append(("user", line[len(named) :]))
        elif sep and role in ("User", "Agent"):
            out.append(("agent" if role == "Agent" else "user", rest))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n{line}")
        else:
            out.append(("system", line))
    return out


SPEAKER = "speaker"
"""The attribute that marks the entity a conversation's first person refers to."""


def named_speaker(context: dict[str, Any]) -> str | None:
    """The speaker the turn itself names (``metadata.speaker``), if any."""
    metadata: dict[str, Any] = context.get("metadata") or {}
    value = metadata.get(SPEAKER)
    return value.strip() if isinstance(value, str) and value.strip() else None


def lines(context: dict[str, Any]) -> list[tuple[str, str]]:
    """The (role, text) lines of the episode in ``context`` (see :func:`_lines`)."""
    return _lines(str(context.get("content", "")), named_speaker(context))


def speaker_of(context: dict[str, Any]) -> str:
    """Who "I" is in this episode's user lines: the speaker the turn names, else a
    name introduced in them, else the speaker the conversation established before
    (``context["speaker"]``), else ``metadata.user_name``, else ``metadata.user_id``,
    else ``user``."""
    metadata: dict[str, Any] = context.get("metadata") or {}
    named = named_speaker(context)
    if named is not None:
        return named
    candidates = (context.get("speaker"), metadata.get("user_name"), metadata.get("user_id"))
    known = next((v.strip() for v in candidates if isinstance(v, str) and v.strip()), None)
    for role, text in lines(context):
        if role == "user":
            name = introduced_name(text)
            if name:
                # "I'm Sam" from Sam O'Neill: the full name known already
                return known if known is not None and _part_of(name, known) else name
    return known or "user"


def _part_of(name: str, full: str) -> bool:
    """Whether ``name`` is the first words of ``full`` ("Sam" of "Sam O'Neill")."""
    words, whole = name.casefold().split(), full.casefold().split()
    return len(words) < len(whole) and whole[: len(words)] == words


def extract_local(context: dict[str, Any]) -> ExtractionOutput:
    """The local provider's handler for ``extract_entities`` (pure and deterministic)."""
    gazetteer: dict[str, str] = context.get("gazetteer") or {}
    metadata: dict[str, str] = context.get("metadata") or {}
    speaker = named_speaker(context) or metadata.get("user_name", "").strip()
    person = speaker_of(context)
    entities: dict[tuple[str, str], ExtractedEntity] = {}
    relationships: list[ExtractedRelationship] = []

    def keep(entity: ExtractedEntity) -> None:
        key = (entity.entity_type, entity.name.casefold())
        for other in [k for k in entities if k[1] == key[1] and k != key]:
            if other[0] == "concept" or _rank(entities[other].confidence) < _rank(
                entity.confidence
            ):
                del entities[other]  # one name, one entity: the surer kind wins
            elif entity.entity_type == "concept" or _rank(entity.confidence) < _rank(
                entities[other].confidence
            ):
                return
        old = entities.get(key)
        if old is None or _rank(entity.confidence) > _rank(old.confidence):
            entities[key] = entity
        elif entity.attributes:
            entities[key] = old.model_copy(
                update={"attributes": {**old.attributes, **entity.attributes}}
            )

    for role, text in lines(context):
        mentions = _mentions(text, gazetteer)
        for mention in mentions:
            keep(mention.entity)
        for left, right in itertools.pairwise(mentions):
            verb = _BETWEEN.match(text[left.end : right.start])
            if verb:
                fact = text[left.start : right.end]
                relationships.append(
                    ExtractedRelationship(
                        source=left.entity.name, relation=_VERB[verb.group(1)],
                        target=right.entity.name, fact=fact, confidence="medium",
                    )
                )  # fmt: skip
        if role != "user" or not speaker:
            continue
        for mention in mentions:
            before = text[: mention.start]
            for pattern, relation in _FIRST_PERSON:
                if pattern.search(before):
                    keep(ExtractedEntity(name=speaker, entity_type="person", confidence="high"))
                    sentence = text[before.rfind(".") + 1 : mention.end].strip()
                    relationships.append(
                        ExtractedRelationship(
                            source=speaker, relation=relation, target=mention.entity.name,
                            fact=f"{speaker}: {sentence}", confidence="high",
                        )
                    )  # fmt: skip
                    break
    kinds = {name: kind for kind, name in entities}
    _statements(context, person, keep, relationships, kinds)
    _successions(context, person, keep, relationships)
    _same_subject_as_before(context, keep, relationships)
    _whole_switches(context, relationships)
    return ExtractionOutput(entities=list(entities.values()), relationships=relationships)


def _statements(
    context: dict[str, Any],
    person: str,
    keep: Any,
    relationships: list[ExtractedRelationship],
    kinds: dict[str, str],
) -> None:
    """The speaker-aware statements of the user lines (:mod:`streams.memory.statements`),
    in place of what the rules above related the same two names by."""
    related = {(r.source.casefold(), r.target.casefold()) for r in relationships}
    known: set[tuple[str, str, str]] = set()
    organisation: dict[str, str] = {}
    if isinstance(context.get("organisation"), str) and context["organisation"]:
        organisation["name"] = context["organisation"]
    attributes = {SPEAKER: "true"}
    scope = Scope(
        person,
        lambda: organisation.get("name"),
        people=[p for p in str(context.get("people") or "").split("|") if p],
        organisations=[o for o in [organisation.get("name")] if o],
    )
    for role, text in lines(context):
        if role != "user":
            continue
        if introduced_name(text) == person:
            keep(ExtractedEntity(name=person, entity_type="person", attributes=attributes,
                                 confidence="high"))  # fmt: skip
        for st in statements(text, person, lambda: organisation.get("name"), scope):
            owned = _owner_of(st.relation, st.object, st.subject, text, scope, st.subject_kind)
            if owned is None:
                continue
            if owned[0] != st.subject:
                st = dataclasses.replace(st, subject=owned[0], subject_kind=owned[1])
            pair = (st.subject.casefold(), st.object.casefold())
            if pair in related:  # the statement's normalised relation wins
                relationships[:] = [
                    r for r in relationships if (r.source.casefold(), r.target.casefold()) != pair
                ]
                related.discard(pair)
            if (st.subject.casefold(), st.relation, st.object.casefold()) in known:
                continue
            known.add((st.subject.casefold(), st.relation, st.object.casefold()))
            if st.subject == person:
                keep(ExtractedEntity(name=person, entity_type="person", attributes=attributes,
                                     confidence="high"))  # fmt: skip
            else:
                keep(ExtractedEntity(name=st.subject, entity_type=st.subject_kind,
                                     confidence="high"))  # fmt: skip
            kind = kinds.get(st.object.casefold(), st.object_kind)
            keep(ExtractedEntity(name=st.object, entity_type=kind, confidence="high"))
            if st.relation == "works_at" and st.subject == person:
                organisation["name"] = st.object
            relationships.append(
                ExtractedRelationship(
                    source=st.subject, relation=st.relation, target=st.object,
                    fact=f"{person}: {st.evidence}", confidence="high",
                    replaces=st.replaces,
                )
            )  # fmt: skip
        said = {(r.relation, r.target.casefold()) for r in relationships}
        for reading in _readings(text, scope, organisation.get("name"), context, said):
            owned = _owner_of(
                reading.relation, reading.object, reading.subject, text, scope, reading.subject_kind
            )
            if owned is None:
                continue
            reading = dataclasses.replace(reading, subject=owned[0], subject_kind=owned[1])
            keep(ExtractedEntity(name=reading.subject, entity_type=reading.subject_kind,
                                 confidence="medium"))  # fmt: skip
            keep(ExtractedEntity(name=reading.object, entity_type=RELATIONS[reading.relation],
                                 confidence="medium"))  # fmt: skip
            if reading.relation == "works_at" and reading.subject == person:
                organisation.setdefault("name", reading.object)
            known.add((reading.subject.casefold(), reading.relation, reading.object.casefold()))
            sentence = reading.span.sent.text.strip()
            relationships.append(
                ExtractedRelationship(
                    source=reading.subject, relation=reading.relation, target=reading.object,
                    fact=f"{person}: {sentence}", confidence="medium",
                    replaces=replaced_value(sentence, text, reading.object, reading.relation),
                )
            )  # fmt: skip


_NOT_A_PHONE = re.compile(
    r"(?i)\b(?:account|acct|member(?:ship)?|order|policy|ref(?:erence)?|ticket|invoice|"
    r"customer|case|booking|claim|contract|id)\b(?:\s+(?:no\.?|number|#|id))?[\s:#.]*$"
)
_MAILBOXES = frozenset(
    {"accounts", "account", "ap", "ar", "billing", "invoices", "invoice", "finance", "office",
     "info", "hello", "support", "admin", "claims", "travel", "sales", "team", "contact",
     "enquiries", "inquiries", "bookings", "booking", "hr", "payroll", "orders", "ops",
     "it", "helpdesk", "reception", "frontdesk", "accounting", "mail", "studio", "events"}
)  # fmt: skip


def _successions(
    context: dict[str, Any],
    person: str,
    keep: Any,
    relationships: list[ExtractedRelationship],
) -> None:
    """What a person who went held passes to the one the turn names in their place
    (:mod:`streams.memory.succession`), unless the turn already said who holds it."""
    holders = holders_of(context.get("holders"))
    if not holders:
        return
    stated = {(r.source.casefold(), r.relation) for r in relationships}
    known = [p for p in str(context.get("people") or "").split("|") if p]
    for role, text in lines(context):
        if role != "user":
            continue
        found = successions(text, people_in(english_doc(text), text, known), holders, person)
        for s in found:
            if (s.held.subject.casefold(), s.held.relation) in stated:
                continue
            stated.add((s.held.subject.casefold(), s.held.relation))
            keep(ExtractedEntity(name=s.held.subject, entity_type=s.held.subject_kind,
                                 confidence="medium"))  # fmt: skip
            keep(ExtractedEntity(name=s.successor, entity_type="person", confidence="medium"))
            relationships.append(
                ExtractedRelationship(
                    source=s.held.subject, relation=s.held.relation, target=s.successor,
                    fact=f"{person}: {s.sentence}", confidence="medium", replaces=s.holder,
                )
            )  # fmt: skip


def _said(r: ExtractedRelationship) -> str:
    """The sentence a relationship was read from (its ``fact`` is "Speaker: sentence")."""
    return (r.fact or "").partition(": ")[2]


OF_ONE_SUBJECT = ("plan", "team_size", "budget", "timezone")
"""Relations a conversation states of one subject (the account it is about): a later
statement whose subject was only guessed goes to that subject."""


def _same_subject_as_before(
    context: dict[str, Any], keep: Any, relationships: list[ExtractedRelationship]
) -> None:
    """ "I've been upgraded to Gold" after "Rohan Mehta is on Silver": Rohan's plan, not
    that of the organisation the reader guessed. When one subject alone had a relation
    of :data:`OF_ONE_SUBJECT` before, and the sentence does not name the one this turn's
    statement chose, the statement is about the earlier subject."""
    stated: dict[str, list[list[str]]] = json.loads(context.get("stated") or "{}")
    for i, r in enumerate(relationships):
        before = stated.get(r.relation, [])
        if len(before) != 1 or before[0][0] == r.source:
            continue
        sentence = _said(r)
        if r.source.casefold() in sentence.casefold():
            continue
        name, kind = before[0]
        keep(ExtractedEntity(name=name, entity_type=kind, confidence=r.confidence))
        relationships[i] = r.model_copy(update={"source": name})


SWITCHED_WHOLLY = re.compile(
    r"(?i)\b(?:everything(?:'s| is)? (?:now )?(?:on|in|through)|all (?:on|in) \w+ now|"
    r"migration (?:is |has )?(?:finished|done|complete)|migrated (?:everything |it all )?"
    r"(?:over )?to|moved (?:everything|it all|the whole \w+) (?:over )?to|(?:gone|went|moved) "
    r"over to|switched (?:over )?to|changed (?:over )?to)\b"
)
"""A switch that names only the new value ("the migration finished today, everything is
on BigQuery now"): it replaces what the subject used, when that is one thing."""


def _whole_switches(context: dict[str, Any], relationships: list[ExtractedRelationship]) -> None:
    """A switch to a new value that names no old one replaces the one value the subject
    was said to use before, if there is exactly one."""
    used: dict[str, list[str]] = json.loads(context.get("uses") or "{}")
    for i, r in enumerate(relationships):
        if r.relation != "uses" or r.replaces:
            continue
        sentence = _said(r)
        others = [v for v in used.get(r.source, []) if v.casefold() != r.target.casefold()]
        if len(others) == 1 and SWITCHED_WHOLLY.search(sentence):
            relationships[i] = r.model_copy(update={"replaces": others[0]})


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().casefold()


def _tokens(name: str) -> list[str]:
    """The words of a name of three letters or more, folded to ASCII, in order."""
    return [w for w in re.findall(r"[a-z]+", _folded(name)) if len(w) > 2]


def _spelled(name: str, local: str) -> int:
    """How well an email's local part spells ``name``: 2 for its first name, 1 for each
    other part of it ("carmen.quispe" spells Carmen Quispe 3, Rosa Quispe 1)."""
    return sum((2 if n == 0 else 1) for n, w in enumerate(_tokens(name)) if w in local)


def _owner_of(
    relation: str, value: str, subject: str, text: str, scope: Scope, kind: str = "person"
) -> tuple[str, str] | None:
    """Whose contact a stated email or phone number is, when the value says so better
    than the words around it did; None when it is not a contact at all. A number after
    "account", "member", "order" … is that, not a phone, nor is one of over 15 digits.
    An email spelling someone's name is theirs; a mailbox named for a role
    (``accounts@``, ``claims@``) is its organisation's (the one its domain names, else
    the speaker's). ``kind``: the subject's kind as read, kept unless the subject is a
    known organisation ("Olive & Fig", read as an organisation in one turn, stays one in
    the next)."""
    if subject in scope.organisations or subject == scope.org():
        kind = "organization"
    if relation == "phone":
        if sum(ch.isdigit() for ch in value) > 15:  # E.164: at most 15 digits
            return None
        at = text.find(value)
        if at >= 0 and _NOT_A_PHONE.search(text[:at]):
            return None
        return subject, kind
    if relation != "email" or "@" not in value:
        return subject, kind
    local, _, domain = _folded(value).partition("@")
    named = _CAPS.findall(text)  # any capitalised name: spaCy may call a person an ORG
    people = list(dict.fromkeys([subject, scope.speaker, *scope.people, *named]))
    best = max(people, key=lambda person: _spelled(person, local))
    if _spelled(best, local) > _spelled(subject, local):
        return scope.person(best), "person"
    if _spelled(subject, local):
        return subject, kind
    if set(re.split(r"[._+-]", local)) & _MAILBOXES:
        organisations = [*scope.organisations, *([scope.org()] if scope.org() else [])]
        for org in reversed(organisations):
            if org and any(t in domain for t in _tokens(org)):
                return org, "organization"
        org = scope.org()
        return (org, "organization") if org else (subject, kind)
    return subject, kind


CHANGE_GATE_DROP = 0.2
"""How much less sure the reader may be of a value of a one-value relation the
conversation already stated, in a sentence that says something changed ("the new one is
…", "… now"): a change is announced for a slot already filled. Chosen on the train
splits (0.1 / 0.2 / 0.3: changes recorded 0.507 / 0.522 / 0.524, precision 0.837 /
0.836 / 0.832; 0 gave 0.489 and 0.838)."""


def _readings(
    text: str,
    scope: Scope,
    organisation: str | None,
    context: dict[str, Any],
    said: set[tuple[str, str]],
) -> list[Reading]:
    """What the learned reader (:mod:`streams.memory.learned`) finds in a user line that
    the patterns did not state: a value the patterns gave a relation keeps theirs."""
    model = shipped_model()
    doc = english_doc(text) if model is not None else None
    if model is None or doc is None:
        return []
    earlier = [o for o in str(context.get("organisations") or "").split("|") if o]
    ctx = Context(scope.speaker, organisation, list(scope.people), [*earlier, *scope.organisations])
    stated = set(str(context.get("relations") or "").split("|")) & set(SINGLE_VALUED)
    gate = model.gate - CHANGE_GATE_DROP if stated else model.gate
    return [
        r
        for r in read(doc, ctx, model, gate)
        if r.relation in RELATIONS
        and (
            r.probability >= model.gate
            or (r.relation in stated and bool(CHANGE.search(r.span.sent.text)))
        )
        and not any(
            relation == r.relation and (obj in r.object.casefold() or r.object.casefold() in obj)
            for relation, obj in said
        )
        and not _denied(r)
    ]


_CLAUSE = re.compile(r"[,;:\u2014\u2013]|\s-\s|\b(?:and|but|so|because)\b", re.I)


def _denied(reading: Reading) -> bool:
    """Whether the clause holding a reading's value denies it ("I no longer work at
    Vossberg", "we don't use Slack"): such a value is not held, unless the sentence goes
    on to name who holds it now ("I'm not the fleet manager anymore, Jordan Pike is")."""
    sentence = reading.span.sent
    text = sentence.doc.text
    before = text[sentence.start_char : reading.span.start_char]
    after = text[reading.span.end_char : sentence.end_char]
    first = reading.subject.split()[0] if reading.subject.split() else reading.subject
    return bool(NEGATED.search(_CLAUSE.split(before)[-1])) and first not in after


def _rank(confidence: str) -> int:
    return {"low": 0, "medium": 1, "high": 2}.get(confidence, 0)
