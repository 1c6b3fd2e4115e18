"""A time told by an event said before ("the day after my birthday") resolves against the
day an earlier turn of the same group gave that event."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from events.memory import MemoryForgotten, TurnRecorded
from streams.memory.episoder import Episoder, times_of


def turn(
    text: str, said: str, speaker: str = "Maeve", group: str = "t:s1", at: str = "10:00"
) -> TurnRecorded:
    return TurnRecorded(
        event_id=uuid4(), group_id=group, user_message=text, agent_response="",
        speaker=speaker, occurred_at=datetime.fromisoformat(f"{said}T{at}:00").replace(tzinfo=UTC),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("earlier", "later", "label"),
    [
        ("My birthday is on the 2nd of May.", "We got her the day after my birthday.",
         "2025-05-03"),
        ("The interview is next Tuesday at ten.", "They called me the Monday after the interview.",
         "2025-04-21"),
        ("The wedding is on Saturday the 12th of April.",
         "We flew home two days after the wedding.", "2025-04-14"),
        ("The move is on Friday the 11th of April.",
         "I bought the car the Saturday before we moved.", "2025-04-05"),
        ("Migo's birthday is coming, the 3rd of May.",
         "They had the party on the Saturday before his actual birthday.", "2025-04-26"),
    ],
)  # fmt: skip
def test_a_time_told_by_an_event_resolves_against_the_day_an_earlier_turn_gave_it(
    earlier: str, later: str, label: str
) -> None:
    said = times_of([turn(earlier, "2025-04-10"), turn(later, "2025-05-20")])
    assert label in said[1].split()


def test_my_birthday_is_the_speakers_own_not_the_last_one_named() -> None:
    said = times_of(
        [
            turn("My birthday is on the 2nd of May.", "2025-04-10", speaker="Maeve"),
            turn("Mine was on the 9th of May, remember?", "2025-05-12", speaker="Dev"),
            turn("Ha, my birthday was on the 9th of May.", "2025-05-12", speaker="Dev"),
            turn("We adopted Miso the day after my birthday.", "2025-05-20", speaker="Maeve"),
        ]
    )
    assert said[3].split() == ["2025-05-03"]


def test_my_birthday_is_the_one_the_other_speaker_called_your_birthday() -> None:
    said = times_of(
        [
            turn("Nana's birthday is on the 14th of June.", "2025-02-01", speaker="Aoife"),
            turn("What are you doing for your birthday? The 13th is a Wednesday.", "2025-03-02",
                 speaker="Megan"),
            turn("I ran again the day after my birthday.", "2025-03-20", speaker="Rachel"),
        ]
    )  # fmt: skip
    assert said[2].split() == ["2025-03-14"]


def test_a_reply_dates_the_event_the_turn_before_it_asked_about() -> None:
    said = times_of(
        [
            turn("When's your interview?", "2025-04-10", speaker="Tomasz"),
            turn("Next Thursday at 2, on video.", "2025-04-10", speaker="Hanna", at="10:01"),
            turn("They called me the Monday after the interview!", "2025-05-20", speaker="Hanna"),
        ]
    )
    assert said[2].split() == ["2025-04-21"]


def test_a_reply_the_same_day_does_not_outweigh_the_sentence_that_named_the_event() -> None:
    said = times_of(
        [
            turn("Happy birthday for Sunday!", "2025-03-11", speaker="Josie"),
            turn("How was the first birthday in the new place?", "2025-03-11", speaker="Josie",
                 at="10:01"),
            turn("Lovely. On Saturday we drove down to the coast.", "2025-03-11",
                 speaker="Arjun", at="10:02"),
            turn("And the day after my birthday we took the dogs out.", "2025-03-11",
                 speaker="Arjun", at="10:03"),
        ]
    )  # fmt: skip
    assert said[3].split() == ["2025-03-10"]


def test_a_reply_on_a_later_day_outweighs_an_older_sentence_naming_the_event() -> None:
    said = times_of(
        [
            turn("Heather's scan is on the 18th of April.", "2025-04-02", speaker="Douglas"),
            turn("How did Heather's scan go?", "2025-06-30", speaker="Gwyneth"),
            turn("She had it on Tuesday. It's a girl!", "2025-06-30", speaker="Douglas",
                 at="10:01"),
            turn("The proofs arrived the day after Heather's scan.", "2025-07-02",
                 speaker="Gwyneth"),
        ]
    )  # fmt: skip
    assert said[3].split() == ["2025-06-25"]


def test_we_moved_is_the_latest_move_told_not_the_last_one_called_ours() -> None:
    said = times_of(
        [
            turn("We move on the 13th of August, my closing date.", "2025-07-20", speaker="Nadia"),
            turn("It fell through. Got the keys Friday, moved everything the next day.",
                 "2025-09-19", speaker="Nadia"),
            turn("I did 20k the Sunday before we moved.", "2025-09-19", speaker="Nadia",
                 at="10:05"),
        ]
    )  # fmt: skip
    assert said[2].split() == ["2025-09-07"]


def test_the_same_day_as_an_event_is_that_events_day() -> None:
    said = times_of(
        [
            turn("4 weeks notice, so my last shift is sunday the 11th of may", "2025-04-20",
                 speaker="Niamh"),
            turn("it happened after tobermory, on the same day as ur last shift", "2025-05-24",
                 speaker="Aoife"),
        ]
    )  # fmt: skip
    assert "2025-05-11" in said[1].split()


@pytest.mark.parametrize(
    ("text", "label"),
    [("Booked. The exam is on the 18th of September, which is the day before my birthday.",
      "2025-09-19"),
     ("Move-in is the 1st of November, the day after the sublet ends.", "2025-10-31"),
     ("The van comes on the 23rd of September, two days after my last shift.", "2025-09-21")],
)  # fmt: skip
def test_a_day_said_beside_an_event_never_dated_dates_the_event(text: str, label: str) -> None:
    assert label in times_of([turn(text, "2025-08-29")])[0].split()


def test_the_weekend_before_last_is_no_event() -> None:
    said = times_of(
        [
            turn("We finally went, the Sunday before my birthday.", "2025-06-01"),
            turn("The weekend before last already feels like a dream.", "2025-06-10"),
        ]
    )
    assert said[1].split() == ["2025-05-31..2025-06-01"]


def test_a_past_event_is_not_read_against_a_day_still_to_come() -> None:
    said = times_of(
        [
            turn("The wedding was on the 12th of April.", "2025-04-20"),
            turn("The wedding is on the 20th of September.", "2025-08-01"),
            turn("I cried the night before the wedding, back in April.", "2025-08-02"),
        ]
    )
    assert "2025-04-11" in said[2].split()


def test_another_groups_event_is_not_an_anchor() -> None:
    said = times_of(
        [
            turn("My birthday is on the 2nd of May.", "2025-04-10", group="t:other"),
            turn("We got her the day after my birthday.", "2025-05-20"),
        ]
    )
    assert said[1] == ""


@pytest.mark.parametrize(
    "text",
    [
        "He watches it every night after the news.",
        "She put it on the sofa the day after they got back from Crete.",
        "The day before yesterday it rained.",
    ],
)
def test_a_habit_a_light_verb_or_a_plain_time_is_no_event(text: str) -> None:
    said = times_of(
        [
            turn("They got back on the 3rd of May, the news was on the 3rd too.", "2025-05-04"),
            turn(text, "2025-05-20"),
        ]
    )
    assert "2025-05-04" not in said[1].split()


def test_how_long_since_an_event_dates_it() -> None:
    said = times_of([turn("Yesterday was a year since the diagnosis, wasn't it?", "2025-12-13")])
    assert said[0].split() == ["2025-12-12", "2024-12-12"]


def test_the_week_before_a_holiday_needs_no_earlier_turn() -> None:
    [said] = times_of([turn("We're flying home the week before Christmas.", "2025-11-01")])
    assert "2025-12-15..2025-12-21" in said.split()


def test_forgetting_a_group_forgets_the_days_its_turns_named() -> None:
    episoder = Episoder(model=None)
    first = turn("My birthday is on the 2nd of May.", "2025-04-10")
    asyncio.run(episoder([first]))
    episoder.forgotten(MemoryForgotten(event_id=uuid4(), group_id=first.group_id))
    assert times_of([turn("We got her the day after my birthday.", "2025-05-20")],
                    episoder.anchors) == [""]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("I got back to Lisbon on Thursday. Went into the lab the day after I got back.",
         "2023-02-10"),
        ("We moved on the 3rd. The week after we moved, the boiler died.",
         "2023-02-06..2023-02-12"),
    ],
)  # fmt: skip
def test_an_event_told_with_its_day_earlier_in_the_same_turn_dates_a_time_told_from_it(
    text: str, label: str
) -> None:
    assert label in times_of([turn(text, "2023-02-12")])[0].split()


def test_a_light_verb_alone_still_finds_no_event_earlier_in_the_turn() -> None:
    said = times_of([turn("We got it on Thursday. The day after we got, rain.", "2023-02-12")])
    assert said[0].split() == ["2023-02-09"]


def test_an_event_in_a_sentence_of_no_tense_is_the_nearest_one_told() -> None:
    said = times_of(
        [
            turn("The wedding is Saturday the 12th of October.", "2024-05-16"),
            turn("Sam's wedding was lovely, on the 22nd of June.", "2024-06-27"),
            turn("rehearsal dinner is the night before the wedding at 7", "2024-10-02"),
        ]
    )
    assert said[2].split() == ["2024-10-11"]


def test_a_reported_clause_dates_a_holiday_by_its_own_tense() -> None:
    [said] = times_of(
        [turn("Walk-in: Ray confirmed the install is the day after Thanksgiving", "2024-11-12")]
    )
    assert said.split() == ["2024-11-29"]


def test_the_weekend_before_a_sunday_holiday_is_the_one_before_its_own() -> None:
    [said] = times_of([turn("the weekend before easter we had the kitchen party", "2023-04-20")])
    assert said.split()[-1] == "2023-04-01..2023-04-02"
