"""Temporal facts: replace, restate, late statements, multi-valued, any arrival order."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from uuid import UUID, uuid4

from streams.memory.temporal import EVERY, Interval, Statement, intervals

OAK, ELM, PINE = uuid4(), uuid4(), uuid4()
NAMES = {OAK: "Oak", ELM: "Elm", PINE: "Pine"}


def at(day: int) -> datetime:
    return datetime(2026, 3, day, tzinfo=UTC)


def said(*facts: tuple[UUID, int] | tuple[UUID, int, str]) -> list[Statement]:
    """Statements in arrival order: (target, day) or (target, day, what it replaces)."""
    return [
        Statement(uuid4(), f[0], at(f[1]), seq, replaces=f[2] if len(f) > 2 else None)
        for seq, f in enumerate(facts)
    ]


def shape(facts: list[Interval]) -> list[tuple[UUID, datetime, datetime | None]]:
    return [(f.target, f.valid_from, f.valid_to) for f in facts]


def named(target: UUID, name: str) -> bool:
    return NAMES[target] == name


def test_newer_contradicting_fact_closes_the_current_one() -> None:
    first, second = said((OAK, 1), (ELM, 10))
    old, new = intervals([first, second], single_valued=True)
    assert shape([old, new]) == [(OAK, at(1), at(10)), (ELM, at(10), None)]
    assert (old.invalidated_by, old.closed_by, old.replaced) == (
        second.relationship_id, second, False,
    )  # fmt: skip


def test_restating_what_holds_changes_nothing() -> None:
    statements = said((OAK, 1), (OAK, 5))
    [held] = intervals(statements, single_valued=True)
    assert (held.relationship_id, held.valid_from, held.valid_to) == (
        statements[0].relationship_id, at(1), None,
    )  # fmt: skip


def test_late_fact_is_placed_in_time_between_known_ones() -> None:
    statements = said((OAK, 1), (ELM, 20), (PINE, 10))  # Pine learned last, true from the 10th
    facts = intervals(statements, single_valued=True)
    assert shape(facts) == [(OAK, at(1), at(10)), (PINE, at(10), at(20)), (ELM, at(20), None)]
    assert facts[0].invalidated_by == statements[2].relationship_id


def test_late_older_fact_never_closes_a_newer_value() -> None:
    newer, older = said((ELM, 20), (OAK, 1))
    facts = intervals([newer, older], single_valued=True)
    assert shape(facts) == [(OAK, at(1), at(20)), (ELM, at(20), None)]
    assert facts[1].relationship_id == newer.relationship_id


def test_a_late_restatement_moves_the_start_back_and_keeps_the_published_id() -> None:
    later, earlier = said((OAK, 10), (OAK, 5))
    [held] = intervals([later, earlier], single_valued=True)
    assert (held.relationship_id, held.valid_from, held.valid_to) == (
        later.relationship_id, at(5), None,
    )  # fmt: skip


def test_multi_valued_relations_accumulate() -> None:
    facts = intervals(said((OAK, 1), (ELM, 2), (ELM, 3)), single_valued=False)
    assert shape(facts) == [(OAK, at(1), None), (ELM, at(2), None)]


def test_a_named_replacement_closes_one_value_of_a_many_valued_relation() -> None:
    statements = said((OAK, 1), (ELM, 2), (PINE, 5, "Oak"))
    facts = intervals(statements, single_valued=False, named=named)
    assert shape(facts) == [(OAK, at(1), at(5)), (ELM, at(2), None), (PINE, at(5), None)]
    assert facts[0].replaced
    assert facts[0].invalidated_by == statements[2].relationship_id


def test_a_move_closes_every_value_held_before_it_in_any_arrival_order() -> None:
    days: list[tuple[UUID, int] | tuple[UUID, int, str]] = [
        (OAK, 1), (ELM, 2), (PINE, 5, EVERY), (ELM, 5),
    ]  # fmt: skip
    for order in itertools.permutations(days):
        facts = intervals(said(*order), single_valued=False, named=named)
        assert shape(facts) == [(OAK, at(1), at(5)), (ELM, at(2), at(5)), (PINE, at(5), None),
                                (ELM, at(5), None)], order  # fmt: skip


def test_every_arrival_order_makes_the_same_facts() -> None:
    days: list[tuple[UUID, int] | tuple[UUID, int, str]] = [
        (OAK, 1), (ELM, 8), (OAK, 3), (PINE, 12, "Oak"), (ELM, 15),
    ]  # fmt: skip
    expected: dict[bool, list[tuple[UUID, datetime, datetime | None]]] = {}
    for order in itertools.permutations(days):
        statements = said(*order)
        for single in (True, False):
            got = shape(intervals(statements, single_valued=single, named=named))
            assert got == expected.setdefault(single, got), (single, order)
    assert expected[True] == [
        (OAK, at(1), at(8)), (ELM, at(8), at(12)), (PINE, at(12), at(15)), (ELM, at(15), None),
    ]  # fmt: skip
    assert expected[False] == [(OAK, at(1), at(12)), (ELM, at(8), None), (PINE, at(12), None)]
