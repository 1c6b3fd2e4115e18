"""The one rule for control characters, refused at the edges and normalized in sources."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from events.limits import GROUP_ID_MAX, METADATA_KEY_MAX, METADATA_MAX_ENTRIES, SESSION_MAX
from events.memory import MemoryForgotten, SystemEventRecorded, TurnRecorded
from events.problems import problem_of
from events.text import (
    CONTROL_CHARACTERS,
    CleanText,
    ControlCharacterError,
    check_text,
    describe,
    find_control,
    normalize_model,
    normalize_text,
)

CONTROL = [
    *(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"),
    "\x7f",
    *(chr(c) for c in range(0x80, 0xA0)),
    "\ud800",
    "\udfff",
    "\ufffe",
    "\uffff",
]
ALLOWED = ["\t", "\n", "\r", " ", "a", "é", "\u00a0", "\u200b", "\ufeff", "\ufffd", "🚀", "\u2028"]


@pytest.mark.parametrize("char", CONTROL, ids=lambda c: f"U+{ord(c):04X}")
def test_every_control_character_is_found(char: str) -> None:
    assert find_control(f"ab{char}c") == (2, char)


@pytest.mark.parametrize("char", ALLOWED, ids=lambda c: f"U+{ord(c):04X}")
def test_tab_newline_return_and_ordinary_unicode_are_not_control_characters(char: str) -> None:
    assert find_control(f"ab{char}c") is None
    assert normalize_text(char) == (char, None)


def test_a_refusal_names_the_field_the_character_and_its_index() -> None:
    with pytest.raises(ControlCharacterError) as error:
        check_text("a\x00b", "user_message")
    assert str(error.value).startswith("user_message: control character U+0000 (NUL) at index 1")
    assert (error.value.char, error.value.index) == ("\x00", 1)


@pytest.mark.parametrize(
    ("char", "name"),
    [("\x00", "U+0000 (NUL)"), ("\x1b", "U+001B (ESC)"), ("\x7f", "U+007F (DEL)"),
     ("\x85", "U+0085 (C1 control)"), ("\ud800", "U+D800 (lone surrogate)"),
     ("\uffff", "U+FFFF (noncharacter)")],
)  # fmt: skip
def test_each_kind_of_control_character_is_described(char: str, name: str) -> None:
    assert describe(char) == name


def test_normalizing_removes_and_counts_what_it_removed() -> None:
    assert normalize_text("a\x00b\x00c\x1b") == (
        "abc",
        "removed 3 control characters (U+0000 x2, U+001B)",
    )
    assert normalize_text("clean\ttext\n") == ("clean\ttext\n", None)


def test_a_note_lists_at_most_eight_kinds_of_character() -> None:
    _, note = normalize_text("".join(chr(c) for c in range(0x80, 0x90)))
    assert note == (
        "removed 16 control characters (U+0080, U+0081, U+0082, U+0083, U+0084, U+0085, "
        "U+0086, U+0087, …)"
    )


@given(st.text())
def test_normalized_text_has_no_control_characters_and_keeps_everything_else(text: str) -> None:
    cleaned, note = normalize_text(text)
    assert find_control(cleaned) is None
    assert cleaned == "".join(c for c in text if not CONTROL_CHARACTERS.match(c))
    assert (note is None) == (cleaned == text)


class _Request(BaseModel):
    query: CleanText = Field(max_length=10)
    tags: list[CleanText] = []


def test_clean_text_is_a_pydantic_type_whose_error_maps_to_invalid_text() -> None:
    with pytest.raises(ValidationError) as error:
        _Request(query="ok", tags=["fine", "bad\x1b"])
    problem = problem_of(error.value)
    assert problem.code == "INVALID_TEXT"
    assert problem.message.startswith("tags.1: control character U+001B (ESC) at index 3")
    with pytest.raises(ValidationError, match="at most 10"):
        _Request(query="x" * 11)


class _Noted(BaseModel):
    title: str
    items: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def test_normalizing_a_model_notes_each_field_it_changed() -> None:
    clean = normalize_model(_Noted(title="a\x07", items=("ok", "b\x00\x00")))
    assert clean == _Noted(
        title="a",
        items=("ok", "b"),
        notes=(
            "title: removed 1 control character (U+0007)",
            "items[1]: removed 2 control characters (U+0000 x2)",
        ),
    )
    same = _Noted(title="fine")
    assert normalize_model(same) is same


# -- the memory events refuse what the edges refuse ---------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"user_message": "a\x00b"},
        {"agent_response": "\x1b[31m"},
        {"metadata": {"k": "v\x00"}},
        {"metadata": {"k\x85": "v"}},
    ],
    ids=["user_message", "agent_response", "metadata_value", "metadata_key"],
)
def test_a_turn_with_a_control_character_cannot_exist(fields: dict[str, object]) -> None:
    base: dict[str, object] = {"group_id": "acme:s1", "user_message": "hi", "agent_response": ""}
    with pytest.raises(ValidationError) as error:
        TurnRecorded.model_validate(base | fields)
    assert problem_of(error.value).code == "INVALID_TEXT"


def test_system_events_and_forgetting_refuse_control_characters_too() -> None:
    with pytest.raises(ValidationError):
        SystemEventRecorded(group_id="acme:s1", event_type="tool\x00", content="ran")
    with pytest.raises(ValidationError):
        SystemEventRecorded(group_id="acme:s1", event_type="tool", content="\x7f")
    with pytest.raises(ValidationError):
        MemoryForgotten(group_id="acme:s1", reason="\x1b")


@pytest.mark.parametrize(
    "metadata",
    [
        {f"k{n}": "v" for n in range(METADATA_MAX_ENTRIES + 1)},
        {"k" * (METADATA_KEY_MAX + 1): "v"},
        {"k": "v" * 2001},
    ],
    ids=["too_many_entries", "key_too_long", "value_too_long"],
)
def test_turn_metadata_is_bounded(metadata: dict[str, str]) -> None:
    with pytest.raises(ValidationError) as error:
        TurnRecorded(group_id="acme:s1", user_message="hi", agent_response="", metadata=metadata)
    assert problem_of(error.value).code == "INVALID_REQUEST"


def test_metadata_at_its_limits_is_accepted() -> None:
    metadata = {f"{n:0{METADATA_KEY_MAX}d}": "v" * 2000 for n in range(METADATA_MAX_ENTRIES)}
    turn = TurnRecorded(group_id="acme:s1", user_message="hi", agent_response="", metadata=metadata)
    assert len(turn.metadata) == METADATA_MAX_ENTRIES


def test_a_group_id_is_bounded_in_each_part() -> None:
    longest = "t" * 128 + ":" + "s" * SESSION_MAX
    assert len(longest) == GROUP_ID_MAX
    assert TurnRecorded(group_id=longest, user_message="hi", agent_response="").session_id
    for too_long in ("t" * 129 + ":s", "t:" + "s" * (SESSION_MAX + 1), "acme:" + "s" * 10_000):
        with pytest.raises(ValidationError) as error:
            TurnRecorded(group_id=too_long, user_message="hi", agent_response="")
        assert problem_of(error.value).code == "INVALID_GROUP_ID"
        assert "characters)" in str(error.value)  # the long value is cut in the message
