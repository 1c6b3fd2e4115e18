"""Times said in words resolve against when they were said, at the granularity said."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pytest

from streams.memory.english import _entities_nlp, _nlp, english, english_entities
from streams.memory.when import Mention, chat_words, covered, only_time_sentences, when

Parse = Callable[[str], Any]
TUESDAY = datetime(2023, 5, 16, 19, 20, tzinfo=UTC)


def read_in_chat(text: str, said: datetime = TUESDAY, chat: bool = True) -> list[str]:
    """The labels of the times ``text`` names, read as the episoder reads a turn: chat's
    shortened words written out (unless ``chat`` is False) and spaCy's entities. Skips the
    test when spaCy's English pipeline is not installed."""
    if _nlp() is None:
        pytest.skip("spaCy's English pipeline is not installed")
    return [m.label for m in when().mentions(chat_words(text) if chat else text, said, english)]


@pytest.fixture(params=["spacy", "pattern"])
def nlp(request: pytest.FixtureRequest) -> Parse | None:
    if request.param == "pattern":
        return None
    if _nlp() is None:
        pytest.skip("spaCy's English pipeline is not installed")
    return english


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("I adopted a dog last Saturday, he's so cute!", "2023-05-13"),
        ("Yesterday was rough.", "2023-05-15"),
        ("Two days ago my car broke down", "2023-05-14"),
        ("We went to Lisbon two weeks ago.", "2023-05-01..2023-05-07"),
        ("My interview is next month, wish me luck", "2023-06"),
        ("Three months ago I changed jobs", "2023-02"),
        ("Back in 2021 I lived in Porto.", "2021"),
        ("I started at the new job in March", "2023-03"),
        ("I went to Spain in August", "2022-08"),
        ("We're going to Spain in August", "2023-08"),
        ("last summer we went camping", "2022-06-01..2022-08-31"),
        ("this summer we'll go to Greece", "2023-06-01..2023-08-31"),
        ("I may go hiking this weekend", "2023-05-20..2023-05-21"),
        ("last weekend was fun", "2023-05-13..2023-05-14"),
        ("a couple of weeks ago I quit", "2023-05-01..2023-05-07"),
        ("We got married on June 3rd 2019", "2019-06-03"),
    ],
)
def test_a_relative_time_resolves_against_the_moment_it_was_said(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == [label]


@pytest.mark.parametrize(
    "text",
    ["It's been a year since mom passed", "Hey! How are you doing?", "I may be late",
     "We talked the other day"],
)  # fmt: skip
def test_a_duration_or_no_time_at_all_names_no_time(nlp: Parse | None, text: str) -> None:
    assert when().mentions(text, TUESDAY, nlp) == []


def test_a_range_starts_on_its_first_day_in_the_month_named_at_its_end() -> None:
    [m] = when().mentions("I'll be in Tokyo from the 2nd to the 9th of October", TUESDAY, english)
    assert m.label == "2023-10-02"


def test_the_same_words_said_on_another_day_name_another_time(nlp: Parse | None) -> None:
    later = datetime(2023, 11, 2, 9, 0, tzinfo=UTC)
    [m] = when().mentions("last summer we went camping", later, nlp)
    assert m.label == "2023-06-01..2023-08-31"


@pytest.mark.parametrize(
    ("label", "asked", "covers"),
    [
        ("2023-05-13", "2023-05-13", True),
        ("2023-05-13", "2023-05", True),
        ("2023-05-13", "2023-05-14", False),
        ("2023-05-08..2023-05-14", "2023-05-13", True),
        ("2023-05", "2023-05-13", False),
        ("2023-05", "2023-05", True),
        ("2022-06-01..2022-08-31", "2022-07", True),
        ("2022", "2022-07", False),
    ],
)
def test_a_time_covers_the_day_or_month_asked_only_at_its_own_granularity(
    label: str, asked: str, covers: bool
) -> None:
    from streams.memory.when import span_of

    first, _ = span_of(label.split("..")[0])
    last = span_of(label.split("..")[-1])[1]
    granularity = {10: "day", 7: "month", 4: "year"}[len(label)] if ".." not in label else (
        "week" if (last - first).days < 7 else "season")  # fmt: skip
    mention = Mention(label, first, last, granularity)  # type: ignore[arg-type]
    assert covered(asked, [mention]) is covers


async def test_an_episode_keeps_the_times_its_turn_names_resolved_against_when_it_was_said() -> (
    None
):
    from events.memory import EpisodeRecorded, TurnRecorded
    from streams.memory.episoder import Episoder

    said = TurnRecorded(
        group_id="acme:chat", user_message="I adopted a dog last Saturday!",
        agent_response="", occurred_at=TUESDAY,
    )  # fmt: skip
    plain = TurnRecorded(group_id="acme:chat", user_message="He is cute", agent_response="")
    [first, second] = [e.event for e in await Episoder(None)([said, plain])]
    assert isinstance(first, EpisodeRecorded)
    assert isinstance(second, EpisodeRecorded)
    assert first.source_metadata["times"] == "2023-05-13"
    assert "times" not in second.source_metadata


@pytest.mark.parametrize(
    ("text", "said", "label"),
    [
        ("My surgery is booked for the 17th of October.", datetime(2023, 7, 23), "2023-10-17"),
        ("I started on the 6th and I'm still tired.", datetime(2022, 6, 14), "2022-06-06"),
        ("Euan proposed to Priya on Valentine's Day.", datetime(2023, 2, 21), "2023-02-14"),
        ("I've been a Clontarf woman since Easter Monday.", datetime(2024, 4, 18), "2024-04-01"),
        ("We went for dinner on the 9th", datetime(2024, 11, 17), "2024-11-09"),
        # a day to come, even when a past tense says how it was set
        ("They've moved everyone to the 12th of July.", datetime(2022, 6, 14), "2022-07-12"),
        # a dated thing told in the present is scheduled: the next one, not the nearest
        ("It's on the 27th of October.", datetime(2024, 1, 11), "2024-10-27"),
        ("My flight leaves on the 3rd.", datetime(2023, 3, 14), "2023-04-03"),
        ("She starts on the 13th of April.", datetime(2024, 3, 5), "2024-04-13"),
    ],
)
def test_a_date_without_a_year_is_the_nearest_unless_its_tense_says_and_holidays_are_days(
    nlp: Parse | None, text: str, said: datetime, label: str
) -> None:
    labels = [m.label for m in when().mentions(text, said.replace(tzinfo=UTC), nlp)]
    assert label in labels


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # The tense of the clause holding the time decides, not of the whole turn.
        ("I wrote to them yesterday and they want me back for a chat on Thursday.", "2023-05-18"),
        ("We'll see. Anyway Joe started on Monday.", "2023-05-15"),
        ("I'm driving down on the Friday.", "2023-05-19"),
        ("She rang me on Monday, which was nice.", "2023-05-15"),
        # British "a week on Friday": the Friday after the coming one.
        ("My last day is a week on Friday.", "2023-05-26"),
        # A longer span beats a word inside it.
        ("We open on the first of June.", "2023-06-01"),
        ("Since Easter Monday it has rained.", "2023-04-10"),
    ],
)
def test_clauses_tenses_and_longer_spans_date_the_time_said(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert label in [m.label for m in when().mentions(text, TUESDAY, nlp)]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # A count of weeks "in" a present-tense clause of what is set to happen is ahead.
        ("The results come out in two weeks.", "2023-05-29..2023-06-04"),
        ("The exam is in a fortnight.", "2023-05-29..2023-06-04"),
        # A participle after "be" or "get" tells no past: the June to come.
        ("We're getting married in June.", "2023-06"),
        # A booking told in the past dates the booked thing, still to come.
        ("I signed up for the half marathon in October.", "2023-10"),
        ("I've entered the 10k in September.", "2023-09"),
        ("We got tickets for the show in March.", "2024-03"),
        ("The van's booked for the 1st, I'm leaving at six.", "2023-06-01"),
        ("He signed us both up for one along the river in October.", "2023-10"),
        # the day a scheduled trip lands or starts, with "the" and its ordinal
        ("ok so. you land the 9th, take a week, start the 12th?", "2023-06-09"),
        ("ok so. you land the 9th, take a week, start the 12th?", "2023-06-12"),
        # "would", not "had": what would happen is to come
        ("We'd drive down on Thursday and take you to dinner.", "2023-05-18"),
        ("Calibration is end of May, so I'd know in June.", "2023-06"),
        # a day and month in a sentence of no tense is the nearest
        ("opening's locked. 9th of june.", "2023-06-09"),
    ],
)
def test_what_is_scheduled_or_arranged_is_dated_ahead(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert label in [m.label for m in when().mentions(text, TUESDAY, nlp)]


MONDAY = datetime(2022, 1, 10, 14, 0, tzinfo=UTC)
SATURDAY = datetime(2022, 1, 15, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # hours and minutes ago: the day it was then
        ("An hour ago I got an email from HR.", "2022-01-10"),
        ("Ten minutes ago the power came back.", "2022-01-10"),
        # "ago today": that very day, not its year
        ("Ten years ago today we met.", "2012-01-10"),
        ("Half a year ago I started therapy.", "2021-07"),
        # what ends or expires, told in the present, ends ahead
        ("My lease ends at the end of March.", "2022-03"),
        # a range of days names the month once, at its end
        ("We'll be in Rome from the 3rd to the 7th of March.", "2022-03-03"),
        # "last <month>": the last one before this month; "next <month>": the next after it
        ("We adopted Luna last October.", "2021-10"),
        ("I've been going to therapy since last January.", "2021-01"),
        ("We go to Lisbon next January.", "2023-01"),
        # "I have a … on <day>": arranged, so the coming one
        ("I have a job interview on Wednesday, wish me luck!", "2022-01-12"),
        # Xmas, a bare Valentine's, and a month a present-tense clause is "in" is ahead
        ("We had snow last Xmas.", "2021-12-25"),
        ("We had a quiet X-mas.", "2021-12-25"),
        ("We stayed in for Valentine's.", "2021-02-14"),
        ("The wedding's in May.", "2022-05"),
        # said on a Saturday, "last weekend" is the one before, not the one under way
        ("We took the kids to the zoo last weekend.", None),
    ],
)
def test_hours_ago_to_the_day_half_a_year_an_end_ahead_and_a_range_of_days(
    nlp: Parse | None, text: str, label: str | None
) -> None:
    said, label = (SATURDAY, "2022-01-08..2022-01-09") if label is None else (MONDAY, label)
    assert label in [m.label for m in when().mentions(text, said, nlp)]


TUESDAY_JUNE = datetime(2023, 6, 13, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # a time told from a day named after it
        ("We left the day after June 1st.", "2023-06-02"),
        ("I flew out the day before 20 May.", "2023-05-19"),
        ("The week before June 9 I was in Leeds.", "2023-06-02..2023-06-08"),
        ("I got the call the Friday before 2 June.", "2023-05-26"),
        ("I started the weekend after the 20th of May.", "2023-05-27..2023-05-28"),
        ("Two days after Christmas we drove north.", "2022-12-27"),
        ("We left the day after Boxing Day.", "2022-12-27"),
        # and the rest of a set written before the reader was run on it
        ("I stayed there between the 4th and the 8th of April.", "2023-04-04"),
        ("We met on the last day of May.", "2023-05-31"),
        ("I posted the letter earlier in the week.", "2023-06-12..2023-06-18"),
        ("This Sunday just gone we had a barbecue.", "2023-06-11"),
        ("In the summer of '21 we went to Greece.", "2021-06-01..2021-08-31"),
        ("At the start of 2022 I got a dog.", "2022-01-01..2022-04-30"),
    ],
)
def test_a_day_before_or_after_a_named_day_and_other_forms_from_a_fifth_set(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert label in [m.label for m in when().mentions(text, TUESDAY_JUNE, nlp)]


def test_the_day_before_yesterday_and_the_friday_before_last_still_read_as_before(
    nlp: Parse | None,
) -> None:
    said = when().mentions("The day before yesterday, not the Friday before last.", MONDAY, nlp)
    assert [m.label for m in said] == ["2022-01-08", "2021-12-31"]


def test_this_may_be_is_no_month_and_a_short_month_needs_its_full_name(
    nlp: Parse | None,
) -> None:
    for text in ("I think this may be the best option.", "this mar is odd"):
        assert when().mentions(text, MONDAY, nlp) == []


def test_this_past_sunday_is_the_last_one() -> None:
    assert read_in_chat("I baked bread this past Sunday.", chat=False) == ["2023-05-14"]


@pytest.mark.parametrize(
    ("text", "said", "first", "last"),
    [
        ("They rang me the Friday before last.", datetime(2024, 10, 13), "2024-10-04", None),
        ("We went on a date the Saturday before last.", datetime(2025, 2, 2), "2025-01-25", None),
        ("The weekend before last, yes.", datetime(2025, 10, 20), "2025-10-11", "2025-10-12"),
        ("She passed her MOT a fortnight ago.", datetime(2025, 10, 20), "2025-10-06", "2025-10-12"),
        ("We dug it up at the end of last month.", datetime(2025, 8, 10), "2025-07-01",
         "2025-07-31"),
        ("He asked me on St Stephen's Day.", datetime(2025, 1, 14), "2024-12-26", None),
        # said on a Sunday, "last weekend" is the one before this one
        ("Kyle finally did it last weekend.", datetime(2025, 8, 3), "2025-07-26", "2025-07-27"),
        # "on" a day, in the past tense: the one gone, not the nearest
        ("We landed back on the 27th.", datetime(2025, 10, 13), "2025-09-27", None),
    ],
)  # fmt: skip
def test_days_counted_back_from_another_and_the_edges_of_a_month(
    nlp: Parse | None, text: str, said: datetime, first: str, last: str | None
) -> None:
    spans = [(m.start, m.end) for m in when().mentions(text, said.replace(tzinfo=UTC), nlp)]
    assert (date.fromisoformat(first), date.fromisoformat(last or first)) in spans


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("She got married in late 2022.", "2022-09-01", "2022-12-31"),
        ("The class starts the first week of June.", "2023-06-01", "2023-06-07"),
        ("The builder started in the last week of April.", "2023-04-24", "2023-04-30"),
        ("I'll see him this coming Friday.", "2023-05-19", None),
        ("I ran it three weekends ago.", "2023-04-29", "2023-04-30"),
        ("We were in Rome two summers ago.", "2021-06-01", "2021-08-31"),
        ("I visited in the summer of 2021.", "2021-06-01", "2021-08-31"),
        ("The move was last Thanksgiving.", "2022-11-24", None),
        ("We're leaving in 3 days.", "2023-05-19", None),
        ("She's coming up in a couple of weeks.", "2023-05-29", "2023-06-04"),
        ("Two weeks from now we fly out.", "2023-05-29", "2023-06-04"),
        ("We met in the autumn.", "2022-09-01", "2022-11-30"),
        ("We got there on Friday and the next day we hiked.", "2023-05-13", None),
        ("I flew in on the 3rd and started work two days later.", "2023-05-05", None),
        ("She called on the 1st, and a week later she quit.", "2023-05-08", "2023-05-14"),
        ("We moved on the 1st; the following week the boiler broke.", "2023-05-08", "2023-05-14"),
        ("It happened the night before last.", "2023-05-14", None),
        ("They married the week before Christmas.", "2022-12-18", "2022-12-24"),
        ("He came back the day after Boxing Day.", "2022-12-27", None),
        ("I moved in at the end of the month.", "2023-05-01", "2023-05-31"),
        ("The fair is on the second weekend of July.", "2023-07-08", "2023-07-09"),
        ("It's in three weeks' time.", "2023-06-05", "2023-06-11"),
        ("I saw her at the beginning of the week.", "2023-05-15", "2023-05-21"),
        ("I got it a month or so ago.", "2023-04-01", "2023-04-30"),
        ("I moved nearly two years ago.", "2021-01-01", "2021-12-31"),
        ("We broke up about six months ago.", "2022-11-01", "2022-11-30"),
        ("I left a year and a half ago.", "2021-11-01", "2021-11-30"),
        ("We meet on the first Monday of June.", "2023-06-05", None),
        ("Payday is the last Friday of the month.", "2023-05-26", None),
        ("I got it a day or two ago.", "2023-05-14", "2023-05-15"),
        ("It was freezing at the end of last year.", "2022-09-01", "2022-12-31"),
        ("I started early last year.", "2022-01-01", "2022-04-30"),
        ("We went the summer before last.", "2021-06-01", "2021-08-31"),
        ("He was born in '92.", "1992-01-01", "1992-12-31"),
        ("The wedding was last Sat.", "2023-05-13", None),
        ("I finally went on Thurs.", "2023-05-11", None),
        ("Let's meet on Weds.", "2023-05-17", None),
        ("We went climbing at the weekend.", "2023-05-13", "2023-05-14"),
        ("It rained all over the weekend.", "2023-05-13", "2023-05-14"),
        ("This past weekend we hiked up Snowdon.", "2023-05-13", "2023-05-14"),
        ("We're going camping at the weekend.", "2023-05-20", "2023-05-21"),
        ("I saw her two Saturdays ago.", "2023-05-06", None),
        ("The launch is the week after next.", "2023-05-29", "2023-06-04"),
        ("We'll know in a fortnight.", "2023-05-29", "2023-06-04"),
        ("I'll have it done by the end of next week.", "2023-05-22", "2023-05-28"),
        ("This time last year I was still in Leeds.", "2022-05-01", "2022-05-31"),
        ("I joined at the start of the year.", "2023-01-01", "2023-01-31"),
        ("Bonfire Night was so loud.", "2022-11-05", None),
        ("A few weeks back he quit.", "2023-04-24", "2023-04-30"),
    ],
)  # fmt: skip
def test_a_time_said_in_words_spans_the_days_it_names(
    nlp: Parse | None, text: str, first: str, last: str | None
) -> None:
    """Edges of a year, weeks of a month, counted weekends and weekdays, times ahead,
    times told from another, hedged counts, short day names."""
    spans = [(m.start, m.end) for m in when().mentions(text, TUESDAY, nlp)]
    assert (date.fromisoformat(first), date.fromisoformat(last or first)) in spans


def test_a_time_told_as_later_than_nothing_said_names_no_time(nlp: Parse | None) -> None:
    assert when().mentions("Two days later it broke again.", TUESDAY, nlp) == []


@pytest.mark.parametrize("text", ["I sat on the sun lounger all day.", "We sat down and talked."])
def test_a_short_day_name_is_read_only_where_it_names_a_day(nlp: Parse | None, text: str) -> None:
    assert when().mentions(text, TUESDAY, nlp) == []


@pytest.mark.parametrize(
    "text", ["I finished it in 3 days.", "Four books in two weeks, all of them long."]
)
def test_a_span_of_time_something_took_is_not_a_time_ahead(nlp: Parse | None, text: str) -> None:
    assert when().mentions(text, TUESDAY, nlp) == []


def test_the_entity_reader_finds_the_full_pipelines_entities_without_its_unused_pipes() -> None:
    full = _nlp()
    if full is None:
        pytest.skip("spaCy's English pipeline is not installed")
    texts = ["Priya moved to Bristol last March, two weeks before Easter.",
             "On Tuesday the 4th of June 2024 Globex hired Grace Okafor in Leeds.",
             "we had the party the weekend before the 28th, on the saturday"]  # fmt: skip
    docs = english_entities(texts)
    assert docs is not None
    assert docs[0].vocab is not full.vocab  # a copy of its own, not the extractor's
    assert _entities_nlp().pipe_names == ["ner"]  # the recogniser embeds tokens itself
    assert [[(e.text, e.label_) for e in d.ents] for d in docs] == [
        [(e.text, e.label_) for e in full(t).ents] for t in texts
    ]


def test_only_the_sentences_naming_a_time_are_kept_for_the_entity_reader() -> None:
    text = "Thanks for the help. I moved to Porto last March! It is lovely."
    kept = only_time_sentences(text)
    assert len(kept) == len(text)
    assert kept.strip() == "I moved to Porto last March!"
    assert kept.index("last March") == text.index("last March")


@pytest.mark.parametrize(
    "text",
    ["9999 years ago", "in 99999999 weeks' time", "I came on the 1st and 99999999 days later",
     "99999999 Saturdays ago", "a 99999999 months and a half ago"],
)  # fmt: skip
def test_a_time_no_date_can_hold_names_no_time_instead_of_failing(
    nlp: Parse | None, text: str
) -> None:
    said = [m.text for m in when().mentions(text, TUESDAY, nlp)]
    assert [t for t in said if "1st" not in t] == []  # "the 1st" itself still reads


@pytest.mark.parametrize(
    ("text", "said", "labels"),
    [
        # a weekday said with a day of the month picks the month (or year) it falls in
        ("Landing in Denver Thursday the 13th around noon.", datetime(2024, 5, 21), ["2024-06-13"]),
        ("Saturday the 17th of September, at the harbour church.", datetime(2022, 1, 16),
         ["2022-09-17"]),
        # "the Friday before last" after "on" is not last Friday
        ("Sue finished the index on the Friday before last.", datetime(2022, 7, 31),
         ["2022-07-22"]),
        # told from the time said before it
        ("I'm going home for Thanksgiving. Flying out the day before and back that Sunday.",
         datetime(2023, 11, 5), ["2023-11-23", "2023-11-22", "2023-11-26"]),
        ("The operation went well on the 11th, and they sent him home on the Thursday.",
         datetime(2022, 7, 31), ["2022-07-11", "2022-07-14"]),
        # "last Monday" said on a Tuesday is the week before (yesterday is "yesterday")
        ("The surgery went great. Last Monday, finally.", datetime(2024, 1, 16), ["2024-01-08"]),
        ("I'm back on Monday night.", datetime(2024, 2, 11), ["2024-02-12"]),
        ("The wedding is three weeks away.", datetime(2022, 8, 30), ["2022-09-19..2022-09-25"]),
        # holidays by their rule, and in a clause of no tense the nearest one
        ("What are you doing for Memorial Day?", datetime(2024, 5, 21), ["2024-05-27"]),
        ("The clinic is closed for Presidents' Day.", datetime(2024, 2, 11), ["2024-02-19"]),
        ("and christmas eve night.", datetime(2024, 12, 7), ["2024-12-24"]),
        ("We had a picnic on Canada Day.", datetime(2022, 7, 10), ["2022-07-01"]),
        ("Victoria Day was lovely.", datetime(2024, 6, 11), ["2024-05-20"]),
        ("happy paddys day!", datetime(2024, 3, 18), ["2024-03-17"]),
        # a second set of three (Australian, work chat, Indian English)
        ("A week from today you're a Berliner!", datetime(2024, 7, 25), ["2024-08-01"]),
        ("The race is a month from tomorrow.", datetime(2024, 9, 19), ["2024-10-20"]),
        ("He starts the Monday after next.", datetime(2024, 5, 21), ["2024-06-03"]),
        ("Anyway, we move on Saturday!", datetime(2024, 7, 23), ["2024-07-27"]),
        ("Ines has a second-round interview with that startup on Tuesday.",
         datetime(2024, 2, 8), ["2024-02-13"]),
        ("We'll look at venues the Saturday after the King's Birthday.", datetime(2024, 5, 21),
         ["2024-06-15"]),
        ("We fly on 1/8, and the appointment is on 12/8.", datetime(2024, 6, 20),
         ["2024-08-01", "2024-08-12"]),
        ("Closing moved to 9/13, fingers crossed.", datetime(2024, 8, 24), ["2024-09-13"]),
        ("We drove down on Republic Day morning.", datetime(2024, 1, 28), ["2024-01-26"]),
        ("On the 18th. I'm going there the day before to help.", datetime(2023, 12, 10),
         ["2023-12-18", "2023-12-17"]),
        # a third set of three (painter and counsellor, a couple apart, a mother and son)
        ("They accepted our offer Thursday before last.", datetime(2023, 4, 16),
         ["2023-04-06"]),
        ("They start on Monday.", datetime(2023, 6, 10), ["2023-06-12"]),
        ("I'll call the doctor come Monday.", datetime(2023, 7, 22), ["2023-07-24"]),
        ("We sang it Sunday last.", datetime(2023, 7, 22), ["2023-07-16"]),
        ("In ten days. Seven nights in a row.", datetime(2024, 6, 23), ["2024-07-03"]),
        ("Lucia Rose, ten days old today.", datetime(2025, 3, 9), ["2025-02-27"]),
        ("The prep course finished a week yesterday.", datetime(2023, 4, 13), ["2023-04-05"]),
        ("Two weeks ago today I went. I rang Bernie on the Monday after and said yes.",
         datetime(2023, 7, 22), ["2023-07-08", "2023-07-10"]),
        ("You're getting the train up the day before Christmas Eve.", datetime(2024, 12, 8),
         ["2024-12-23"]),
    ],
)  # fmt: skip
def test_times_of_fresh_conversations_written_before_the_reader_was_run_on_them(
    nlp: Parse | None, text: str, said: datetime, labels: list[str]
) -> None:
    assert [m.label for m in when().mentions(text, said.replace(tzinfo=UTC), nlp)] == labels


@pytest.mark.parametrize("text", ["we're open 24/7", "half price, 1/2 off"])
def test_a_fraction_is_no_date(nlp: Parse | None, text: str) -> None:
    assert when().mentions(text, TUESDAY, nlp) == []


@pytest.mark.parametrize(
    ("text", "label"),
    [("I booked the table on Monday.", "2023-05-15"),
     ("I signed up for the gym last January.", "2023-01"),
     ("I signed up for the marathon on the 2nd of May.", "2023-05-02"),
     ("We landed the 9th and started the 16th.", "2023-05-09 2023-05-16"),
     ("We'd driven down on Thursday.", "2023-05-11")],
)  # fmt: skip
def test_the_day_a_booking_was_made_is_still_read_as_before(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == label.split()


@pytest.mark.parametrize(
    ("text", "label"),
    [("next Wednesday works", "2023-05-24"),  # said on a Tuesday: the week after
     ("next Friday works", "2023-05-19"),
     ("I leave for Leipzig the 12th so we'll just miss each other", "2023-06-12"),
     ("Harriet wants a second meeting. Thursday 25/05 at 2pm, in Kampala", "2023-05-25"),
     ("Their visas took longer. They only fly on Wednesday.", "2023-05-17"),
     ("surgery was early monday morning. keyhole thing", "2023-05-15")],
)  # fmt: skip
def test_next_weekday_said_the_day_before_and_what_is_set_for_a_day_look_ahead(
    nlp: Parse | None, text: str, label: str
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == [label]


@pytest.mark.parametrize(
    ("text", "label"),
    [("haven't started. flight's Saturday afternoon out of DIA", "2023-05-20"),
     ("yes please. Eldo Sunday?", "2023-05-21"), ("Drinks Friday?", "2023-05-19"),
     ("How was Saturday?", "2023-05-13"), ("Still recovering from Saturday?", "2023-05-13"),
     ("Wasn't Saturday the best night?", "2023-05-13"), ("Well?? Saturday??", "2023-05-13"),
     ("Bex's Sunday opening is working.", "2023-05-14"),
     ("Thursday at 10. Marcus has the day off so he's coming with me.", "2023-05-18"),
     ("Mvule Ventures on Thursday, 10am.", "2023-05-18"),
     ("We met on Thursday at 10 and talked for hours.", "2023-05-11"),
     ("She's here, born on Thursday at 4:12 in the morning.", "2023-05-11"),
     ("My stats exam is Monday and I'm not ready.", "2023-05-22")],
)  # fmt: skip
def test_a_bare_weekday_proposed_in_a_question_or_set_for_a_thing_is_the_one_to_come(
    text: str, label: str
) -> None:
    assert read_in_chat(text, chat=False) == [label]


@pytest.mark.parametrize(
    "text",
    ["the Monday after we arrived was beautiful", "on the thursday before my birthday"],
)
def test_a_day_told_from_an_event_never_dated_names_no_time(nlp: Parse | None, text: str) -> None:
    assert when().mentions(text, TUESDAY, nlp) == []


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("i sent fiona the chapter yday", "i sent fiona the chapter yesterday"),
        ("we picked him up on sat", "we picked him up on Saturday"),
        ("2 wks ago, 3 yrs in, last wknd, tmrw", "2 weeks ago, 3 years in, last weekend, tomorrow"),
        ("this sun is brutal, yr mum said", "this sun is brutal, yr mum said"),
        ("mail me at im@x.example", "mail me at im@x.example"),
    ],
)
def test_chat_shortened_words_of_time_are_read_written_out(text: str, written: str) -> None:
    assert chat_words(text) == written


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Monday last week, by email.", ["2023-05-08"]),
     ("He moved in on Monday last week.", ["2023-05-08"]),
     ("we're off Friday next week", ["2023-05-26"]),
     ("ha. hopefully signing on friday. move in is the 22nd", ["2023-05-19", "2023-05-22"]),
     ("Deadline for applications is the 31st.", ["2023-05-31"]),
     ("i'm booked. landing 16 dec, flying back 2 jan", ["2023-12-16", "2024-01-02"]),
     ("Luis confirmed Aug 17-24", ["2023-08-17"]), ("I paid on 3 sept 2022", ["2022-09-03"]),
     ("yes! 16th, 2.30pm. i'm staying at mum and dad's", ["2023-05-16"]),
     ("16th, yes. but I want to see the kitchen before that", [])],
)  # fmt: skip
def test_a_weekday_of_a_week_named_a_short_month_and_a_plan_told_by_its_verb_alone(
    nlp: Parse | None, text: str, labels: list[str]
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Week ago yesterday", ["2023-05-08"]),
     ("We signed the last papers a week ago yesterday.", ["2023-05-08"]),
     ("That was three weeks ago yesterday already", ["2023-04-24"]),
     ("We sail a fortnight tomorrow.", ["2023-05-31"]),
     ("she flew out a fortnight yesterday", ["2023-05-01"])],
)  # fmt: skip
def test_a_count_back_from_yesterday_and_a_fortnight_from_tomorrow(
    nlp: Parse | None, text: str, labels: list[str]
) -> None:
    assert [m.label for m in when().mentions(chat_words(text), TUESDAY, nlp)] == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Jess's hens is a fortnight from Saturday", ["2023-06-03"]),
     ("you fly a fortnight on Tuesday!", ["2023-06-06"]),
     ("Cut out the Thursday, week before last", ["2023-05-04"]),
     ("Yep. Fly out of Sydney Saturday night", ["2023-05-20"]),
     ("let me look... the weekend after Memorial Day.", ["2023-06-03..2023-06-04"]),
     ("We did, the weekend after Memorial Day: Ron, Mike and I.", ["2022-06-04..2022-06-05"])],
)  # fmt: skip
def test_a_fortnight_from_a_weekday_a_day_of_the_week_before_last_and_a_holiday_of_no_tense(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text, chat=False) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("4 months in. 14 people on my team", ["2023-01"]),
     ("Three weeks in and I love it.", ["2023-04-24..2023-04-30"]),
     ("You're ten days in now.", ["2023-05-06"]),
     ("we spent four days in Rome", []), ("Four to six weeks in a splint.", []),
     ("It takes four to six weeks, starting next month", ["2023-06"])],
)  # fmt: skip
def test_how_long_something_has_run_said_from_inside_it_dates_its_start(
    nlp: Parse | None, text: str, labels: list[str]
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Walk-in: Ray confirmed the install is the day after Memorial Day", ["2023-05-30"]),
     ("she said the party's on Saturday", ["2023-05-20"]),
     ("he said he left on Saturday", ["2023-05-13"]),
     ("Which is a month today! What do you want for your birthday?", ["2023-06-16"]),
     ("And the last one is a week today.", ["2023-05-23"]),
     ("thurs at 9. weekend camping ticket is like £240", ["2023-05-18"]),
     ("ok back to sleep for 20 min. sat 1pm", ["2023-05-20"]),
     ("we met Saturday 1pm at the cafe", ["2023-05-13"]),
     ("On the terrace, after you'd all gone to bed on Friday.", ["2023-05-12"]),
     ("we'd all go on Friday", ["2023-05-19"]),
     ("I'm the oldest person on my floor at 30.", [])],
)  # fmt: skip
def test_a_reported_clause_keeps_its_own_tense_a_month_today_and_a_day_with_a_clock_time(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Friday is my last day at work before the leave.", ["2023-05-19"]),
     ("Saturday's the big day!", ["2023-05-20"]),
     ("Friday was my last day.", ["2023-05-12"]),
     ("Friday is when it all went wrong.", ["2023-05-12"]),
     ("The street at 1am on a Friday is a festival.", ["2023-05-12"]),
     ("I sprained it bouldering on May Day.", ["2023-05-01"])],
)  # fmt: skip
def test_a_weekday_that_is_something_is_the_one_to_come_and_may_day_is_the_first_of_may(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("We've been dating four months, you can say his name normally.", ["2023-01"]),
     ("I've been working there for three years.", ["2020"]),
     ("She has been living in Leeds for two years now.", ["2021"]),
     ("Bex has been here two weeks and I love it.", ["2023-05-01..2023-05-07"]),
     ("I had been working there for 3 years.", []),
     ("By May I'll have been here for two years.", []),
     ("He's been sliding down the hill at the park since Boxing Day.", ["2022-12-26"]),
     ("first one came tuesday, 3 days late", ["2023-05-09"]),
     ("ok so thursday is the real thing", ["2023-05-18"]),
     ("Signed the agreement yesterday. Moving on the 30th.", ["2023-05-15", "2023-05-30"]),
     ("first shift thursday!! 6am open, pray for me.", ["2023-05-18"])],
)  # fmt: skip
def test_how_long_something_has_gone_on_dates_its_start_a_weekday_typed_lowercase_and_plans(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("I've got a dentist appointment on Friday", ["2023-05-19"]),
     ("we've got the scan on Thursday", ["2023-05-18"]),
     ("Got my pre-op assessment on the 6th", ["2023-06-06"]),
     ("Got mediation on Friday. Wish me luck", ["2023-05-19"]),
     ("I got a parking ticket on Friday", ["2023-05-12"]),
     ("The grant got through internal review on the 1st, so I'll polish it next week",
      ["2023-05-22..2023-05-28", "2023-05-01"])],
)  # fmt: skip
def test_what_someone_has_got_on_a_day_is_to_come_and_what_they_got_is_past(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("It was a week last Thursday.", ["2023-05-04"]),
     ("a fortnight last Friday we met", ["2023-04-28"]),
     ("I'm off the week of August 12th.", ["2023-08-07..2023-08-13"]),
     ("we fly out the weekend of June 3rd", ["2023-06-03..2023-06-04"]),
     ("the week of the 22nd is busy", ["2023-05-22..2023-05-28"])],
)  # fmt: skip
def test_a_week_last_thursday_and_the_week_of_a_day(
    nlp: Parse | None, text: str, labels: list[str]
) -> None:
    assert [m.label for m in when().mentions(text, TUESDAY, nlp)] == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("She starts the 2nd of June, I fly out on the 6th", ["2023-06-02", "2023-06-06"]),
     ("leaving September 10, back the 24th", ["2023-09-10", "2023-09-24"]),
     # in another sentence, a day keeps its own reading
     ("Opening is the 9th of June. Consent came through on the 1st", ["2023-06-09", "2023-05-01"])],
)  # fmt: skip
def test_a_later_day_of_the_month_alone_is_in_the_month_just_named(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("start gp on wednesday, its a practice in canton", ["2023-05-17"]),
     ("flying in friday night. back monday morning", ["2023-05-19", "2023-05-22"]),
     ("can we go up to mums on saturday morning. just us two.", ["2023-05-20"]),
     ("my bachelorette is in marfa! second weekend of august", ["2023-08-12..2023-08-13"]),
     ("had our first proper callout of the season tuesday. grass fire.", ["2023-05-09"]),
     ("We had a snow day Friday, so it wasn't really a day off.", ["2023-05-12"]),
     # words that tell which day, or that it is any one, keep the span whole
     ("Every Tuesday, still at Harbor House.", []),
     ("Monday, Wednesday and Saturday, before work", [])],
)  # fmt: skip
def test_a_plan_told_without_its_subject_and_a_weekday_ending_a_longer_span(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels


@pytest.mark.parametrize(
    ("text", "labels"),
    [("Four nights starting Thursday, then a zero day", ["2023-05-18"]),
     ("we had the party the weekend before the 28th, on the saturday.",
      ["2023-05-20..2023-05-21", "2023-05-20"]),
     # told from a time it does not name: no weekend guessed
     ("we'll move the weekend after I get back from Melbourne", [])],
)  # fmt: skip
def test_starting_a_weekday_and_a_weekday_inside_the_weekend_said(
    text: str, labels: list[str]
) -> None:
    assert read_in_chat(text) == labels
