"""Conversations between named people: each turn's ``speaker`` is who said it, in the
episode and in the facts its first person states."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import NAMESPACE_URL, uuid5

from devstack.memory import memory
from events.facts import RelationshipAsserted
from events.memory import TurnRecorded
from streams.memory.episoder import turn_content

START = datetime(2025, 5, 1, 18, 0, tzinfo=UTC)


def said(group_id: str, *lines: tuple[str, str]) -> list[TurnRecorded]:
    return [
        TurnRecorded(
            event_id=uuid5(NAMESPACE_URL, f"{group_id}/{n}"), group_id=group_id,
            occurred_at=START + timedelta(hours=n), user_message=text, agent_response="",
            speaker=who,
        )
        for n, (who, text) in enumerate(lines)
    ]  # fmt: skip


def test_an_episode_shows_who_said_it_in_their_own_name() -> None:
    [turn] = said("friends:chat", ("Caroline", "I moved to Bristol."))
    assert turn_content(turn) == "Caroline: I moved to Bristol."
    answered = turn.model_copy(update={"agent_response": "Noted."})
    assert turn_content(answered) == "Caroline: I moved to Bristol.\nAgent: Noted."
    unnamed = turn.model_copy(update={"speaker": None})
    assert turn_content(unnamed) == "User: I moved to Bristol."


async def test_the_episode_keeps_the_speaker_and_the_turn_in_its_metadata() -> None:
    turns = said("friends:chat", ("Caroline", "I moved to Bristol."))
    [episode], _, _ = await memory().run(turns)
    assert episode.content == "Caroline: I moved to Bristol."
    assert episode.source_metadata["speaker"] == "Caroline"
    assert episode.source_metadata["turn_id"] == str(turns[0].turn_id)


async def stated(group_id: str, *lines: tuple[str, str]) -> set[tuple[str, str, str]]:
    """(source, relation, target), by entity name, of each fact a conversation asserts."""
    m = memory()
    _, facts, _ = await m.run(said(group_id, *lines))
    entities = m.extractor.fold.dedup.groups[group_id].entities.values()
    names = {e.entity_id: e.name for e in entities}
    return {
        (names[f.source_entity_id], f.relation_type, names[f.target_entity_id])
        for f in facts
        if isinstance(f, RelationshipAsserted)
    }


FIRST_PERSON = [
    ("Caroline", "I live in Leeds.", "lives_in", "Leeds"),
    ("Melanie", "I live in York.", "lives_in", "York"),
    ("Jon", "I work at Initech.", "works_at", "Initech"),
    ("Caroline", "My email is caroline@example.com.", "email", "caroline@example.com"),
    ("Melanie", "I moved to Bristol last month.", "lives_in", "Bristol"),
]
"""(speaker, what they say, relation, target): one chat among friends, and the fact each
line states about whoever said it."""


async def test_first_person_statements_belong_to_whoever_said_them() -> None:
    asserted = await stated("friends:chat", *((who, text) for who, text, _, _ in FIRST_PERSON))
    assert asserted == {(who, relation, target) for who, _, relation, target in FIRST_PERSON}


async def test_we_is_the_organisation_of_the_speaker_not_of_the_last_one_who_named_theirs() -> None:
    asserted = await stated(
        "team:chat",
        ("Priya", "I work at Globex."),
        ("Tom", "I work at Acme."),
        ("Priya", "We use Square for card payments."),
    )
    uses = {(source, target) for source, relation, target in asserted if relation == "uses"}
    assert uses == {("Globex", "Square")}


async def test_a_speaker_named_like_a_role_or_with_a_colon_is_still_the_one_speaking() -> None:
    asserted = await stated(
        "odd:names", ("Agent", "I live in Leeds."), ("Dr: Who", "I live in Cardiff.")
    )
    lives = {(source, target) for source, _, target in asserted}
    assert lives == {("Agent", "Leeds"), ("Dr: Who", "Cardiff")}
