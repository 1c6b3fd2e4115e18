"""Temporal facts: the intervals a relationship's statements make, read in world time (pure).

A timeline holds every statement of one (source entity, relation). :func:`intervals`
reads them in world-time order (``valid_from``; ties in arrival order), whatever order
they arrived in, so a conversation imported late or shuffled ends in the same facts:

* for a single-valued relation (an address, an employer, a status) at most one target
  holds at any instant: a statement of what already holds is a restatement and changes
  nothing; a different target closes the current fact where it starts;
* for a multi-valued relation (ordered, uses) a statement adds a target that is not
  already open; a statement that names what it replaces ("switched from Square to
  Stripe") closes that open target, and one that replaces them all (:data:`EVERY`, "we
  moved the office to Leith") closes every target opened before it.

Each interval keeps the id of the statement of it that *arrived* first, so what was
already published keeps its id when an older statement arrives late: the late one
moves the interval's start back (a correction) instead of becoming a second fact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

EVERY = "*"
"""A statement's ``replaces`` when it replaces every value held before it ("we moved the
office to Leith": the old sites close, whatever their names; values stated at the same
time stay)."""


@dataclass(frozen=True, slots=True)
class Held:
    """``target`` holds from ``valid_from``, by the relationship ``relationship_id``.

    Slotted, as its subclasses are: the facts fold keeps every statement and every fact
    of every group in memory, and a slotted record takes about a third less."""

    relationship_id: UUID
    target: UUID
    valid_from: datetime


@dataclass(frozen=True, slots=True)
class Statement(Held):
    """One statement of what holds; ``seq``: arrival order."""

    seq: int
    replaces: str | None = None
    """The name of the value it says it replaces (closes it even when many-valued)."""


@dataclass(frozen=True, slots=True)
class Interval(Held):
    """A fact: what holds from ``valid_from`` until ``valid_to`` (None: still holds)."""

    valid_to: datetime | None = None
    invalidated_by: UUID | None = None
    """The interval (relationship) whose statement closed this one."""
    closed_by: Statement | None = None
    replaced: bool = False
    """Closed because a statement named it as replaced (else superseded)."""


@dataclass
class _Open:
    members: list[Statement]
    valid_to: datetime | None = None
    closer: Statement | None = None
    replaced: bool = False
    first: Statement = field(init=False)

    def __post_init__(self) -> None:
        self.first = self.members[0]

    def close(self, by: Statement, replaced: bool) -> None:
        self.valid_to, self.closer, self.replaced = by.valid_from, by, replaced


def intervals(
    statements: Sequence[Statement],
    single_valued: bool,
    named: Callable[[UUID, str], bool] = lambda _target, _name: False,
) -> list[Interval]:
    """The facts ``statements`` make, by ``valid_from``; ``named(target, name)`` says
    whether ``name`` (a statement's ``replaces``) names ``target``."""
    made: list[_Open] = []
    holding: dict[UUID, _Open] = {}  # target -> its open interval
    # a move goes first among statements of its instant: what is said with it stays
    for s in sorted(statements, key=lambda s: (s.valid_from, s.replaces != EVERY, s.seq)):
        if single_valued:
            current = next(iter(holding.values()), None)
            if current is not None and current.first.target == s.target:
                current.members.append(s)
                continue
            if current is not None:
                current.close(s, replaced=False)
                holding.clear()
        elif s.target in holding:
            holding[s.target].members.append(s)
        if s.target not in holding:
            holding[s.target] = _Open([s])
            made.append(holding[s.target])
        if s.replaces and not single_valued:
            for target, other in list(holding.items()):
                if target == s.target:
                    continue
                if (s.replaces == EVERY and other.first.valid_from < s.valid_from) or named(
                    target, s.replaces
                ):
                    other.close(s, replaced=True)
                    del holding[target]
    owner = {m.relationship_id: _id(o) for o in made for m in o.members}
    return [
        Interval(
            relationship_id=_id(o), target=o.first.target, valid_from=o.first.valid_from,
            valid_to=o.valid_to, closed_by=o.closer, replaced=o.replaced,
            invalidated_by=owner.get(o.closer.relationship_id) if o.closer else None,
        )
        for o in made
    ]  # fmt: skip


def _id(interval: _Open) -> UUID:
    return min(interval.members, key=lambda m: m.seq).relationship_id
