"""Times told by an event said before: "the day after my birthday", "the Monday after
the interview", "two weeks before the wedding".

A turn that dates an event ("my birthday is the 2nd", "the interview's next Tuesday")
leaves an :class:`Anchor`: the words of its sentence and the day. A later turn of the same
group that places a time by an event is resolved against the latest anchor said before it
whose sentence holds the event's word ("interview's" holds "interview"; "we moved" holds
"move"). A fixed holiday needs no anchor ("the week before Christmas").

An anchor lives in the process that read it (a bounded number per group, a bounded
number of groups): the turns of one import or one live conversation are read in their
order, and a replay reads them again. A turn whose anchor was never read resolves to
nothing, as it did before.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from streams.memory.when import (
    COUNTS,
    Mention,
    clause_of,
    holiday,
    is_future,
    is_past,
    nearest_holiday,
    reported_from,
    sentence_of,
    week_of,
)

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NOT_EVENTS = frozenset(
    ("tomorrow", "yesterday", "today", "tonight", "that", "this", "it", "next", "last", "then",
     "got", "get", "were", "was", "had", "did", "went", "came", "made", "said", "all", "and",
     "but", "so", "or", "to", "for", "with", "at", "in", "on", "of", "as", "too")
)  # fmt: skip
"""Words after "the day after" that name no event of their own: times, verbs too light
to find the sentence that dated them ("the day after they got back"), and the small words
that end the phrase ("the Monday after and said": told from the time said before it)."""
_TIED = re.compile(
    r"(?<!every )\b(?:"
    r"the\s+(?P<unit>day|morning|afternoon|evening|night|week|weekend|" + "|".join(_WEEKDAYS) + r")"
    r"|(?P<count>a couple of|a few|an?|one|two|three|four|five|six|ten|\d{1,2})\s+"
    r"(?P<counted>days?|weeks?)|(?P<same>(?:on\s+)?(?:the\s+)?same\s+day))"
    r"\s+(?P<side>after|before|as)\s+"
    r"(?:(?P<whose>my|our|your|ur|his|her|their|the|we|i|she|he|they)\s+"
    r"(?:(?:last|first|final|big|new|actual|real|own|official)\s+(?=[a-z]))?)?"
    r"(?P<event>[a-z][a-z'\u2019]+(?:\s+(?:eve|day))?)",
    re.I,
)
_SINCE = re.compile(
    r"\b(?P<count>a|an|one|two|three|four|five|six|ten|\d{1,2})\s+"
    r"(?P<unit>year|month|week)s?\s+(?:since|to the day since)\b",
    re.I,
)
_WORD = re.compile(r"[a-z][a-z'\u2019]+", re.I)
_GROUPS = 10_000
_PER_GROUP = 200
_REPLY = timedelta(minutes=10)
"""A turn said this soon after the one before it answers it: "When's the interview?" /
"It's next Thursday at 2." dates the interview."""


def stem(word: str) -> str:
    """``word`` without the endings that tell one event apart from itself: "moved",
    "moving" and "move" are "mov"; "interview's" is "interview"."""
    word = word.lower().replace("\u2019", "'").removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Anchor:
    """A day an earlier sentence named, with that sentence's word stems."""

    stems: frozenset[str]
    day: date
    said_at: datetime
    speaker: str | None
    asked: frozenset[str] = frozenset()
    """The stems of the turn it replied to: an event found only there anchors when no
    sentence of its own names it."""


@dataclass
class Anchors:
    """The anchors each group has said, latest last (bounded, least recently used
    groups forgotten first)."""

    groups: OrderedDict[str, list[Anchor]] = field(default_factory=OrderedDict)
    last: dict[str, tuple[datetime, frozenset[str]]] = field(default_factory=dict)
    """Each group's latest turn: when it was said and the stems of its last sentence."""

    def remember(
        self, group: str, text: str, mentions: list[Mention], said_at: datetime,
        speaker: str | None,
    ) -> None:  # fmt: skip
        """An anchor for each day ``text`` names, with the words of its sentence and, when
        ``text`` replies to the turn just before it, of that turn's last sentence (a week,
        a month or a season anchors nothing)."""
        said = self.groups.setdefault(group, [])
        self.groups.move_to_end(group)
        previous = self.last.get(group)
        asked = (
            previous[1]
            if previous is not None and timedelta(0) <= said_at - previous[0] <= _REPLY
            else frozenset()
        )
        ending = sentence_of(text, len(text.rstrip()) - 1, len(text.rstrip()))
        self.last[group] = (
            said_at, frozenset(stem(w) for w in _WORD.findall(ending.group(0) if ending else text))
        )  # fmt: skip
        for m in mentions:
            start = text.find(m.text)
            if m.granularity != "day" or start < 0:
                continue
            sentence = sentence_of(text, start, start + len(m.text))
            # with the sentence before it: "What are you doing for your birthday? The 13th
            # is a Wednesday this year."
            before = sentence_of(text, sentence.start() - 1, sentence.start()) if sentence else None
            words = _WORD.findall(
                text[before.start() if before else sentence.start() : sentence.end()]
                if sentence
                else text
            )
            stems = frozenset(stem(w) for w in words)
            said.append(Anchor(stems, m.start, said_at, speaker, asked - stems))
        del said[:-_PER_GROUP]
        while len(self.groups) > _GROUPS:
            dropped, _ = self.groups.popitem(last=False)
            self.last.pop(dropped, None)

    def forget(self, group: str, tenant: str | None = None) -> None:
        """Drop the anchors of ``group``, or of every group of ``tenant`` when given."""
        for known in list(self.groups):
            if known == group or (tenant is not None and known.startswith(f"{tenant}:")):
                del self.groups[known]
                self.last.pop(known, None)

    def tied(
        self, group: str, text: str, said_at: datetime, speaker: str | None,
        said: Sequence[Mention] = (),
    ) -> list[Mention]:  # fmt: skip
        """The times ``text`` places by an event: each against the latest anchor of the
        group said before ``said_at`` that names the event (the speaker's own first when
        the event is "my"/"our" one), or a holiday. With no such anchor, a day the same
        sentence names (among ``said``) dates the event itself: "the 18th, which is the
        day before my birthday" puts the birthday on the 19th. An earlier sentence of
        ``text`` that tells the event with a day comes first: "I got back on Thursday. Went
        into the lab the day after I got back." """
        out = []
        for m in _TIED.finditer(text):
            event = m.group("event").lower()
            if (earlier := _told_earlier(text, m, said)) is not None:
                out.append(_shifted(m, earlier))
                continue
            if stem(event) in _NOT_EVENTS or event in _NOT_EVENTS:
                continue
            clause = clause_of(text, m.start(), m.end())
            # a sentence of no tense ("the weekend after Memorial Day", "rehearsal dinner is
            # the night before the wedding") takes the nearest day, before or after
            sentence = sentence_of(text, m.start(), m.end())
            words = sentence.group(0) if sentence else clause
            if (cut := reported_from(text, m.start(), m.end())) is not None:
                # "Ray confirmed the install is the day after Thanksgiving": the tense is
                # the reported clause's
                words = clause = text[cut : sentence.end() if sentence else len(text)]
            past = is_past(words)
            future = True if is_future(clause) else False if past else None
            day = self._day_of(group, event, m.group("whose"), said_at, speaker, future)
            if day is not None:
                out.append(_shifted(m, day))
            elif (told := _told_beside(text, m, said)) is not None:
                out.append(Mention(m.group(0), told, told, "day"))
        return out

    def _day_of(
        self, group: str, event: str, whose: str | None, said_at: datetime,
        speaker: str | None, future: bool | None,
    ) -> date | None:  # fmt: skip
        """The day of ``event``: a holiday's, or an anchor's (``future``: one to come, one
        gone, or None for the nearest)."""
        today = said_at.date()
        if future is None:
            if (nearest := nearest_holiday(event, today)) is not None:
                return nearest
        elif (day := holiday(event, today, future)) is not None:
            return day
        word = stem(event.split()[0])
        before = [
            a
            for a in self.groups.get(group, ())
            if a.said_at <= said_at and (future is None or (a.day >= today) == future)
        ]
        named = [a for a in before if word in a.stems]
        # an event named only in the turn replied to is the one meant when it was said on a
        # later day than any sentence naming it; the same day, the naming sentence is the
        # better witness
        replied = [
            a for a in before
            if word in a.asked and (not named or a.said_at.date() > named[-1].said_at.date())
        ]  # fmt: skip
        said = sorted(named + replied, key=lambda a: a.said_at)
        own = [a for a in said if a.speaker == speaker]
        # "my birthday": one its speaker called "my" one, or the other called "your" one;
        # "we moved" is the latest move told, whoever told it and however
        mine = (whose or "").lower() in ("my", "our")
        theirs = [
            a
            for a in said
            if (a.speaker == speaker and a.stems & {"my", "our"})
            or (a.speaker != speaker and "your" in a.stems)
        ]
        pool = (theirs or own) if mine and (theirs or own) else said
        if not pool:
            return None
        if future is None:
            return min((a.day for a in pool), key=lambda d: abs(d - today))
        return pool[-1].day


def since(text: str, said: list[Mention], said_at: datetime) -> list[Mention]:
    """The day an event was, told by how long ago it is ("yesterday was a year since
    the diagnosis": a year before yesterday; "it's two weeks since we met": two weeks
    before the day it was said). ``said``: the times ``text`` names."""
    out = []
    for m in _SINCE.finditer(text):
        sentence = sentence_of(text, m.start(), m.end())
        inside = sentence.group(0) if sentence else text
        days = [x for x in said if x.granularity == "day" and x.text in inside]
        day = days[0].start if days else said_at.date()
        count = _number(m.group("count"))
        unit = m.group("unit").lower()
        if unit == "year":
            back = _years_before(day, count)
        elif unit == "month":
            back = _months_before(day, count)
        else:
            back = day - timedelta(days=7 * count)
        out.append(Mention(m.group(0), back, back, "day"))
    return out


def _number(word: str) -> int:
    """ "two", "a couple of" or "2" as a number."""
    return COUNTS.get(word.lower()) or int(word)


def _years_before(day: date, count: int) -> date:
    try:
        return day.replace(year=day.year - count)
    except ValueError:  # the 29th of February
        return day.replace(year=day.year - count, day=28)


def _months_before(day: date, count: int) -> date:
    index = day.year * 12 + day.month - 1 - count
    year, month = divmod(index, 12)
    return day.replace(year=year, month=month + 1, day=min(day.day, 28))


def _shifted(m: re.Match[str], day: date) -> Mention:
    """The time ``m`` names, ``day`` being its event's."""
    if m.group("same"):
        return Mention(m.group(0), day, day, "day")
    after = m.group("side").lower() == "after"
    sign = 1 if after else -1
    unit = (m.group("unit") or "").lower()
    if m.group("counted"):
        count = _number(m.group("count"))
        days = count * (7 if m.group("counted").lower().startswith("week") else 1)
        moved = day + timedelta(days=sign * days)
        return Mention(m.group(0), moved, moved, "day")
    if unit in _WEEKDAYS:
        weekday = _WEEKDAYS.index(unit)
        ahead = (weekday - day.weekday()) % 7 or 7
        back = (day.weekday() - weekday) % 7 or 7
        moved = day + timedelta(days=ahead if after else -back)
        return Mention(m.group(0), moved, moved, "day")
    if unit == "weekend":
        # not the weekend the event falls on: "the weekend before Easter" is the one before
        # Easter weekend
        saturday = day + timedelta(days=(5 - day.weekday()) % 7 or 7)
        if not after:
            saturday = day - timedelta(
                days=(day.weekday() - 5) % 7 + (7 if day.weekday() >= 5 else 0)
            )
        return Mention(m.group(0), saturday, saturday + timedelta(days=1), "week")
    if unit == "week":
        first, last = week_of(day + timedelta(days=7 * sign))
        return Mention(m.group(0), first, last, "week")
    moved = day + timedelta(days=sign)
    return Mention(m.group(0), moved, moved, "day")


def _told_beside(text: str, m: re.Match[str], said: Sequence[Mention]) -> date | None:
    """The event's day when the sentence of ``m`` names exactly one day besides it ("on
    the 18th of September, which is the day before my birthday": the 19th); None when it
    names none or several, or places the event by weeks or a weekday."""
    sentence = sentence_of(text, m.start(), m.end())
    inside = sentence.group(0) if sentence else text
    days = {x.start for x in said if x.granularity == "day" and x.text in inside
            and x.text not in m.group(0)}  # fmt: skip
    unit = (m.group("unit") or "").lower()
    if (
        len(days) != 1
        or (unit and unit != "day")
        or (m.group("counted") and not m.group("counted").lower().startswith("day"))
    ):
        return None
    (day,) = days
    if m.group("same"):
        return day
    count = _number(m.group("count")) if m.group("counted") else 1
    sign = 1 if m.group("side").lower() == "after" else -1
    return day - timedelta(days=sign * count)


_PARTICLE = re.compile(r"\s+(back|home|in|out|up|off|away|there|here)\b", re.I)


def _told_earlier(text: str, m: re.Match[str], said: Sequence[Mention]) -> date | None:
    """The day an earlier sentence of ``text`` tells the event of ``m`` with ("I got back
    to Lisbon on Thursday. Went into the lab the day after I got back": Thursday), when
    exactly one day is named there; the event is its verb and the particle after it."""
    event = m.group("event")
    if m.group("whose") is None or m.group("whose").lower() not in ("i", "we", "he", "she", "they"):
        return None
    particle = _PARTICLE.match(text, m.end())
    words = event + (f" {particle.group(1)}" if particle else "")
    if event.lower() in _NOT_EVENTS and particle is None:
        return None  # "the day after we got": too light to find alone
    sentence = sentence_of(text, m.start(), m.end())
    while sentence is not None and sentence.start() > 0:
        sentence = sentence_of(text, sentence.start() - 1, sentence.start())
        if sentence is None or not re.search(rf"(?i)\b{re.escape(words)}\b", sentence.group(0)):
            continue
        days = {x.start for x in said if x.granularity == "day" and x.text in sentence.group(0)}
        return next(iter(days)) if len(days) == 1 else None
    return None
