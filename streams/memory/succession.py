"""Successions: a new person takes the place of one who held a role (pure).

"Deepa has left Marston, so our broker contact there is Alan Fitzgerald now", "Mr Zulu
has been transferred. Ms Thandeka Mthembu is ICT coordinator in his place", "Tanya left
to open her own place, so I report straight to Hector Alvarado now". The turn rarely
restates the relation the old person held (Swiftlane's contact, Jake's manager): it names
the old person, says they went, and names the new one. The conversation said before
what the old one held; this reads the turn against that:

- a *holder*: a person who is the value of a relation held by one person at a time
  (:data:`HELD_BY_ONE_PERSON`) for some subject, as the conversation stated it;
- the turn names a holder (full name, first name, or title and surname) and says they
  went or were replaced (:data:`GONE`);
- the turn names another person in full, not the speaker and not that holder: the
  successor, who now holds what the holder held (the fold closes the holder's facts,
  as for any single-valued relation).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from streams.memory.when import sentence_of

HELD_BY_ONE_PERSON = ("contact", "manager", "billing_contact")
"""Relations whose value is one person at a time, handed on when that person goes."""

GONE = re.compile(
    r"(?i)\b(?:left|leaving|has gone|retired|retiring|stepped down|stepping down|moved on|"
    r"moving on|promoted|transferred|shifted|resigned|quit|handed over|handing over|"
    r"(?:maternity|paternity|parental|sick) leave|no longer|replaced|replacing|"
    r"took over|taken over|taking over|in (?:his|her|their) place|covers|covering|"
    r"instead of|successor|succeeded)\b"
)
"""Words that say a person went, or was replaced."""

_TITLE = re.compile(r"^(?:Mr|Mrs|Ms|Mx|Miss|Dr|Prof)\.?\s+")


class Held(NamedTuple):
    """A role one person holds at a time: ``subject``'s ``relation`` (a tuple, as the
    extraction context carries it)."""

    subject: str
    """Whose role it is: an organisation ("Swiftlane Couriers") or a person."""
    subject_kind: str
    relation: str
    """One of :data:`HELD_BY_ONE_PERSON`."""


@dataclass(frozen=True)
class Succession:
    """``successor`` now holds ``held``, in place of ``holder``; said in ``sentence``."""

    held: Held
    holder: str
    successor: str
    sentence: str


def holders_of(encoded: str | None) -> dict[str, list[Held]]:
    """The holders a conversation established (as :func:`encode_holders` wrote them)."""
    if not encoded:
        return {}
    raw: dict[str, list[list[str]]] = json.loads(encoded)
    return {name: [Held(*h) for h in held] for name, held in raw.items()}


def encode_holders(holders: dict[str, list[Held]]) -> str:
    return json.dumps(holders)  # a Held is a tuple: written as a list


def hold(holders: dict[str, list[Held]], holder: str, held: Held, keep: int = 20) -> None:
    """``holder`` holds ``held`` now: whoever held it before no longer does."""
    for others in holders.values():
        if held in others:
            others.remove(held)
    holders.setdefault(holder, []).append(held)
    for name in [n for n, h in holders.items() if not h]:
        del holders[name]
    while len(holders) > keep:
        del holders[next(iter(holders))]


def _named(holder: str, text: str) -> re.Match[str] | None:
    """Where ``text`` names ``holder``: in full, by first name, or by title and surname."""
    parts = _TITLE.sub("", holder).split()
    ways = [re.escape(holder)]
    if parts:
        ways.append(re.escape(parts[0]))
    if len(parts) > 1 and len(parts[-1]) > 2:
        ways.append(rf"(?:Mr|Mrs|Ms|Mx|Miss|Dr)\.?\s+{re.escape(parts[-1])}")
    return re.search(rf"\b(?:{'|'.join(ways)})\b", text)


def successions(
    text: str, people: Iterable[tuple[str, int]], holders: dict[str, list[Held]], speaker: str
) -> list[Succession]:
    """The successions ``text`` states: ``people``, the full names of people it names with
    where they start, ``holders`` what the conversation established before it."""
    if not holders or not GONE.search(text):
        return []
    named = [(name, at) for name, at in people if " " in name.strip()]
    out: list[Succession] = []
    for holder, held in holders.items():
        mention = _named(holder, text)
        if mention is None:
            continue
        first = _TITLE.sub("", holder).split()[0].casefold()
        others = [
            (name, at)
            for name, at in named
            if name.casefold() != holder.casefold()
            and name.split()[0].casefold() != first
            and name.casefold() != speaker.casefold()
            and not set(held) & set(holders.get(name, ()))
        ]
        if not others:
            continue
        # the one named after the holder, else the one named last before
        after = [o for o in others if o[1] > mention.start()]
        successor, at = after[0] if after else others[-1]
        sentence = _sentence_around(text, min(at, mention.start()), max(at, mention.end()))
        out += [Succession(h, holder, successor, sentence) for h in held]
    return out


def _sentence_around(text: str, start: int, end: int) -> str:
    """The sentences of ``text`` from the one holding ``start`` to the one holding ``end``."""
    first, last = sentence_of(text, start, start + 1), sentence_of(text, end - 1, end)
    return text[first.start() if first else 0 : last.end() if last else len(text)].strip()


def people_in(doc: Any, text: str, known: Sequence[str] = ()) -> list[tuple[str, int]]:
    """The people a parsed line names (spaCy's PERSON entities, titles dropped), with
    where they start; without a parse, the ``known`` full names it holds."""
    if doc is not None:
        return [
            (_TITLE.sub("", e.text).strip(), e.start_char) for e in doc.ents if e.label_ == "PERSON"
        ]
    return [(name, text.find(name)) for name in known if name in text]
