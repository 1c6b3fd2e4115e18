"""Times said in words, resolved against when they were said.

"I adopted a dog last Saturday", said on Tuesday 16 May 2023, is about Saturday 13 May.
spaCy's English pipeline finds the spans that name a time (its ``DATE`` entities; a
small pattern stands in when the pipeline is not installed), and ``dateparser``
(BSD-3-Clause, scrapinghub) resolves each against the moment the turn was said. What
neither reads well is written here: seasons, weekends, "the week before last",
"early/mid/late <month>", "a couple of weeks ago", and the tense that decides whether a
bare "August" is the last one or the next one. A duration ("for a year") or a vague
"the other day" names no time and resolves to nothing.

A :class:`Mention` is a span of days with the granularity it was said at, so "in March"
stays a month and never pretends to be the 1st.
"""

from __future__ import annotations

import calendar
import contextlib
import dataclasses
import functools
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Literal

Granularity = Literal["day", "week", "month", "season", "year"]


@dataclass(frozen=True)
class Mention:
    """A time a text names: the days ``start``..``end`` (inclusive), said as ``text``."""

    text: str
    start: date
    end: date
    granularity: Granularity

    @property
    def label(self) -> str:
        """The time as people write it at its granularity: ``2023-05-13``, ``2023-05``,
        ``2023``, or a span ``2023-05-08..2023-05-14`` for weeks and seasons."""
        if self.granularity == "day":
            return self.start.isoformat()
        if self.granularity == "month":
            return self.start.isoformat()[:7]
        if self.granularity == "year":
            return str(self.start.year)
        return f"{self.start.isoformat()}..{self.end.isoformat()}"

    def covers(self, asked: str) -> bool:
        """Whether this time is the day (``YYYY-MM-DD``), month (``YYYY-MM``) or year
        asked: a day is covered by a day or a week holding it, a month by any time
        inside it or a season holding it, a year by any time inside it."""
        first, last = span_of(asked)
        if self.granularity in ("day", "week") and first == last:
            return self.start <= first <= self.end and self.days <= 7
        return (first <= self.start and self.end <= last) or (
            self.granularity == "season" and self.start <= first and last <= self.end
        )

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def span_of(asked: str) -> tuple[date, date]:
    """The first and last day of ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``."""
    parts = [int(p) for p in asked.split("-")]
    if len(parts) == 3:
        day = date(*parts)
        return day, day
    if len(parts) == 2:
        return _month(parts[0], parts[1])
    return date(parts[0], 1, 1), date(parts[0], 12, 31)


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def week_of(day: date) -> tuple[date, date]:
    """The Monday and Sunday of the week holding ``day``."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


# Meteorological seasons of the northern hemisphere (first month, months).
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_MONTHS = (
    {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    | {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
    | {"sept": 9}
)
_MONTH_NAMES = {m.lower() for m in calendar.month_name if m}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
COUNTS = {"a": 1, "an": 1, "one": 1, "a couple of": 2, "a couple": 2, "couple of": 2,
           "two": 2, "a few": 3, "few": 3, "three": 3, "several": 4, "four": 4, "five": 5,
           "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}  # fmt: skip

_LEAD = re.compile(
    r"^(?:the|on|in|at|from|by|since|until|till|around|about|during|over|of|for|between)\s+"
)
_EDGE = re.compile(
    r"^(early|mid|middle of|late|the end of|end of|the start of|start of|the beginning of"
    r"|beginning of)[\s-]+"
)
_RELATIVE = re.compile(r"^(last|this|next|past|coming)\s+(\w+)$")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_NAME = r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_WEEK_ON = re.compile(
    rf"^(?:a (week|fortnight) (?:on|from) (?:this\s+)?{_DAY_NAME}|{_DAY_NAME} (week|fortnight))$"
)
_MONTH_WORD = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
"""A month's name, whole or short, as a piece of a pattern."""
_LAST_WEEKDAY = re.compile(r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)day$")
"""A weekday ending a longer span."""
_TELLS_WHICH = re.compile(
    r"(?i)\d|\b(?:every|each|any|most|some|all|ago|last|next|this|past|first|second|third"
    r"|fourth|fifth|final|holiday|weeks?|months?|years?|before|after|since|until|till|from|by"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|" + _MONTH_WORD + r")(?![a-z])"
)
"""Words before a weekday in a span that tell which one it is, or that it is any one
("every Tuesday", "a week ago Tuesday", "bank holiday Monday", "June 4, first Tuesday",
"Monday, Wednesday and Saturday"):
the span is read whole or not at all."""
_WEEK_LAST = re.compile(rf"^a\s+(week|fortnight)\s+last\s+{_DAY_NAME}$")
"""A week before last Thursday, said the British way ("It was a week last Thursday")."""
_WEEK_HOLDING = re.compile(r"^(week|weekend)\s+of\s+(.+)$")
"""The week (or weekend) a day falls in ("the week of August 12th", "the weekend of the
3rd")."""
_COME_DAY = re.compile(rf"^(?:come\s+{_DAY_NAME}|{_DAY_NAME}\s+last)$")
_DAY_OF_WEEK = re.compile(
    rf"^{_DAY_NAME},?\s+(?:the\s+)?(last|this|next|)\s*week(\s+before\s+last)?$"
)
"""A weekday of a week named ("Monday last week": that week's Monday, not the last one)."""
_WEEK_FROM = re.compile(r"^a\s+(week|fortnight|month)\s+(yesterday|tomorrow|today)$")
_AFTER_NEXT = re.compile(rf"^({_DAY_NAME[1:-1]}|weekend)\s+after\s+next$")
_BEFORE_LAST = re.compile(
    rf"^(day|night|week|weekend|month|year|spring|summer|autumn|fall|winter|{_DAY_NAME})"
    r"\s+before\s+last$"
)
_AGO = re.compile(r"^(.+?)\s+(day|week|fortnight|month|year)s?\s+(?:ago|back)$")
_AHEAD = re.compile(
    r"^(?:in\s+)?(a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|\d+)"
    r"(?:\s+and\s+a\s+half)?\s+(day|week|fortnight|month|year)s?"
    r"(?:'s?\s+time|\s+from\s+(?:now|today|tomorrow)|\s+away)?$"
)
_IN_BEFORE = re.compile(r"\bin\s+$")
_FROM_NOW = re.compile(r"^\s+from\s+(?:now|today|tomorrow)\b")
_UNITS_AGO = re.compile(
    rf"^(.+?)\s+(weekend|spring|summer|autumn|fall|winter|{_DAY_NAME[1:-1]})s?\s+ago$"
)
_PAST_WEEKEND = ("weekend", "past weekend", "this past weekend")
"""A weekend named without "last" or "next" ("at the weekend", "this past weekend", not
"weekend custody"): the last one (the one under way on a Saturday or Sunday), or the
coming one when the sentence speaks of the future."""
_EDGE_OF_WEEK = re.compile(r"^(last|this|next|the)\s+week$")
_NTH_WEEKDAY = re.compile(
    rf"^(first|second|third|fourth|last|final)\s+({_DAY_NAME[1:-1]}|weekend)\s+(?:of|in)\s+"
    r"(?:(the|this|next|last)\s+month|([a-z]+)(?:,?\s+(\d{4}))?)$"
)
_AND_A_HALF = re.compile(r"^(.+?)\s+(year|month)s?\s+and\s+a\s+half\s+ago$")
_HALF_AGO = re.compile(r"^half\s+an?\s+(year|month)\s+ago$")
_HOURS_AGO = re.compile(
    r"^(?:an?|\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of"
    r"|several)\s+(?:hour|minute|min)s?\s+ago$"
)
_BARE_DAY = re.compile(r"(?i)^(?:the\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day$")
_TOLD_FROM_ANOTHER = re.compile(r"(?i)\bthat\s+$")
_BEFORE_AFTER = re.compile(r"(?i)^\s+(?:before|after)\b(?!\s+(?:last|next)\b)")
_OLD = re.compile(r"^(.+?)\s+(day|week|month)s?\s+old$")
"""A baby "ten days old today": born that many days before."""
_TODAY_AFTER = re.compile(r"^\s+(?:today|to the day|yesterday)\b")
_OR_TWO = re.compile(r"^a\s+(day|week)\s+or\s+two\s+ago$")
_IN_SINCE = re.compile(r"^(.+?\s+(?:day|week|month|year)s?)\s+in(?:\s+(?:now|already))?$")
"""How long something has run, said from inside it ("4 months in", "three weeks in and I
love it"): it began that long ago."""
_FOR_SO_LONG = re.compile(
    r"^(?:for\s+)?((?:\w+|a couple of|a few)\s+(?:day|week|month|year)s?)(?:\s+now)?$"
)
_BEEN_DOING = re.compile(
    r"(?i)(?<!will\s)(?<!ll\s)\b(?:have|has|['\u2019]ve|['\u2019]s)\s+been\s+"
    r"(?:\w+ing|together|married|engaged|sober|here|there|open)\b[^.!?;,]*?(?:\bfor\s+)?$"
)
"""How long something has gone on, said while it does ("we've been dating four months",
"I've been working there for three years"): it began that long ago."""
_SHORT_YEAR = re.compile(r"^'(\d{2})$")
_SHORT_DAYS = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
               "weds": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
               "fri": "friday", "sat": "saturday", "sun": "sunday"}  # fmt: skip
_SHORT_DAY = re.compile(r"\b(" + "|".join(_SHORT_DAYS) + r")\b\.?$")
"""A day name as chats shorten it ("last Sat", "on Weds"); read only where the pattern
finds it after "on", "last", "next" or "this", capitalised."""
_EDGE_OF_YEAR = re.compile(r"^(?:the|this)\s+year$")
_THIRDS = {"early": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
_NTH_WEEK = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": -1, "final": -1}
_WEEK_OF_MONTH = re.compile(
    r"^(first|second|third|fourth|last|final)\s+week\s+(?:of|in)\s+([a-z]+)(?:,?\s+(\d{4}))?$"
)
_SEASON_OF = re.compile(r"^(spring|summer|autumn|fall|winter)\s+(?:of\s+)?(\d{4}|'\d{2})$")
_IN_THE = re.compile(r"^(earlier|later) in the (week|month|year)$")
_JUST_GONE = re.compile(r"^\s+just\s+(?:gone|past)\b", re.I)
_BOOKED_FOR = re.compile(
    r"\b(?:signed\s+(?:\w+\s+){0,3}?(?:up|on)|registered|entered|enrolled|booked|reserved"
    r"|bought\s+tickets|got\s+(?:tickets|a\s+(?:place|spot|ticket))"
    r"|put\s+(?:my|our|his|her|their)\s+names?\s+down)"
    r"\b[^.!?;]*?(?:\bfor|\bin)\s*$",
    re.I,
)
"""A booking whose time follows: "I signed up for the half marathon in October", "we
booked the cottage for Easter", "he signed us both up for one in October". Not "for …
on": "I signed up for the marathon on New Year's Day" is when the booking was made. The time is the
booked thing's, still to come, though the booking is told in the past."""
_COMING_DAY = re.compile(rf"^this coming\s+{_DAY_NAME}$")
_EDGE_OF_MONTH = re.compile(r"^(last|this|next|the)\s+month$")
_COUNT_WORDS = (
    r"a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of|\d+"
)
_ANCHORED = re.compile(
    rf"^(?:({_COUNT_WORDS})\s+(day|night|week)s?|(day|night|week|weekend|{_DAY_NAME[1:-1]}))"
    r"\s+(before|after)\s+(.+)$"
)
"""A time told from a day named after it ("the day after June 1st", "the Friday before 2
June", "two days after Christmas", "the week before the 9th")."""
_MORE_HOLIDAYS = (
    r"canada\s+day|st\.?\s+(?:david|andrew)'?s\s+day|juneteenth|veterans'?\s+day"
    r"|remembrance\s+day|burns\s+night|hogmanay|april\s+fools'?\s+day|groundhog\s+day"
    r"|memorial\s+day|labou?r\s+day|mlk\s+day|martin\s+luther\s+king\s+day"
    r"|president'?s'?\s+day|columbus\s+day|victoria\s+day|mother'?s\s+day|father'?s\s+day"
    r"|(?-i:NYE)|australia\s+day|straya\s+day|anzac\s+day|waitangi\s+day|republic\s+day"
    r"|gandhi\s+jayanti|(?:king|queen)'?s\s+birthday|melbourne\s+cup(?:\s+day)?"
)
_MONTH_WORD = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
_ANCHOR_DAY = (
    rf"(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_WORD}(?:,?\s+\d{{4}})?"
    rf"|{_MONTH_WORD}\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
    r"|the\s+\d{1,2}(?:st|nd|rd|th)|\d{4}-\d{2}-\d{2}|yesterday|tomorrow"
    r"|(?:christmas|x-?mas)(?:\s+(?:day|eve))?|boxing\s+day|new\s+year'?s(?:\s+(?:day|eve))?"
    r"|easter(?:\s+(?:sunday|monday))?|good\s+friday|halloween|valentine'?s(?:\s+day)?"
    r"|thanksgiving|(?:st\.?\s+)?(?:patrick|stephen)'?s\s+day|bonfire\s+night|"
    + _MORE_HOLIDAYS
    + ")"
)
_ANCHORED_SPAN = (
    rf"(?:the\s+)?(?:(?:{_COUNT_WORDS})\s+(?:days?|nights?|weeks?)|day|night|week|weekend"
    rf"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s+(?:before|after)\s+(?:the\s+)?{_ANCHOR_DAY}"
)
_FIRST_LAST_DAY = re.compile(r"^(first|last) day of ([a-z]+)(?:,? (\d{4}))?$")
_LATER = re.compile(
    r"\b(?:(a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|\d+)\s+"
    r"(day|week|month|year)s?\s+later|the\s+next\s+(?:day|morning|afternoon|evening|night)"
    r"|the\s+following\s+(?:day|morning|afternoon|evening|night|week|month|year"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
    r"|that\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|the\s+(?:day|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s+after"
    r"(?=\s*(?:[,.;!?]|$)|\s+(?:and|but|so|then|too)\b)"
    r"|the\s+(?:day|night|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\s+before"
    r"(?=\s*(?:[,.;!?]|$)|\s+(?:and|but|so|then|too|as\s+well|to|for|with|at|in)\b))\b",
    re.I,
)
"""A time told from the one said before it in the same text ("we got there on Friday and
the next day we hiked", "two days later", "home for Thanksgiving, flying out the day
before"): read from that one, never from the day said."""
_RANGE = re.compile(r"^(.+?)\s+(?:to|through|until|till|and(?! a half)|-|\u2013)\s+(.+)$")
_DURATION = re.compile(
    r"^(?:(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:to|or|-)\s+)?"
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several|\d+)"
    r"\s+(?:day|week|month|year|hour|minute)s?$"
)
"""How long, not when: "three weeks", "four to six weeks"."""
_VAGUE = re.compile(r"^(?:other day|recently|lately|now|today's|these days|nowadays)$")
_DAY_OF_MONTH = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}\s+[a-z]{3}|[a-z]{3}\w*\s+\d{1,2}\b"
)
_EXPLICIT = re.compile(r"\b(?:\d{4}|last|next|this|ago|yesterday|tomorrow)\b")
_HOLIDAYS = {
    "new year's day": (1, 1), "new years day": (1, 1), "valentine's day": (2, 14),
    "valentines day": (2, 14), "st patrick's day": (3, 17), "st. patrick's day": (3, 17),
    "paddy's day": (3, 17), "patrick's day": (3, 17), "halloween": (10, 31),
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25),
    "xmas": (12, 25), "xmas day": (12, 25), "xmas eve": (12, 24), "valentine's": (2, 14),
    "valentines": (2, 14),
    "boxing day": (12, 26), "st stephen's day": (12, 26), "st. stephen's day": (12, 26),
    "stephen's day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31),
    "independence day": (7, 4), "fourth of july": (7, 4), "bonfire night": (11, 5),
    "canada day": (7, 1), "st david's day": (3, 1), "st. david's day": (3, 1),
    "juneteenth": (6, 19), "veterans day": (11, 11), "veterans' day": (11, 11),
    "remembrance day": (11, 11), "burns night": (1, 25), "st andrew's day": (11, 30),
    "st. andrew's day": (11, 30), "hogmanay": (12, 31), "april fools' day": (4, 1),
    "april fools day": (4, 1), "groundhog day": (2, 2), "nye": (12, 31),
    "australia day": (1, 26), "straya day": (1, 26), "anzac day": (4, 25),
    "waitangi day": (2, 6), "republic day": (1, 26), "gandhi jayanti": (10, 2),
    "may day": (5, 1),
}  # fmt: skip
_PLAIN_HOLIDAYS = {name.replace("'", ""): day for name, day in _HOLIDAYS.items()}
"""Holidays on a fixed day, also written without the apostrophe ("stephens day");
Easter's are reckoned (``dateutil.easter``), and those on the nth weekday of a month
below."""
_NTH_WEEKDAY_HOLIDAYS = {
    "memorial day": (5, 0, -1), "labor day": (9, 0, 1), "labour day": (9, 0, 1),
    "mlk day": (1, 0, 3), "martin luther king day": (1, 0, 3), "presidents day": (2, 0, 3),
    "presidents' day": (2, 0, 3), "president's day": (2, 0, 3), "columbus day": (10, 0, 2),
    "victoria day": (5, 0, -2), "mother's day": (5, 6, 2), "father's day": (6, 6, 3),
    "king's birthday": (6, 0, 2), "queen's birthday": (6, 0, 2), "melbourne cup": (11, 1, 1),
    "melbourne cup day": (11, 1, 1),
}  # fmt: skip
"""(month, weekday, nth; negative from the month's end) of holidays set that way (US,
Canadian and Australian ones; Victoria Day is the Monday before 25 May: the second last;
Mother's Day the US one; the King's Birthday the Australian second Monday of June)."""
_PLAIN_NTH = {name.replace("'", ""): rule for name, rule in _NTH_WEEKDAY_HOLIDAYS.items()}
_EASTER = {"easter": 0, "easter sunday": 0, "easter monday": 1, "good friday": -2}

_APPOINTMENT = (
    r"(?:(?:a|an|my|our|the|his|her|their)\s+)?(?:[\w-]+\s+){0,3}?(?:appointment|assessment"
    r"|interview|mediation|exam|scan|meeting|hearing|surgery|op|operation|check-?up|review"
    r"|session|consult(?:ation)?|class|shift|audition|viva|trial|test|induction|orientation)"
)
"""Something booked for a time, as its noun ("my pre-op assessment", "mediation")."""
_APPOINTMENT_AT = _APPOINTMENT + r"\s+(?:on|at|this|next|tomorrow)\b"
_FUTURE = re.compile(
    r"\b(?:will|won't|'ll|let's|let us|going to|gonna|plan(?:ning)? to|hope to|hopefully|next"
    r"|upcoming|coming"
    # a plan told by its verb alone: "landing 16 dec, flying back 2 jan", "Fly out Saturday"
    r"|^(?:landing|flying(?:\s+back)?|leaving|arriving|signing|heading|travell?ing|moving)\b"
    r"|^(?:fly|leave|land|arrive|head|drive)\s+(?:out|back|home|up|down|off|in|to|from)\b"
    # "we'd drive down on Wednesday" (would, not had: no participle follows)
    r"|(?:i|we|you|they|he|she)(?:'d|\s+would)\s+(?!(?:(?:all|both|also|really|probably)\s+)?"
    r"(?:been|gone|done|seen|had|left|made|taken"
    r"|got|gotten|given|known|come|become|found|heard|met|told|said|bought|sent|spent|won|lost"
    r"|eaten|driven|written|forgotten|ridden|run|already|just|never|ever)\b)[a-z]+(?<!ed)\b"
    r"|aim(?:ing)? to|want(?:s)? (?:me|us|him|her|them|to)|due to|booked|scheduled"
    r"|(?:i'm|i am|we're|we are|they're|he's|she's|you're|you are)\s+(?!\w+ed\b)\w+ing"
    r"|\w+\s+ha(?:ve|s)\s+(?:a|an|my|our|your|his|her|their)(?:\s+[\w-]+){1,6}?\s+(?:on|at|this|next)"
    # "I've got a dentist appointment on Friday", "Got my pre-op assessment on the 6th"
    r"|(?:\w+\s+(?:have|has)\s+|\w+['\u2019](?:ve|s)\s+|^)got\s+(?:a|an|my|our|your|his|her|their|the)"
    r"(?:\s+[\w-]+){1,6}?\s+(?:on|at|this|next)\b"
    r"|^got\s+" + _APPOINTMENT + r"\s+(?:on|at|this|next)\b"
    r"|(?:i|we|they|you)\s+(?:only\s+|just\s+|finally\s+|still\s+|now\s+)?(?:move|fly|leave|start"
    r"|finish|arrive|land|travel|drive|head|go\s+back"
    r"|come\s+back|get\s+back|close|open|exchange|complete)\s+(?:\w+\s+){0,3}?(?:on|this|next|tomorrow"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|the\s+\d{1,2}(?:st|nd|rd|th))\b"
    r"|^(?:start|move|fly|leave|arrive|land)\s+(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)\b"
    # a plan told without its subject: "start gp on wednesday", "back monday morning"
    r"|^(?:start|move|fly|leave|arrive|land|finish)\s+(?:[\w&-]+\s+){0,3}?(?:on\s+)?"
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow)\b"
    r"|^back\s+(?:on\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow)\b"
    # a plan proposed: "can we go up to mums on saturday morning"
    r"|^(?:can|could|shall)\s+(?:we|i)\s+(?!have\b)"
    r"|\bstarting\s+(?:on\s+|this\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow)\b"
    r"|going\s+(?:up|from|to)\b|(?:rising|changing|moving|switching|increasing)\s+(?:from|to)\b"
    r"|(?:are|is)\s+(?:you|we|they|he|she)\s+(?:\w+ing)\b"
    r"|(?:i'm|i am|we're|we are|they're|he's|she's)\s+(?:back|off|away|home|free|out|around|up)"
    r"\s+(?:(?:on|from|until|till|for|over)\s+)?(?:the\s+)?(?:\w+day|\d+(?:st|nd|rd|th)?"
    r"|[a-z]+'s\s+day|christmas|easter|new\s+year|weekend|next|this|tomorrow|tonight)"
    r"|\s+away\b"
    r"|(?:is|are)\s+(?:this\s+|next\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|'s\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day(?=\s*(?:[,.!?;]|$|morning|afternoon|evening"
    r"|night|at\b))"
    r"|(?:'s|is|are|'re)\s+(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"|(?:'s|is|are|'re)\s+(?:on|in\s+(?:january|february|march|april|may|june|july|august"
    r"|september|october|november|december|the\s+(?:spring|summer|autumn|fall|winter)))"
    r"|(?:starts|begins|opens|leaves|arrives|lands|kicks off|ends|expires"
    r"|closes|finishes|renews))\b",
    re.I,
)
"""Words of a sentence about what is to come ("I'm flying up on the Friday"); a dated
thing told in the present is scheduled ("It's on the 27th of October", "She starts on
the 13th", "the wedding's in May", "my lease ends in March", "I have a job interview on
Monday", "I'm back Monday night", "the wedding is two weeks away", "move in is the 22nd",
"hopefully signing on friday", "landing 16 dec")."""
_PAST = re.compile(
    r"\b(?:was|were|did|had|took|went|came|began|bought|left|made|met|said|told|saw"
    r"|found|gave|ran|sold|won|lost|spent|brought|thought|felt|heard|kept|sent|flew|rang|sang"
    r"|ate|wrote|drove|rode|broke|chose|fell|forgot|grew|held|knew|led|meant|paid|rose"
    r"|shook|slept|spoke|stood|taught|threw|woke|built|caught|fought|sat|stuck|swam|became"
    # "got", but not the "got" of "have got", or of an appointment told without its subject
    # ("Got mediation on Friday")
    r"|(?<!['\u2019]ve )(?<!\bhave )(?<!\bhas )(?<!['\u2019]s )"
    r"(?:(?<![a-z] )(?<![a-z])got(?!\s+" + _APPOINTMENT_AT + r")|(?<=[a-z] )got)"
    # not a participle after "be" or "get": "we're getting married", "I'm booked"
    r"|(?<!\bam )(?<!'m )(?<!\bare )(?<!'re )(?<!\bis )(?<!\bbe )(?<!being )"
    r"(?<!\bget )(?<!getting )"
    r"(?!(?:need|feed|seed|speed|bed|red|indeed|proceed|exceed|succeed|weed)\b)\w+ed)\b",
    re.I,
)
"""Past-tense words: a sentence holding one tells of what has been ("Mick started on
Monday"), whatever other words it has."""
_SCHEDULED = re.compile(
    r"\b(?:is|are|'s|'re|comes?|starts?|begins?|ends?|opens?|closes?|arrives?|leaves?"
    r"|happens?|finishes|due)\b",
    re.I,
)
"""Present-tense words of what is set to happen at a time ("the exam is in a fortnight",
"the results come out in two weeks")."""
_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+|$)")


def is_past(sentence: str) -> bool:
    """Whether ``sentence`` has a word in the past tense (see :data:`_PAST`)."""
    return bool(_PAST.search(sentence))


def is_future(sentence: str) -> bool:
    """Whether ``sentence`` speaks of what is to come (then a bare "Friday" is the next)."""
    return bool(_FUTURE.search(sentence.lstrip(" ,;"))) and not _PAST.search(sentence)


_WEEKDAY_WORD = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
"""A weekday's name, as a piece of a pattern."""


def _proposed(text: str, start: int, span: str) -> bool:
    """Whether a bare weekday is asked of in a question of no past ("Eldo Sunday?",
    "drinks Friday?"; not "how was Saturday?", "still recovering from Saturday?" or a bare
    "Tuesday??"): a plan, so the one to come."""
    sentence = sentence_of(text, start, start + len(span))
    asked = sentence.group(0) if sentence else text
    return (
        bool(re.fullmatch(rf"(?i)(?:on\s+)?{_WEEKDAY_WORD}", span.strip()))
        and asked.rstrip().endswith("?")
        # something proposed with it: "Eldo Sunday?"; "Tuesday??" alone asks which day
        and len(re.findall(r"[a-z]+", asked.lower().replace(span.strip().lower(), ""))) > 0
        and not _PAST.search(asked)
        and not re.search(r"(?i)\b(?:did|was|were|had)n['\u2019]?t\b", asked)
        and not re.search(r"(?i)\b(?:from|since|after)\s+$", text[:start])
    )


def _named_as(text: str, start: int, span: str, clause: str) -> bool:
    """Whether a bare weekday is the subject of a present "is" in a clause of no past
    ("Friday is my last day at work", "Saturday's the big day"): the one to come (not any
    one: "1am on a Friday is a festival")."""
    return (
        bool(re.fullmatch(rf"(?i){_WEEKDAY_WORD}", span.strip()))
        and not re.search(r"(?i)\b(?:a|any|every|each)\s+$", text[:start])
        and bool(re.match(r"(?i)\s*(?:is\b|['\u2019]s\b)", text[start + len(span) :]))
        and not _PAST.search(clause)
    )


_AT_CLOCK = re.compile(
    r"^\s*[,!]*\s*(?:at\s+)?(?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)\b|noon\b)"
    r"|^\s*,?\s*at\s+\d{1,2}(?::\d{2})?\b",
    re.I,
)


def _appointment(text: str, start: int, span: str, clause: str) -> bool:
    """Whether a bare weekday or day of the month is given with a clock time in a clause
    of no past ("Thursday at 10", "Mvule Ventures on Thursday, 10am", "16th, 2.30pm"): an
    appointment, so the one to come ("Saturday 1pm" read as one span too)."""
    day = _without_clock(span.strip().lower())
    return (
        bool(
            re.fullmatch(
                rf"(?:on\s+)?(?:the\s+)?(?:{_WEEKDAY_WORD}|\d{{1,2}}(?:st|nd|rd|th))",
                day,
            )
        )
        and (day != span.strip().lower() or bool(_AT_CLOCK.match(text[start + len(span) :])))
        and not _PAST.search(clause)
        and not re.search(r"(?i)\bborn\b", clause)  # "born Thursday at 4:12am"
    )


def _past_on(text: str, start: int, span: str, clause: str) -> bool:
    """Whether the time at ``text[start:]`` is the day something happened: "on" it, in a
    ``clause`` in the past tense and of nothing to come ("we landed back on the 27th";
    not "they've moved everyone to the 12th of July")."""
    before = text[max(0, start - 4) : start].lower()
    on = span.lower().startswith("on ") or before.endswith("on ")
    return on and bool(_PAST.search(clause)) and not _FUTURE.search(clause)


_REPORTED = re.compile(
    r"(?i)\b(?:said|says|confirmed|confirms|told\s+(?:me|us|him|her|them)|mentioned|reckons"
    r"|thinks|heard|found\s+out|emailed\s+(?:me|us)|texted\s+(?:me|us))\s+(?:that\s+)?"
    r"(?=(?:\w+\s+){0,4}\w+(?:\s+(?:is|are|will|starts?|begins?)\b|['\u2019](?:s|re)\b))"
)
"""A verb reporting what another said, before a clause in the present or future ("Ray
confirmed the install is …", "she said the party's on …")."""
_CLAUSE_BREAK = re.compile(r",|;|\b(?:and|but|so)\b")


def sentence_of(text: str, start: int, end: int) -> re.Match[str] | None:
    """The sentence of ``text`` (split at . ! ?) holding ``[start, end)``."""
    return next(
        (m for m in _SENTENCE.finditer(text) if m.start() <= start and end <= m.end()), None
    )


def reported_from(text: str, start: int, end: int) -> int | None:
    """Where the clause a reporting verb reports begins, when the time at ``[start,
    end)`` is in one ("Ray confirmed the install is the day after Thanksgiving": the
    tense is the reported clause's, not the reporting verb's); None otherwise."""
    told = sentence_of(text, start, end)
    reported = list(_REPORTED.finditer(text, told.start() if told else 0, start))
    return reported[-1].end() if reported else None


def clause_of(text: str, start: int, end: int) -> str:
    """The clause of ``text`` holding ``[start, end)``: its sentence, cut at commas and
    "and", "but", "so" ("I applied … and they want me back on Thursday": the second
    clause's tense is the one that dates Thursday)."""
    m = sentence_of(text, start, end)
    if m is None:
        return text
    cuts = [
        m.start(),
        *(m.start() + b.start() for b in _CLAUSE_BREAK.finditer(m.group(0))),
        m.end(),
    ]
    for left, right in itertools.pairwise(cuts):
        if left <= start and end <= right:
            return text[left:right]
    return m.group(0)


def _today_of_ago(text: str, start: int, span: str) -> bool:
    """Whether ``span`` is the "today" of "two weeks ago today" or "ten days old today"
    (or the "yesterday" of "a week ago yesterday"), read whole with the words before it:
    no time of its own."""
    return (span.lower() == "today" and text[:start].lower().endswith(("ago ", "old "))) or (
        span.lower() == "yesterday" and text[:start].lower().endswith("ago ")
    )


class When:
    """Resolves the times in texts; one per process (the dateparser parsers are cached)."""

    def mentions(
        self, text: str, said_at: datetime, parse: Callable[[str], Any] | None = None
    ) -> list[Mention]:
        """Every time ``text`` names, resolved against ``said_at``, in the order said.
        ``parse`` is spaCy's English pipeline (or a function returning its parse); without
        it a pattern finds the spans. A text with no word of time is not parsed at all."""
        out: list[Mention] = []
        if not _TIME_WORD.search(text):
            return out
        entities, patterns = _spans(text, parse)
        resolved: list[tuple[int, int]] = []
        # A pattern's longer span wins over a shorter entity inside it ("Easter Monday"
        # over "Monday", "the 4th of November" over "November").
        entities = [
            e
            for e in entities
            if not any(
                p[0] <= e[0] and e[1] <= p[1] and p[1] - p[0] > e[1] - e[0] for p in patterns
            )
        ]
        for start, end, span, sentence in entities:
            if _today_of_ago(text, start, span):
                continue
            mention = self._dated(text, start, span, sentence, said_at)
            if (
                mention is None
                and (day := _LAST_WEEKDAY.search(span))
                and day.start() > 0
                and not _TELLS_WHICH.search(span[: day.start()])
            ):
                # "the season Tuesday" ("our first callout of the season tuesday"): the day
                start, span = start + day.start(), day.group(0)
                mention = self._dated(text, start, span, sentence, said_at)
            if mention is not None:
                resolved.append((start, end))
                out.append(mention)
        # The pattern reads what the pipeline missed or could not resolve ("Day 10k").
        for start, end, span, sentence in patterns:
            if any(start < e and s < end for s, e in resolved) or _today_of_ago(text, start, span):
                continue
            mention = self._dated(text, start, span, sentence, said_at)
            if mention is not None:
                out.append(mention)
        for later in _LATER.finditer(text):
            # read from the time said last before it in the text, if any
            said = [(text.rfind(m.text, 0, later.start()), m) for m in out]
            anchor = max(((at, m) for at, m in said if at >= 0), default=None, key=lambda p: p[0])
            if anchor is not None:
                with contextlib.suppress(OverflowError, ValueError):  # past year 9999
                    out.append(_later(later, anchor[1]))
        out = [_in_the_month_said(text, m, out) for m in out]
        out = [_after_the_day_said(text, m, out) for m in out]
        unique = {(m.start, m.end, m.granularity): m for m in reversed(out)}
        return [m for m in out if unique[(m.start, m.end, m.granularity)] is m]

    def _dated(
        self, text: str, start: int, span: str, clause: str, said_at: datetime
    ) -> Mention | None:
        """:meth:`_read`, or None for a time no date can hold ("9999 years ago", "in
        99999999 weeks' time"): such words name no time."""
        try:
            return self._read(text, start, span, clause, said_at)
        except (OverflowError, ValueError):
            return None

    def _read(
        self, text: str, start: int, span: str, clause: str, said_at: datetime
    ) -> Mention | None:
        """``span`` at ``text[start:]``, resolved with the tense of its ``clause``."""
        the_day = (_BARE_DAY.match(span) or re.fullmatch(r"(?i)(?:the\s+)?weekend", span)) and (
            span.lower().startswith("the") or text[:start].lower().endswith("the ")
        )
        if (_TOLD_FROM_ANOTHER.search(text[:start]) and _BARE_DAY.match(span)) or (
            the_day and _BEFORE_AFTER.match(text[start + len(span) :])
        ):
            # "back that Sunday", "the Monday after we arrived" (not "on Tuesday after
            # school"): told from another time
            return None
        if (running := _IN_SINCE.match(_clean(span))) or (
            (running := _FOR_SO_LONG.match(_clean(span)))
            and _count(running.group(1).rsplit(" ", 1)[0])
            and _BEEN_DOING.search(text[:start])
        ):
            began = self.resolve(f"{running.group(1)} ago", said_at)
            return None if began is None else dataclasses.replace(began, text=span)
        ahead = _AHEAD.match(_clean(span))
        said_in = bool(_IN_BEFORE.search(text[:start]) or re.match(r"(?i)in\s", span))
        after = text[start + len(span) :]
        forward = (
            _FROM_NOW.match(after)
            or re.search(r"(?i)\bfrom\s+(?:now|today|tomorrow)$", span)
            or span.endswith(("time", "away"))
            or (
                # "she's coming up in a couple of weeks", "the exam is in a fortnight",
                # "In ten days." on its own; not "four books in two weeks"
                said_in
                and (
                    is_future(clause)
                    or _SCHEDULED.search(clause)
                    or clause.strip().lower().startswith(span.strip().lower())
                )
                and not _PAST.search(clause)
            )
        )
        if ahead and forward:
            # "we leave in 3 days", "two weeks from now": counted forward from the day said
            # ("three weeks from tomorrow": from the day after)
            if re.search(r"(?i)\btomorrow$", span) or re.match(r"(?i)\s+from\s+tomorrow", after):
                said_at += timedelta(days=1)
            count = _count(ahead.group(1))
            unit = ahead.group(2)
            if unit == "fortnight":  # "we'll know in a fortnight"
                unit, count = "week", 2 * count
            if count and re.search(r"(?i)\bfrom\s+(?:today|tomorrow)$", span):
                # "a week from today", "a month from tomorrow": that very day
                day = said_at.date()
                if unit in ("month", "year"):
                    first = _add_months(day, count * (12 if unit == "year" else 1))
                    day = first.replace(day=min(day.day, _month(first.year, first.month)[1].day))
                else:
                    day += timedelta(days=count * _UNITS[unit])
                return Mention(span, day, day, "day")
            if count and " half " in f" {span} " and unit in ("week", "month"):
                # "two and a half weeks away": the week (or month) it falls in
                ahead_by = timedelta(days=count * _UNITS[unit] + _UNITS[unit] // 2)
                return _shifted(span, said_at.date() + ahead_by, unit, 0)
            if count:
                return _shifted(span, said_at.date(), unit, -count)
        if _JUST_GONE.match(text[start + len(span) :]) and re.match(r"(?i)this\s", span):
            # "this Sunday just gone": the last one
            gone = self.resolve("last " + span[5:], said_at)
            return None if gone is None else dataclasses.replace(gone, text=span)
        ago = _AGO.match(_clean(span)) or _OLD.match(_clean(span))
        if ago and (to_the_day := _TODAY_AFTER.match(text[start + len(span) :])):
            # "ten years ago today", "a month ago to the day": that very day; "a week ago
            # yesterday": from the day before
            back = 1 if to_the_day.group(0).strip().lower() == "yesterday" else 0
            anniversary = _to_the_day(
                ago.group(1), ago.group(2), said_at.date() - timedelta(days=back)
            )
            if anniversary is not None:
                return Mention(span, anniversary, anniversary, "day")
        told = sentence_of(text, start, start + len(span))
        told_text = told.group(0) if told else clause
        cut = reported_from(text, start, start + len(span))
        if cut is not None and span in clause:
            clause = text[cut:start] + clause[clause.index(span) :]
            told_text = text[cut : told.end()] if told else clause
        lead = span.split()[0] if span.lower().startswith(("in ", "for ")) else ""
        future = (
            is_future(clause)
            or bool(
                _BOOKED_FOR.search(text[:start] + lead)
                and not re.match(r"(?i)(?:last|this past)\s", _clean(span))
            )
            or _proposed(text, start, span)
            or _appointment(text, start, span, clause)
            or _named_as(text, start, span, clause)
        )
        if not future and not _PAST.search(clause) and holiday(_clean(span), said_at.date(), True):
            # a holiday in a clause of no tense ("the clinic is closed for Presidents' Day",
            # "christmas eve night."): the nearest one
            return self._nearest_holiday(span, said_at)
        anchored = _ANCHORED.match(_clean(span))
        if (
            not future
            and not _PAST.search(told_text)
            and anchored
            and holiday(anchored.group(5), said_at.date(), True)
            and (near := self._nearest_holiday(anchored.group(5), said_at)) is not None
        ):
            # "the weekend after Memorial Day" in a sentence of no tense: from the nearest
            # one (not "We did, the weekend after Thanksgiving")
            return _from_anchor(span, anchored, near)
        return self.resolve(span, said_at, future, _past_on(text, start, span, clause))

    def _nearest_holiday(self, span: str, said_at: datetime) -> Mention | None:
        phrase = _clean(span)
        day = nearest_holiday(phrase, said_at.date())
        if day is None or re.match(r"(?:last|next|this)\s", phrase):
            return self.resolve(span, said_at)
        return Mention(span, day, day, "day")

    def resolve(
        self, span: str, said_at: datetime, future: bool = False, past: bool = False
    ) -> Mention | None:
        """The time ``span`` names, said at ``said_at``; ``future`` when its sentence
        speaks of what is to come (a bare "August" is then the next one), ``past`` when
        it tells on which day something happened (a day without a month is then the last
        one: "we landed back on the 27th")."""
        phrase = _clean(span)
        if (
            not phrase
            or _VAGUE.match(phrase)
            or _DURATION.match(phrase)
            or re.fullmatch(r"\d{1,2}\.?", phrase)  # a clock's hour ("at 9."), not a month
        ):
            return None
        if phrase.endswith(" later") or _LATER.fullmatch(span.strip().rstrip(".,!?;:")):
            return None  # told from another time, not from the day said (see mentions)
        if _COMING_DAY.match(phrase):  # "this coming Friday": the next one
            phrase, future = phrase.replace("this coming", "this", 1), True
        today = said_at.date()
        if _HOURS_AGO.match(phrase):
            # "an hour ago", "ten minutes ago": the day it was then
            count = _count(phrase.rsplit(" ", 2)[0]) or 1
            hours = count if re.search(r"\bhours?\b", phrase) else 0
            day = (said_at - timedelta(hours=hours)).date()
            return Mention(span, day, day, "day")
        if (anchored := _ANCHORED.match(phrase)) and (
            anchor := self.resolve(anchored.group(5), said_at, future, past)
        ):
            return _from_anchor(span, anchored, anchor)
        ranged = _RANGE.match(phrase)
        if ranged and not _AGO.match(phrase):
            # "the 2nd to the 9th of October": the start, with the end's month and year.
            first, last = ranged.groups()
            context = [
                w for w in re.findall(r"\w+", last) if w in _MONTHS or re.fullmatch(r"\d{4}", w)
            ]
            day_only = re.fullmatch(r"(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?", first)
            phrase = " ".join([first, *context]) if day_only else first
        return (
            self._own(phrase, span, today, future, past)
            or self._parsed(phrase, span, said_at, future)
        )  # fmt: skip

    def _own(
        self, phrase: str, span: str, today: date, future: bool, past: bool = False
    ) -> Mention | None:
        """What dateparser reads poorly: seasons, weekends, month edges, "before last",
        counted "ago"s in words."""
        edge = _EDGE.match(phrase)
        if edge and (near := _EDGE_OF_MONTH.match(phrase[edge.end() :])):
            # "at the end of last month": that month (its edge is not said to the day)
            step = {"last": -1, "this": 0, "the": 0, "next": 1}[near.group(1)]
            first_of = _add_months(today.replace(day=1), step)
            first, last = _month(first_of.year, first_of.month)
            return Mention(span, first, last, "month")
        if edge and (near := _EDGE_OF_WEEK.match(phrase[edge.end() :])):
            # "by the end of next week": that week
            step = {"last": -1, "this": 0, "the": 0, "next": 1}[near.group(1)]
            first, last = week_of(today + timedelta(days=7 * step))
            return Mention(span, first, last, "week")
        if edge and _EDGE_OF_YEAR.match(phrase[edge.end() :]):
            # "at the start of the year": its first month (or last), this year's unless
            # the sentence looks ahead to the next one's start or back to the last one's end
            opening = not edge.group(1).endswith("end of")
            year = today.year + (1 if future and opening else 0) - (0 if future or opening else 1)
            first, last = _month(year, 1 if opening else 12)
            return Mention(span, first, last, "month")
        if phrase in _PAST_WEEKEND and re.search(r"(?i)\b(?:the|past)\s+weekend\b", span):
            ahead = future and phrase == "weekend"
            shift = (5 - today.weekday()) % 7 if ahead else -((today.weekday() - 5) % 7)
            saturday = today + timedelta(days=shift)
            return Mention(span, saturday, saturday + timedelta(days=1), "week")
        if phrase == "week after next":
            first, last = week_of(today + timedelta(days=14))
            return Mention(span, first, last, "week")
        if phrase == "this time last year":
            first, last = _month(today.year - 1, today.month)
            return Mention(span, first, last, "month")
        if m := _NTH_WEEKDAY.match(phrase):
            return _nth_weekday(m, span, today, future, past)
        if m := _AND_A_HALF.match(phrase):
            # "a year and a half ago": eighteen months back; "a month and a half": six weeks
            count = _count(m.group(1))
            if count and m.group(2) == "year":
                return _shifted(span, today, "month", 12 * count + 6)
            if count:
                return _shifted(span, today, "week", round((30 * count + 15) / 7))
        if m := _HALF_AGO.match(phrase):
            # "half a year ago": six months back; "half a month ago": two weeks
            if m.group(1) == "year":
                return _shifted(span, today, "month", 6)
            return _shifted(span, today, "week", 2)
        if m := _OR_TWO.match(phrase):
            # "a day or two ago": the two days before today (or the two weeks)
            length = 1 if m.group(1) == "day" else 7
            first = today - timedelta(days=2 * length) + timedelta(days=0 if length == 1 else 1)
            return Mention(span, first, today - timedelta(days=length), "week")
        if m := _SHORT_YEAR.match(phrase):
            # "in '92": the last year ending so, this one at the latest
            year = 2000 + int(m.group(1))
            year -= 100 if year > today.year else 0
            return Mention(span, date(year, 1, 1), date(year, 12, 31), "year")
        if edge and phrase[edge.end() :] in _MONTHS:
            month = _MONTHS[phrase[edge.end() :]]
            year = _year_of_month(month, today, future)
            first, last = _month(year, month)
            return Mention(span, first, last, "month")
        if phrase in _SEASONS or phrase.endswith(tuple(f" {s}" for s in _SEASONS)):
            return _season(phrase, span, today, future)
        if m := _RELATIVE.match(phrase):
            which, unit = m.groups()
            step = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[which]
            if unit == "weekend":
                saturday = today + timedelta(days=(5 - today.weekday()) % 7 + 7 * step)
                if step == -1 and today.weekday() == 6:
                    saturday -= timedelta(days=7)  # said on a Sunday: not this one
                if step == 0 and today.weekday() == 6:
                    saturday = today - timedelta(days=1)
                return Mention(span, saturday, saturday + timedelta(days=1), "week")
            if unit in _SEASONS:
                return _season(f"{which} {unit}", span, today, future)
            if step < 0 and unit in _WEEKDAYS:
                # "last Monday": the one before yesterday's, said the day after (yesterday
                # would be "yesterday"; "thirty-one meetings since last Monday" said on a
                # Tuesday), but "this past Monday" is the one just gone
                back = (today.weekday() - _WEEKDAYS.index(unit)) % 7 or 7
                if back == 1 and "past" not in span.lower():
                    back = 8
                day = today - timedelta(days=back)
                return Mention(span, day, day, "day")
            if step > 0 and which == "next" and unit in _WEEKDAYS:
                # "next Thursday" said on a Wednesday: the week after (tomorrow would be
                # "tomorrow"), as "last Monday" said on a Tuesday is the week before
                days_on = (_WEEKDAYS.index(unit) - today.weekday()) % 7 or 7
                day = today + timedelta(days=8 if days_on == 1 else days_on)
                return Mention(span, day, day, "day")
            if unit in _MONTH_NAMES and (unit != "may" or "May" in span):  # not "this may be"
                # "last October": the last one before this month; "next March", "this
                # coming May": the first one after it; "this June": this year's
                month = _MONTHS[unit]
                year = today.year
                if step < 0:
                    year -= 1 if month >= today.month else 0
                elif step > 0:
                    year += 1 if month <= today.month else 0
                first, last = _month(year, month)
                return Mention(span, first, last, "month")
        rest = phrase[edge.end() :] if edge else ""
        near_year = re.fullmatch(r"(last|this|next) year", rest)
        if edge and (re.fullmatch(r"\d{4}", rest) or near_year):
            # "late 2022", "early last year": the third of that year it names
            step = {"last": -1, "this": 0, "next": 1}[near_year.group(1)] if near_year else 0
            year = today.year + step if near_year else int(rest)
            third = next((_THIRDS[w] for w in edge.group(1).split() if w in _THIRDS), 1)
            first = date(year, 1 + 4 * third, 1)
            return Mention(span, first, _add_months(first, 4) - timedelta(days=1), "season")
        if m := _WEEK_OF_MONTH.match(phrase):
            # "the first week of June": its days 1-7, 8-14, …, or its last seven
            month = _MONTHS[m.group(2)]
            year = int(m.group(3)) if m.group(3) else _year_of_month(month, today, future)
            first_of, last_of = _month(year, month)
            n = _NTH_WEEK[m.group(1)]
            start = last_of - timedelta(days=6) if n < 0 else first_of + timedelta(days=7 * n)
            return Mention(span, start, min(start + timedelta(days=6), last_of), "week")
        if m := _SEASON_OF.match(phrase):
            # "the summer of 2021", "the summer of '21" (the last year ending so)
            year = int(m.group(2).lstrip("'"))
            if year < 100:
                year += 2000 - (100 if 2000 + year > today.year else 0)
            start = date(year, _SEASONS[m.group(1)], 1)
            return Mention(span, start, _add_months(start, 3) - timedelta(days=1), "season")
        if m := _UNITS_AGO.match(phrase):
            # "three weekends ago", "two summers ago"
            count = _count(m.group(1))
            if count and m.group(2) == "weekend":
                saturday = today - timedelta(days=(today.weekday() - 5) % 7 + 7 * (count - 1))
                if today.weekday() >= 5:
                    saturday -= timedelta(days=7)
                return Mention(span, saturday, saturday + timedelta(days=1), "week")
            if count and m.group(2) in _WEEKDAYS:
                # "two Saturdays ago": the last Saturday before today, a week earlier
                weekday = _WEEKDAYS.index(m.group(2))
                back = (today.weekday() - weekday - 1) % 7 + 1 + 7 * (count - 1)
                weekday_then = today - timedelta(days=back)
                return Mention(span, weekday_then, weekday_then, "day")
            if count and m.group(2) in _SEASONS:
                previous = _season(f"last {m.group(2)}", span, today, future)
                if previous is not None:
                    start = previous.start.replace(year=previous.start.year - (count - 1))
                    return Mention(span, start, _add_months(start, 3) - timedelta(days=1), "season")
        if (m := _DAY_OF_WEEK.match(phrase)) and bool(m.group(2)) != bool(m.group(3)):
            # "Monday last week", "Friday next week", "the Thursday, week before last": that
            # day of that week
            shift = {"last": -7, "this": 0, "next": 7, "": -14}[m.group(2)]
            first, _ = week_of(today + timedelta(days=shift))
            day = first + timedelta(days=_WEEKDAYS.index(m.group(1)))
            return Mention(span, day, day, "day")
        if m := _COME_DAY.match(phrase):
            # "come Monday": the coming one; "Sunday last": the last one
            weekday = _WEEKDAYS.index(m.group(1) or m.group(2))
            shift = (
                (weekday - today.weekday()) % 7 or 7
                if m.group(1)
                else -((today.weekday() - weekday) % 7 or 7)
            )
            day = today + timedelta(days=shift)
            return Mention(span, day, day, "day")
        if m := _WEEK_FROM.match(phrase):
            # "a week yesterday" (British): a week before yesterday; "a fortnight tomorrow":
            # two weeks after tomorrow; "a month today": a month from today
            if m.group(1) == "month":
                if m.group(2) != "today":
                    return None
                month_on = _add_months(today.replace(day=1), 1)
                days_in = _month(month_on.year, month_on.month)[1].day
                day = month_on.replace(day=min(today.day, days_in))
                return Mention(span, day, day, "day")
            days = (8 if m.group(1) == "week" else 15) - (m.group(2) == "today")
            day = today + timedelta(days=-days if m.group(2) == "yesterday" else days)
            return Mention(span, day, day, "day")
        if m := _AFTER_NEXT.match(phrase):
            # "the Monday after next": the one after the coming one
            if m.group(1) == "weekend":
                saturday = today + timedelta(days=(5 - today.weekday()) % 7 + 7)
                return Mention(span, saturday, saturday + timedelta(days=1), "week")
            weekday = _WEEKDAYS.index(m.group(1))
            later = today + timedelta(days=((weekday - today.weekday()) % 7 or 7) + 7)
            return Mention(span, later, later, "day")
        noon = datetime(today.year, today.month, today.day, 12)
        if (m := _WEEK_LAST.match(phrase)) and (
            gone := self.resolve(f"last {m.group(2)}", noon)
        ) is not None:
            day = gone.start - timedelta(days=14 if m.group(1) == "fortnight" else 7)
            return Mention(span, day, day, "day")
        if (
            (m := _WEEK_HOLDING.match(phrase))
            and (held := self.resolve(m.group(2), noon, future, past)) is not None
            and held.granularity == "day"
        ):
            first, last = week_of(held.start)
            if m.group(1) == "weekend":
                first = first + timedelta(days=5)
            return Mention(span, first, last, "week")
        if m := _WEEK_ON.match(phrase):
            # "a week on Friday" (British): the Friday after the coming one; "a fortnight
            # from Saturday", "Saturday fortnight": a week later still
            weekday = _WEEKDAYS.index(m.group(2) or m.group(3))
            coming = today + timedelta(days=(weekday - today.weekday()) % 7 or 7)
            later = coming + timedelta(days=14 if "fortnight" in phrase else 7)
            return Mention(span, later, later, "day")
        if numeric := _NUMERIC.match(phrase):
            digits = _numeric_day(numeric, today, future, past)
            return Mention(span, digits, digits, "day") if digits else None
        said_with = _WEEKDAY_BEFORE_DATE.match(span.strip().lower().removeprefix("on "))
        named = _day_named(phrase, today, future, past, said_with[1] if said_with else None)
        if named is not None:
            return Mention(span, named, named, "day")
        fixed = holiday(phrase, today, future)
        if fixed is not None:
            return Mention(span, fixed, fixed, "day")
        if m := _IN_THE.match(phrase):
            # "earlier in the week", "later in the month": this one
            unit = m.group(2)
            if unit == "week":
                first, last = week_of(today)
                return Mention(span, first, last, "week")
            if unit == "month":
                first, last = _month(today.year, today.month)
                return Mention(span, first, last, "month")
            return Mention(span, date(today.year, 1, 1), date(today.year, 12, 31), "year")
        if (m := _FIRST_LAST_DAY.match(phrase)) and m.group(2) in _MONTHS:
            # "the last day of May": that day
            month = _MONTHS[m.group(2)]
            year = int(m.group(3)) if m.group(3) else _year_of_month(month, today, future)
            first, last = _month(year, month)
            edge_day = first if m.group(1) == "first" else last
            return Mention(span, edge_day, edge_day, "day")
        if m := _BEFORE_LAST.match(phrase):
            unit = m.group(1)
            if unit in _WEEKDAYS or unit == "weekend":
                # "the Friday before last": a week before last Friday
                weekday = 5 if unit == "weekend" else _WEEKDAYS.index(unit)
                day = today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1 + 7)
                end = day + timedelta(days=1 if unit == "weekend" else 0)
                return Mention(span, day, end, "week" if unit == "weekend" else "day")
            if unit in _SEASONS:  # "the summer before last": a year before last summer's
                previous = _season(f"last {unit}", span, today, future)
                if previous is not None:
                    start = previous.start.replace(year=previous.start.year - 1)
                    return Mention(span, start, _add_months(start, 3) - timedelta(days=1), "season")
            return _shifted(span, today, "day" if unit == "night" else unit, 2)
        if m := _AGO.match(phrase):
            count = _count(m.group(1))
            if count and m.group(2) == "fortnight":
                return _shifted(span, today, "week", 2 * count)
            if count:
                return _shifted(span, today, m.group(2), count)
        return None

    def _parsed(self, phrase: str, span: str, said_at: datetime, future: bool) -> Mention | None:
        base = said_at.replace(tzinfo=None)
        data = _parser(base, future).get_date_data(phrase)
        found, period = data.date_obj, data.period
        if found is None:
            return None
        day = found.date()
        if _DAY_OF_MONTH.search(phrase) and not _EXPLICIT.search(phrase):
            # "the 17th of October" said in July is the coming one, "the 6th" said on
            # the 14th the one just gone: a date without a year is the nearest.
            other = _parser(base, not future).get_date_data(phrase).date_obj
            if other is not None and abs(other.date() - base.date()) < abs(day - base.date()):
                day = other.date()
        if period == "year" or re.fullmatch(r"(?:in\s+)?\d{4}", phrase):
            return Mention(span, date(day.year, 1, 1), date(day.year, 12, 31), "year")
        if period == "month":
            first, last = _month(day.year, day.month)
            return Mention(span, first, last, "month")
        if period == "week":
            first, last = week_of(day)
            return Mention(span, first, last, "week")
        return Mention(span, day, day, "day")


_ORDINAL = re.compile(r"^(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)$")
_DAY_MONTH = re.compile(
    r"^(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)(?:,?\s+(\d{4}))?$"
)
_MONTH_DAY = re.compile(r"^([a-z]+)\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?$")


def _day_named(
    phrase: str, today: date, future: bool = False, past: bool = False, weekday: str | None = None
) -> date | None:
    """ "the 6th", "the 8th of July", "October 17th, 2023": the day named, in the month
    and year nearest ``today`` when they are not said (dateparser reads "the 6th" as June),
    among those falling on the ``weekday`` said with it when one is ("Thursday the 13th",
    "Saturday the 17th of September": the months or years when it does),
    the next one when the sentence speaks of the future ("It's on the 27th of October"
    said in January), the last one when something happened ``past`` on it ("we landed
    back on the 27th"; a past tense alone does not: "they've moved everyone to the 12th
    of July" names a day to come)."""
    shifts = range(-2, 3) if weekday else range(-1, 2)
    if m := _ORDINAL.match(phrase):
        months = range(-11, 12) if weekday else shifts
        candidates = [_on(today.year, today.month + shift, int(m.group(1))) for shift in months]
    elif (m := _DAY_MONTH.match(phrase)) and m.group(2) in _MONTHS:
        day, month, year = int(m.group(1)), _MONTHS[m.group(2)], m.group(3)
        years = [int(year)] if year else [today.year + shift for shift in shifts]
        candidates = [_on(y, month, day) for y in years]
    elif (m := _MONTH_DAY.match(phrase)) and m.group(1) in _MONTHS:
        day, month, year = int(m.group(2)), _MONTHS[m.group(1)], m.group(3)
        years = [int(year)] if year else [today.year + shift for shift in shifts]
        candidates = [_on(y, month, day) for y in years]
    else:
        return None
    found = [d for d in candidates if d is not None]
    if weekday and any(_WEEKDAYS[d.weekday()] == weekday for d in found):
        found = [d for d in found if _WEEKDAYS[d.weekday()] == weekday]
    return _nearest(found, today, future, past)


_NUMERIC = re.compile(r"^(?:to\s+|til\s+)?(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?$")
_NUMERIC_SPAN = (
    r"(?:on|by|from|until|till|til|since|for|to|(?:mon|tues|wednes|thurs|fri|satur|sun)day,?)"
    r"\s+\d{1,2}/\d{1,2}(?:/(?:\d{4}|\d{2}))?(?![\d/])"
)
"""A date in digits after a word that says a day follows ("we fly on 1/8", "closing moved
to 9/13", "Thursday 20/03"); "24/7" and "1/2 price" are not dates."""


def _numeric_day(m: re.Match[str], today: date, future: bool, past: bool) -> date | None:
    """ "1/8", "8/30", "12/8/24": day and month either way round (9/13 is American, 13/9
    European; 1/8 is either), the reading nearest ``today`` (ahead when ``future``, behind
    when ``past``), in the year said or the nearest."""
    first, second = int(m.group(1)), int(m.group(2))
    year = m.group(3)
    years = (
        [int(year) + (2000 if len(year) == 2 else 0)]
        if year
        else [today.year + s for s in (-1, 0, 1)]
    )
    found = [
        d
        for y in years
        for month, day in ((first, second), (second, first))
        if 1 <= month <= 12 and (d := _on(y, month, day)) is not None
    ]
    return _nearest(found, today, future, past)


def _nearest(found: list[date], today: date, future: bool, past: bool) -> date | None:
    """The day of ``found`` nearest ``today``: among those ahead when ``future``, behind
    when ``past`` (when there are any)."""
    if future and any(d >= today for d in found):
        found = [d for d in found if d >= today]
    elif past and any(d <= today for d in found):
        found = [d for d in found if d <= today]
    return min(found, key=lambda d: abs(d - today)) if found else None


def _on(year: int, month: int, day: int) -> date | None:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    try:
        return date(year, month, day)
    except ValueError:
        return None


def nearest_holiday(phrase: str, today: date) -> date | None:
    """The day of the holiday ``phrase`` names nearest ``today``, gone or to come (the one
    gone on a tie); None when it names none."""
    days = [d for ahead in (False, True) if (d := holiday(phrase, today, ahead))]
    return min(days, key=lambda d: abs(d - today)) if days else None


def holiday(phrase: str, today: date, future: bool) -> date | None:
    """The day a holiday named in ``phrase`` fell on (or falls on, when ``future``)
    nearest ``today``; ``last``/``next`` pick the one before or after."""
    from dateutil.easter import easter

    name = re.sub(r"^(?:last|next|this)\s+", "", phrase).replace("x-mas", "xmas")
    name = name.replace("'", "")
    if name in _PLAIN_HOLIDAYS:
        month, day = _PLAIN_HOLIDAYS[name]

        def on(year: int) -> date:
            return date(year, month, day)
    elif (nth := _PLAIN_NTH.get(name)) is not None:

        def on(year: int) -> date:
            month, weekday, which = nth
            if which > 0:
                first = date(year, month, 1)
                return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (which - 1))
            last = _month(year, month)[1]
            return last - timedelta(days=(last.weekday() - weekday) % 7 + 7 * (-which - 1))
    elif name in ("thanksgiving", "thanksgiving day"):

        def on(year: int) -> date:  # the fourth Thursday of November (US)
            first = date(year, 11, 1)
            return first + timedelta(days=(3 - first.weekday()) % 7 + 21)
    elif name in _EASTER:
        shift = _EASTER[name]

        def on(year: int) -> date:
            sunday: date = easter(year)
            return sunday + timedelta(days=shift)
    else:
        return None
    before = on(today.year) if on(today.year) <= today else on(today.year - 1)
    after = on(today.year) if on(today.year) >= today else on(today.year + 1)
    if phrase.startswith("last"):
        return before
    if phrase.startswith("next") or future:
        return after
    return before


_WEEKDAY_BEFORE_DATE = re.compile(
    r"^(?:the\s+)?((?:mon|tues|wednes|thurs|fri|satur|sun)day),?\s+(?!before\b|after\b)"
    r"(?=(?:the\s+)?\d|[a-z]+\s+\d)"
)
_SUFFIX = {1: "st", 2: "nd", 3: "rd"}
_ORDINAL_WORDS = {
    word: f"{i}{_SUFFIX.get(i, 'th')}"
    for i, word in enumerate(
        ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
         "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
         "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"),
        start=1,
    )
}  # fmt: skip
_WORD_ORDINAL = re.compile(r"\b(?:" + "|".join(_ORDINAL_WORDS) + r")\b(?= of\b)")


_CLOCK_AFTER = re.compile(
    rf"^(.*?{_DAY_NAME})\s*,?\s+(?:at\s+)?\d{{1,2}}(?:[:.]\d{{2}})?\s*(?:am|pm)?$"
)
"""A weekday with the clock time after it ("saturday 1pm", "friday at 10:30")."""


def _without_clock(phrase: str) -> str:
    return _CLOCK_AFTER.sub(lambda m: m.group(1), phrase)


def _clean(span: str) -> str:
    phrase = re.sub(r"\s+", " ", span.strip().lower().rstrip(".,!?;:"))
    phrase = phrase.replace("\u2019", "'")
    while (stripped := _LEAD.sub("", phrase)) != phrase:
        phrase = stripped
    phrase = _without_clock(phrase)  # "saturday 1pm", "friday at 10:30": the day
    phrase = _WEEKDAY_BEFORE_DATE.sub("", phrase)
    phrase = re.sub(r"\s+or\s+so\b", "", phrase)  # "a month or so ago"
    # "this past Sunday": the last one
    phrase = re.sub(rf"^(?:this |just )?past\s+(?={_DAY_NAME})", "last ", phrase)
    phrase = re.sub(rf"^(?:early|late)\s+(?={_DAY_NAME})", "", phrase)  # "early tuesday morning"
    phrase = _SHORT_DAY.sub(lambda m: _SHORT_DAYS[m.group(1)], phrase)
    phrase = _WORD_ORDINAL.sub(lambda m: _ORDINAL_WORDS[m.group(0)], phrase)
    if re.match(r"\d{1,2}(?:st|nd|rd|th)\b", phrase):
        phrase = f"the {phrase}"  # "6th" alone reads as June to dateparser
    return phrase


def _year_of_month(month: int, today: date, future: bool) -> int:
    if future:
        return today.year if month >= today.month else today.year + 1
    return today.year if month <= today.month else today.year - 1


def _season(phrase: str, span: str, today: date, future: bool) -> Mention | None:
    """ "last summer", "this winter", "next spring", or a bare season (the one under way,
    else the last one, or the next one when the sentence speaks of the future)."""
    which, _, name = phrase.rpartition(" ")
    first_month = _SEASONS.get(name)
    if first_month is None:
        return None
    year = today.year if (today.month, today.day) >= (first_month, 1) else today.year - 1
    latest = date(year, first_month, 1)  # the last start on or before today
    under_way = today < _add_months(latest, 3)
    upcoming = latest.replace(year=latest.year + 1)
    this = latest if under_way or upcoming.year != today.year else upcoming
    modifier = which.split()[-1] if which else ""
    if modifier in ("last", "past"):
        start = latest.replace(year=latest.year - 1) if under_way else latest
    elif modifier == "this":
        start = this
    elif modifier in ("next", "coming"):
        start = this.replace(year=this.year + 1)
    else:
        start = latest if under_way or not future else upcoming
    return Mention(span, start, _add_months(start, 3) - timedelta(days=1), "season")


_THE_WEEKDAY = re.compile(rf"(?i)(?:on\s+)?the\s+{_DAY_NAME}")


_BARE_ORDINAL = re.compile(r"(?i)(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)")
_NAMES_MONTH = re.compile(rf"(?i)\b{_MONTH_WORD}(?![a-z])")


def _said_before(
    text: str, at: int, said: Sequence[Mention], keep: Callable[[Mention, int], bool]
) -> Mention | None:
    """The mention of ``said`` found last in ``text`` before ``at`` that ``keep`` accepts
    (given where it is found); None when there is none."""
    before = [(where, m) for m in said if 0 <= (where := text.find(m.text)) < at and keep(m, where)]
    return max(before, key=lambda p: p[0])[1] if before else None


def _in_the_month_said(text: str, mention: Mention, said: Sequence[Mention]) -> Mention:
    """A later day of the month alone ("the 17th") after a day said with its month in the
    same sentence ("She starts the 2nd of April, I fly out on the 6th", "leaving September
    10, back the 24th"): that month's; ``mention`` itself otherwise."""
    ordinal = _BARE_ORDINAL.fullmatch(mention.text.strip())
    at = text.find(mention.text)
    sentence = sentence_of(text, at, at + len(mention.text)) if at >= 0 else None
    if ordinal is None or sentence is None:
        return mention
    said_first = _said_before(
        text, at, said,
        lambda m, where: m.granularity == "day" and bool(_NAMES_MONTH.search(m.text))
        and where >= sentence.start(),
    )  # fmt: skip
    if said_first is None:
        return mention
    anchor = said_first.start
    if int(ordinal.group(1)) <= anchor.day:
        return mention
    day = _on(anchor.year, anchor.month, int(ordinal.group(1)))
    return mention if day is None else Mention(mention.text, day, day, "day")


def _after_the_day_said(text: str, mention: Mention, said: Sequence[Mention]) -> Mention:
    """ "the Thursday" after a day said before it in the same text ("the operation was on
    the 11th, and they sent him home on the Thursday"): the first one after that day, or
    the one inside a week or weekend said in its sentence ("the weekend before Easter, on the
    Saturday"); ``mention`` itself otherwise."""
    weekday = _THE_WEEKDAY.fullmatch(mention.text.strip())
    at = text.find(mention.text)
    sentence = sentence_of(text, at, at + len(mention.text)) if at >= 0 else None
    if weekday is None or sentence is None:
        return mention
    anchor = _said_before(
        text, at, said,
        lambda m, where: not _THE_WEEKDAY.fullmatch(m.text.strip())
        and (m.granularity == "day" or (m.granularity == "week" and m.days <= 7
                                        and where >= sentence.start())),
    )  # fmt: skip
    if anchor is None:
        return mention
    wanted = _WEEKDAYS.index(weekday.group(1).lower())
    if anchor.granularity == "week":
        # "the weekend before Easter, on the Saturday": that weekend's (or week's) own
        inside = anchor.start + timedelta(days=(wanted - anchor.start.weekday()) % 7)
        return Mention(mention.text, inside, inside, "day") if inside <= anchor.end else mention
    day = anchor.start + timedelta(days=(wanted - anchor.start.weekday()) % 7 or 7)
    return Mention(mention.text, day, day, "day")


def _later(later: re.Match[str], anchor: Mention) -> Mention:
    """ "two days later", "the next day", "the following week", "the following Friday",
    "the day before", "the Thursday before", "that Sunday": counted from the first day of
    ``anchor``."""
    words = later.group(0).lower().split()
    if later.group(2):
        count = COUNTS.get(later.group(1).lower()) or (
            int(later.group(1)) if later.group(1).isdigit() else 1
        )
        return _shifted(later.group(0), anchor.start, later.group(2).lower(), -count)
    if words[-1] == "after" and words[-2] in _WEEKDAYS:  # "the Monday after"
        ahead = (_WEEKDAYS.index(words[-2]) - anchor.start.weekday()) % 7 or 7
        day = anchor.start + timedelta(days=ahead)
        return Mention(later.group(0), day, day, "day")
    if words[-1] == "before":  # "the day before", "the Thursday before"
        back = (
            (anchor.start.weekday() - _WEEKDAYS.index(words[-2])) % 7 or 7
            if words[-2] in _WEEKDAYS
            else 1
        )
        day = anchor.start - timedelta(days=back)
        return Mention(later.group(0), day, day, "day")
    if words[-1] in _WEEKDAYS:
        # "the following Friday": after it; "that Sunday": the one in the days from it
        ahead = (_WEEKDAYS.index(words[-1]) - anchor.start.weekday()) % 7 or (
            0 if words[0] == "that" else 7
        )
        day = anchor.start + timedelta(days=ahead)
        return Mention(later.group(0), day, day, "day")
    unit = words[-1] if words[-1] in ("week", "month", "year") else "day"
    return _shifted(later.group(0), anchor.start, unit, -1)


def _from_anchor(span: str, m: re.Match[str], anchor: Mention) -> Mention | None:
    """ "the day after June 1st", "two days before Christmas", "the week before the 9th",
    "the Friday before 2 June", "the weekend after the 20th": told from the day named
    (``anchor``), which must be a day."""
    if anchor.granularity != "day":
        return None
    sign = -1 if m.group(4) == "before" else 1
    day = anchor.start
    count = _count(m.group(1)) if m.group(1) else 1
    unit = m.group(2) or m.group(3)
    if unit in ("day", "night"):
        shifted = day + timedelta(days=sign * count)
        return Mention(span, shifted, shifted, "day")
    if unit == "week" and not m.group(1):
        # "the week before X": the seven days before it (or after)
        first, last = sorted((day + timedelta(days=sign), day + timedelta(days=7 * sign)))
        return Mention(span, first, last, "week")
    if unit == "week":
        first, last = week_of(day + timedelta(days=7 * sign * count))
        return Mention(span, first, last, "week")
    weekday = 5 if unit == "weekend" else _WEEKDAYS.index(unit)
    if sign < 0:
        then = day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)
        then -= timedelta(days=7 if unit == "weekend" and day.weekday() == 6 else 0)
    else:
        then = day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)
    if unit == "weekend":
        return Mention(span, then, then + timedelta(days=1), "week")
    return Mention(span, then, then, "day")


def _nth_weekday(m: re.Match[str], span: str, today: date, future: bool, past: bool) -> Mention:
    """ "the first Monday of June", "the last Friday of the month": that day; in a month
    named without a year, the nearest one unless the tense says which."""

    weekend = m.group(2) == "weekend"

    def in_month(year: int, month: int) -> date:
        nth = _NTH_WEEK[m.group(1)]
        weekday = 5 if weekend else _WEEKDAYS.index(m.group(2))
        first_of, last_of = _month(year, month)
        if nth < 0:
            return last_of - timedelta(days=(last_of.weekday() - weekday) % 7)
        return first_of + timedelta(days=(weekday - first_of.weekday()) % 7 + 7 * nth)

    if m.group(3):
        step = {"the": 0, "this": 0, "next": 1, "last": -1}[m.group(3)]
        first_of = _add_months(today.replace(day=1), step)
        day = in_month(first_of.year, first_of.month)
    elif m.group(5):
        day = in_month(int(m.group(5)), _MONTHS.get(m.group(4), today.month))
    else:
        month = _MONTHS.get(m.group(4), today.month)
        days = [in_month(_year_of_month(month, today, ahead), month) for ahead in (False, True)]
        day = days[1] if future else days[0] if past else min(days, key=lambda d: abs(d - today))
    if weekend:  # "the second weekend of July": its Saturday and Sunday
        return Mention(span, day, day + timedelta(days=1), "week")
    return Mention(span, day, day, "day")


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _count(words: str) -> int:
    """A count said in words or digits ("a couple of", "three", "12"); 0 if none."""
    return COUNTS.get(words) or (int(words) if words.isdigit() else 0)


def _to_the_day(words: str, unit: str, today: date) -> date | None:
    """The day ``words`` of ``unit`` before ``today``, to the day ("ten years ago today")."""
    count = _count(words)
    if not count:
        return None
    if unit in ("day", "week", "fortnight"):
        return today - timedelta(days=count * {"day": 1, "week": 7, "fortnight": 14}[unit])
    months = count * (12 if unit == "year" else 1)
    return _on(today.year, today.month - months, today.day)


def _shifted(span: str, today: date, unit: str, count: int) -> Mention:
    if unit == "day":
        day = today - timedelta(days=count)
        return Mention(span, day, day, "day")
    if unit == "week":
        first, last = week_of(today - timedelta(days=7 * count))
        return Mention(span, first, last, "week")
    if unit == "month":
        first_of = _add_months(today.replace(day=1), -count)
        first, last = _month(first_of.year, first_of.month)
        return Mention(span, first, last, "month")
    year = today.year - count
    return Mention(span, date(year, 1, 1), date(year, 12, 31), "year")


@functools.lru_cache(maxsize=4096)
def _parser_for(base: datetime, future: bool) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "future" if future else "past",
            "RETURN_AS_TIMEZONE_AWARE": False,
            "PREFER_DAY_OF_MONTH": "first",
        },
    )


_PARSERS = threading.Lock()


def _parser(base: datetime, future: bool) -> Any:
    with _PARSERS:
        return _parser_for(base, future)


_TIME_WORD = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|this|past|coming|weekend|week|month"
    r"|year|spring|summer|autumn|fall|winter|early|mid|late|\d{4}|\d{1,2}(?:st|nd|rd|th)"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may"
    r"|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
    r"|valentine'?s|christmas|x-?mas|easter|halloween|new year'?s|patrick'?s|paddy'?s|boxing day"
    r"|fortnight|stephen'?s|thanksgiving|from now|(?:day|week|month)s\s+away|bonfire night"
    r"|(?:day|week|month|year)s\s+back|been\s+[^.!?;]*?(?:day|week|month|year)s"
    r"|(?:day|week|month|year)s?\s+in(?=\s*(?:[,.!?;:]|$|and\b|now\b|already\b|so\b|but\b))|"
    + _MORE_HOLIDAYS
    + r"|\d{1,2}/\d{1,2}"
    r"|(?-i:Mon|Tue|Tues|Wed|Weds|Thu|Thur|Thurs|Fri|Sat|Sun)|(?<=['\u2019])\d{2}"
    r"|in\s+(?:a|an|\d+|a few|a couple of|two|three|four|five|six|seven|eight|nine|ten|several)\s+"
    r"(?:day|week|month|year)s?)\b",
    re.I,
)
"""A word without which a text names no time: the pipeline is not run on the rest."""

_NAMED_DAY = re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.I)

_PATTERN = re.compile(
    rf"\b(?:{_ANCHORED_SPAN}|{_NUMERIC_SPAN}"
    r"|(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+the\s+\d{1,2}(?:st|nd|rd|th)"
    r"(?:\s+of\s+[A-Z][a-z]+)?"
    r"|(?:the\s+)?(?:first|last)\s+day\s+of\s+(?:January|February|March|April|May|June|July"
    r"|August|September|October|November|December)(?:,?\s+\d{4})?"
    r"|(?:the\s+)?(?:start|beginning|end|middle)\s+of\s+\d{4}"
    r"|(?:earlier|later)\s+in\s+the\s+(?:week|month|year)"
    r"|(?:the\s+)?(?:spring|summer|autumn|fall|winter)\s+of\s+['\u2019]\d{2}"
    r"|between\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+and\s+the\s+\d{1,2}"
    r"(?:st|nd|rd|th)\s+of\s+[A-Z][a-z]+(?:,?\s+\d{4})?"
    r"|(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:to|through|until|till|-|\u2013)\s+the\s+\d{1,2}"
    r"(?:st|nd|rd|th)\s+of\s+[A-Z][a-z]+(?:,?\s+\d{4})?"
    r"|half\s+an?\s+(?:year|month)\s+ago"
    r"|(?:\w+|a couple of|a few)(?:\s+and\s+a\s+half)?\s+(?:days?|weeks?|months?)\s+away"
    r"|(?:an?|\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several)"
    r"\s+(?:hour|minute|min)s?\s+ago"
    r"|this\s+past\s+(?:weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|this\s+time\s+last\s+year|(?:at|over|on)\s+the\s+weekend"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+before\s+last"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:last|this|next)\s+week\b"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+(?:the\s+)?week\s+before\s+last"
    r"|come\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+last\b"
    r"|(?:a|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:days?|weeks?|months?)\s+old(?=\s+today)"
    r"|a\s+(?:week|fortnight)\s+(?:yesterday|tomorrow)|a\s+(?:week|fortnight|month)\s+today"
    r"|the\s+week\s+after\s+next|(?:the\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend)"
    r"\s+after\s+next|(?:the\s+)?(?:start|beginning|end)\s+of\s+the\s+year"
    r"|(?:the\s+)?end\s+of\s+(?:last|this|next)\s+week|bonfire\s+night"
    r"|(?:\w+|a couple of|a few)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days\s+ago"
    r"|the\s+(?:first|second|third|fourth|last|final)\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"\s+(?:of|in)\s+(?:(?:the|this|next|last)\s+month|[A-Z][a-z]+(?:,?\s+\d{4})?)"
    r"|(?:a|one|two|three|four|five)\s+(?:year|month)s?\s+and\s+a\s+half\s+ago"
    r"|a\s+(?:day|week)\s+or\s+two\s+ago|in\s+['\u2019]\d{2}\b"
    r"|(?:on|last|next|this)\s+(?-i:Mon|Tue|Tues|Wed|Weds|Thu|Thur|Thurs|Fri|Sat|Sun)\b"
    r"|the\s+(?:spring|summer|autumn|fall|winter|month|year|night)\s+before\s+last"
    r"|(?:the\s+)?(?:end|start|beginning)\s+of\s+the\s+(?:month|week)"
    r"|(?:the\s+)?(?:first|second|third|fourth|last)\s+weekend\s+(?:of|in)\s+" + _MONTH_WORD + r""
    r"|the\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend|week)\s+before\s+last"
    r"|(?:a|one|two|three)\s+fortnights?\s+ago"
    r"|(?:early|mid|late|the end of|the start of|the beginning of)[\s-]+(?:last|this|next)"
    r"\s+(?:month|year)"
    r"|(?:st\.?\s+)?stephen'?s\s+day"
    r"|a (?:week|fortnight) (?:on|from) (?:this\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|a\s+(?:week|fortnight)\s+last\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|the\s+week(?:end)?\s+of\s+(?:(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+of)?\s+"
    + _MONTH_WORD
    + r"|"
    + _MONTH_WORD
    + r"\s+\d{1,2}(?:st|nd|rd|th)?\b|the\s+\d{1,2}(?:st|nd|rd|th))"
    r"|on\s+(?:the\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"(?!\s+(?:before|after)\b|\s+(?:last|this|next)\s+week\b)"
    r"|the\s+(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh"
    r"|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth"
    r"|twentieth)\s+of\s+(?:January|February|March|April|May|June|July|August|September"
    r"|October|November|December)"
    r"|this\s+coming\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|(?:early|mid|late)[\s-]+\d{4}"
    r"|the\s+(?:first|second|third|fourth|last|final)\s+week\s+(?:of|in)\s+[A-Z][a-z]+"
    r"|(?:\w+|a couple of|a few)\s+(?:weekend|spring|summer|autumn|fall|winter)s?\s+ago"
    r"|(?:the\s+)?(?:spring|summer|autumn|fall|winter)\s+of\s+\d{4}"
    r"|in\s+(?:a|an|\d+|a few|a couple of|two|three|four|five|six|seven|eight|nine|ten|several)\s+"
    r"(?:day|week|fortnight|month|year)s?(?:['\u2019]s?\s+time)?"
    r"|(?:last|this|next|past|coming)\s+(?:\w+)|(?:yesterday|today|tonight|tomorrow)"
    r"|(?:\w+|a couple of|a few)\s+(?:days?|weeks?|months?|years?)(?:\s+or\s+so)?\s+(?:ago|back)"
    r"|(?:\w+|a couple of|a few)\s+(?:days?|weeks?|months?|years?)\s+in"
    r"(?=\s*(?:[,.!?;:]|$|and\b|now\b|already\b|so\b|but\b))"
    r"|(?:early|mid|late|the end of)[\s-]+[A-Z][a-z]+"
    r"|(?:in|on)\s+(?:(?:January|February|March|April|May|June|July|August|September|October"
    r"|November|December)(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?|\d{4}|the\s+\d{1,2}"
    r"(?:st|nd|rd|th)(?:\s+of\s+(?:January|February|March|April|May|June|July|August"
    r"|September|October|November|December))?)"
    r"|(?:on\s+)?the\s+\d{1,2}(?:st|nd|rd|th)(?:\s+of\s+[A-Z][a-z]+)?|on\s+\d{1,2}(?:st|nd|rd|th)"
    # an ordinal standing alone with a clock time: "yes! 16th, 2.30pm."
    r"|(?<![\w'])(?<!\w\s)\d{1,2}(?:st|nd|rd|th)(?=\s*,?\s*(?:at\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)\b)"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:January|February|March|April|May|June|July"
    r"|August|September|October|November|December)(?:\s+\d{4})?"
    # a month written short, beside a day in digits: "landing 16 dec", "Sept 3rd"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
    r"(?:\s+\d{4})?|(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\s+\d{1,2}(?:st|nd|rd|th)?"
    r"(?![\d:])"
    r"|(?:valentine'?s|new year'?s|christmas|boxing|(?:st\.? )?patrick'?s|paddy'?s)"
    r"(?:\s+(?:day|eve))?"
    r"|(?:x-?mas|christmas)(?:\s+(?:day|eve))?|halloween|thanksgiving"
    r"|" + _MORE_HOLIDAYS + r""
    r"|easter(?:\s+(?:sunday|monday))?|good friday"
    r"|(?:in|during|over)\s+the\s+(?:spring|summer|autumn|fall|winter)"
    r"(?:\s+of\s+(?:\d{4}|['\u2019]\d{2}))?"
    r"|(?:in\s+)?(?:a|one|two|three|four|five|six|a couple of|a few|\d+)\s+"
    r"(?:days?|weeks?|months?|years?)\s+from\s+(?:now|today|tomorrow))\b",
    re.I,
)


Span = tuple[int, int, str, str]
"""Where a time is named: start and end character, the words, their sentence."""


def _spans(text: str, parse: Callable[[str], Any] | None) -> tuple[list[Span], list[Span]]:
    """The spans naming a time in ``text``: spaCy's DATE entities (and TIME entities
    naming a day), and the matches of the pattern above."""
    try:
        doc = parse(text) if parse is not None else None
    except UnicodeError:  # a lone surrogate: the pattern alone reads it
        doc = None
    entities = [
        (ent.start_char, ent.end_char, ent.text, clause_of(text, ent.start_char, ent.end_char))
        for ent in (doc.ents if doc is not None else ())
        if ent.label_ == "DATE" or (ent.label_ == "TIME" and _NAMED_DAY.search(ent.text))
    ]  # fmt: skip
    patterns = [
        (m.start(), m.end(), m.group(0), clause_of(text, m.start(), m.end()))
        for m in _PATTERN.finditer(text)
    ]
    return entities, patterns


def only_time_sentences(text: str) -> str:
    """``text`` with every sentence that has no word of time blanked to spaces (its
    length, and so every offset, kept): the entity pipes then read only what may name a
    time, in about half the tokens."""
    return _SENTENCE.sub(
        lambda m: m.group(0) if _TIME_WORD.search(m.group(0)) else " " * len(m.group(0)), text
    )


def names_a_time(text: str) -> bool:
    """Whether ``text`` has a word without which it names no time (cheap: a pattern)."""
    return bool(_TIME_WORD.search(text))


_CHAT = {
    "yday": "yesterday", "yest": "yesterday", "ystrdy": "yesterday", "yesturday": "yesterday",
    "tmrw": "tomorrow", "tmrow": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow",
    "tomoz": "tomorrow", "2moro": "tomorrow", "2morrow": "tomorrow", "tomorow": "tomorrow",
    "2day": "today", "2nite": "tonight", "2night": "tonight", "tonite": "tonight",
    "wknd": "weekend", "wkend": "weekend", "w/e": "weekend", "wk": "week", "wks": "weeks",
    "mnth": "month", "mnths": "months", "mth": "month", "mths": "months", "b4": "before",
    "bday": "birthday", "b-day": "birthday", "bdays": "birthdays", "nxt": "next",
    "im": "I'm", "ive": "I've", "xmas": "Christmas",
}  # fmt: skip
_CHAT_WORD = re.compile(
    r"(?<![\w'@./-])(?:" + "|".join(map(re.escape, _CHAT)) + r")(?![\w'@/-])", re.I
)
_CHAT_YEARS = re.compile(
    r"\b(\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|last|next|this)"
    r"\s+yrs?\b",
    re.I,
)
_LOWER_WEEKDAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"(?!\s+(?:the\s+)?\d|\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b)"
)
"""A weekday's whole name typed lowercase ("first one came tuesday"), which spaCy's
small pipeline misses; not before the date it falls on ("sunday dec 1", "tuesday the
26th": the date is read there)."""
_CHAT_DAY = re.compile(
    r"\b(on|last|next|this|til|till|until|by|from)\s+"
    r"(mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)\b(?!['\w])",
    re.I,
)


_CHAT_AGO = re.compile(r"(?i)(?:^|(?<=[.!?,;:]\s))(day|week|fortnight|month|year)\s+ago\b")
"""A count of one dropped before "ago" at the start of a clause ("Week ago yesterday")."""


_CHAT_CLOCK_DAY = re.compile(
    r"(?i)(?<![\w'])(mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat)"
    r"(?=\s+(?:at\s+)?\d{1,2}(?:[:.]\d{2})?(?:\s*(?:am|pm)\b|\s*$|\s*[,.!?]))"
)
"""A short day name given with a clock time ("thurs at 9", "fri 10am")."""


def chat_words(text: str) -> str:
    """``text`` with the ways chats shorten words of time written out: "yday", "tmrw",
    "wknd", "2 wks ago", "3 yrs", "bday", "im", "week ago" (a week ago); a weekday's whole
    name typed lowercase ("came tuesday"); a lowercase short day after "on", "last", "next",
    "this", "from" or "until" ("on sat"; "this sun" stays the sun)."""
    out = _CHAT_WORD.sub(lambda m: _CHAT[m.group(0).lower()], text)
    out = _LOWER_WEEKDAY.sub(lambda m: m.group(0).capitalize(), out)
    out = _CHAT_AGO.sub(lambda m: f"a {m.group(0)}", out)
    out = _CHAT_CLOCK_DAY.sub(lambda m: _SHORT_DAYS[m.group(1).lower()].capitalize(), out)
    out = _CHAT_YEARS.sub(
        lambda m: f"{m.group(1)} year" + ("s" if m.group(0)[-1] in "sS" else ""), out
    )
    return _CHAT_DAY.sub(
        lambda m: (
            m.group(0)
            if m.group(2).lower() == "sun" and m.group(1).lower() == "this"
            else f"{m.group(1)} {_SHORT_DAYS[m.group(2).lower()].capitalize()}"
        ),
        out,
    )


@functools.cache
def when() -> When:
    return When()


def covered(asked: str, mentions: Iterable[Mention]) -> bool:
    """Whether any of ``mentions`` is the time ``asked`` (see :meth:`Mention.covers`)."""
    return any(m.covers(asked) for m in mentions)
