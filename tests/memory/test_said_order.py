"""Turns said at the very same time (a transcript dated by its sessions only) keep the
order they arrived in, in their episodes and in what memory search reads around a turn."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from uuid import uuid4

from api.services.recall import prepare
from events.memory import EpisodeRecorded, MemoryForgotten, TurnRecorded
from projections.index.documents import episode_object
from streams.memory.episoder import Episoder

SESSION = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turn(text: str, said: datetime = SESSION, group: str = "t:s1") -> TurnRecorded:
    return TurnRecorded(
        event_id=uuid4(), group_id=group, user_message=text, agent_response="",
        speaker="Caroline", occurred_at=said,
    )  # fmt: skip


def episodes(episoder: Episoder, turns: list[TurnRecorded]) -> list[EpisodeRecorded]:
    out = asyncio.run(episoder(turns))
    return [e.event for e in out if isinstance(e.event, EpisodeRecorded)]


def test_turns_said_at_one_time_are_placed_a_microsecond_apart_in_arrival_order() -> None:
    episoder = Episoder(model=None)
    first = episodes(episoder, [turn("one"), turn("two")])
    later = episodes(episoder, [turn("three")])  # the next batch goes on from the last
    assert [e.occurred_at - SESSION for e in first + later] == [
        timedelta(0), timedelta(microseconds=1), timedelta(microseconds=2)
    ]  # fmt: skip


def test_a_turn_said_at_another_time_keeps_its_own_even_out_of_order() -> None:
    episoder = Episoder(model=None)
    earlier = SESSION - timedelta(days=30)
    placed = episodes(episoder, [turn("a"), turn("b"), turn("imported", earlier), turn("c")])
    assert [e.occurred_at for e in placed] == [
        SESSION, SESSION + timedelta(microseconds=1), earlier, SESSION
    ]  # fmt: skip


def test_groups_are_placed_apart_and_a_forget_starts_a_group_afresh() -> None:
    episoder = Episoder(model=None)
    placed = episodes(episoder, [turn("a"), turn("x", group="t:s2"), turn("b")])
    assert [e.occurred_at - SESSION for e in placed] == [
        timedelta(0), timedelta(0), timedelta(microseconds=1)
    ]  # fmt: skip
    episoder.forgotten(MemoryForgotten(event_id=uuid4(), group_id="t:s1"))
    assert episodes(episoder, [turn("c")])[0].occurred_at == SESSION


def test_memory_search_reads_a_session_dated_transcript_in_the_order_it_was_said() -> None:
    said = [f"turn {i}" for i in range(12)]
    placed = episodes(Episoder(model=None), [turn(text) for text in said])
    objects = [episode_object(e) for e in reversed(placed)]  # the index's own order
    conversation = prepare(sorted(objects, key=lambda o: o.chunk_id))
    assert [o.text.removeprefix("Caroline: ") for o in conversation.turns] == said
    assert not conversation.before[0]
    assert all(conversation.before[1:])  # one session, each turn after the one before
