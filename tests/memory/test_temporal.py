"""Temporal placement of facts: replace, restate, late events, multi-valued."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from streams.memory.temporal import FactVersion, place

OAK, ELM, PINE = uuid4(), uuid4(), uuid4()


def at(day: int) -> datetime:
    return datetime(2026, 3, day, tzinfo=UTC)


def fact(target: UUID, day: int) -> FactVersion:
    return FactVersion(uuid4(), target, at(day))


def test_newer_contradicting_fact_invalidates_the_current_one() -> None:
    first = fact(OAK, 1)
    timeline, _ = place([], first, single_valued=True)
    second = fact(ELM, 10)
    timeline, placed = place(timeline, second, single_valued=True)
    assert placed.asserted == second
    [closed] = placed.invalidated
    assert (closed.relationship_id, closed.valid_to, closed.invalidated_by) == (
        first.relationship_id, at(10), second.relationship_id,
    )  # fmt: skip
    assert [(f.target, f.valid_to) for f in timeline] == [(OAK, at(10)), (ELM, None)]


def test_restating_what_holds_changes_nothing() -> None:
    timeline, _ = place([], fact(OAK, 1), single_valued=True)
    again, placed = place(timeline, fact(OAK, 5), single_valued=True)
    assert placed.asserted is None
    assert again == timeline


def test_late_fact_is_placed_in_time_between_known_ones() -> None:
    timeline, _ = place([], fact(OAK, 1), single_valued=True)
    timeline, _ = place(timeline, fact(ELM, 20), single_valued=True)
    late = fact(PINE, 10)  # learned now, true from the 10th: between Oak and Elm
    timeline, placed = place(timeline, late, single_valued=True)
    assert placed.asserted is not None
    assert placed.asserted.valid_to == at(20)
    [closed] = placed.invalidated
    assert closed.valid_to == at(10)
    assert closed.invalidated_by == late.relationship_id
    assert [(f.target, f.valid_from, f.valid_to) for f in timeline] == [
        (OAK, at(1), at(10)), (PINE, at(10), at(20)), (ELM, at(20), None),
    ]  # fmt: skip


def test_late_fact_older_than_everything_ends_where_the_first_starts() -> None:
    timeline, _ = place([], fact(ELM, 20), single_valued=True)
    timeline, placed = place(timeline, fact(OAK, 1), single_valued=True)
    assert placed.asserted is not None
    assert placed.asserted.valid_to == at(20)
    assert placed.invalidated == ()


def test_multi_valued_relations_accumulate() -> None:
    timeline, _ = place([], fact(OAK, 1), single_valued=False)
    timeline, placed = place(timeline, fact(ELM, 2), single_valued=False)
    assert placed.asserted is not None
    assert placed.invalidated == ()
    _, placed = place(timeline, fact(ELM, 3), single_valued=False)
    assert placed.asserted is None
