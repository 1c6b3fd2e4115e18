"""Temporal facts: where a new statement goes in a relationship's timeline (pure).

A timeline holds the versions of one (source entity, relation). For a single-valued
relation (an address, an employer, a status) at most one target holds at any instant:

* a statement of what already holds is a restatement and changes nothing;
* a newer, different target closes the current fact at the new ``valid_from``
  (``RelationshipInvalidated``: kept, never deleted) and holds from then on;
* a late statement (``valid_from`` older than facts already known) is placed in
  time: it closes the fact it interrupts and itself ends where the next one starts.

For a multi-valued relation (ordered, uses) a statement only adds a target that is
not already open.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from datetime import datetime
from uuid import UUID


@dataclass(frozen=True)
class FactVersion:
    """One known fact of a timeline."""

    relationship_id: UUID
    target: UUID
    valid_from: datetime
    valid_to: datetime | None = None


@dataclass(frozen=True)
class Invalidation:
    relationship_id: UUID
    valid_to: datetime
    invalidated_by: UUID


@dataclass(frozen=True)
class Placement:
    """What a statement does: the fact to assert (if any) and the facts it closes."""

    asserted: FactVersion | None
    invalidated: tuple[Invalidation, ...] = ()


def place(
    timeline: list[FactVersion], new: FactVersion, single_valued: bool
) -> tuple[list[FactVersion], Placement]:
    """The timeline after ``new`` and what changed; ``timeline`` is sorted by ``valid_from``."""
    if not single_valued:
        if any(f.target == new.target and f.valid_to is None for f in timeline):
            return timeline, Placement(None)
        return sorted([*timeline, new], key=lambda f: f.valid_from), Placement(new)
    starts = [f.valid_from for f in timeline]
    at = bisect.bisect_right(starts, new.valid_from)
    prev = timeline[at - 1] if at > 0 else None
    after = timeline[at] if at < len(timeline) else None
    if (prev is not None and prev.target == new.target) or (
        after is not None and after.target == new.target and prev is None
    ):
        return timeline, Placement(None)  # already known to hold then
    placed = replace(new, valid_to=after.valid_from if after is not None else None)
    closed: list[Invalidation] = []
    out = list(timeline)
    if prev is not None and (prev.valid_to is None or prev.valid_to > new.valid_from):
        closed.append(Invalidation(prev.relationship_id, new.valid_from, new.relationship_id))
        out[at - 1] = replace(prev, valid_to=new.valid_from)
    out.insert(at, placed)
    return out, Placement(placed, tuple(closed))
