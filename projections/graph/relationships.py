"""Relationship versions: never updated in place, only expired and superseded.

Each relationship is a chain of versions. A version is *recorded* by the event that
created it (``recorded_at`` = that event's ``occurred_at``) and *expired* by the next
event that changed the relationship (``expired_at``). So:

* ``RelationshipAsserted`` for a new id creates version 1. Asserting a known id again
  with different content (a correction) expires the current version and records the
  corrected one; asserting the same content again changes nothing.
* ``RelationshipInvalidated`` expires the current version and records a copy whose
  ``valid_to`` is the invalidation's: world time closes, nothing is deleted, and the
  version that was believed before the invalidation stays queryable by ``known_at``.

An event recorded before the current version (an upstream replay of old facts,
say) is stale and changes nothing, so a version never expires before it was recorded.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from events.facts import RelationshipAsserted, RelationshipInvalidated
from projections.base import Applied

log = logging.getLogger(__name__)

_COLUMNS = (
    "group_id", "relationship_id", "version", "source_entity_id", "target_entity_id",
    "relation_type", "fact", "attributes", "confidence", "valid_from", "valid_to",
    "recorded_at", "expired_at", "change", "episode_id", "invalidated_by", "reason",
    "event_id", "topic", "partition", "offset",
)  # fmt: skip
_CONTENT = (
    "source_entity_id", "target_entity_id", "relation_type", "fact", "attributes",
    "confidence", "valid_from", "valid_to",
)  # fmt: skip


async def _current(conn: Any, s: str, group_id: str, relationship_id: Any) -> Any:
    return await conn.fetchrow(
        f"SELECT * FROM {s}.relationships "
        "WHERE group_id = $1 AND relationship_id = $2 ORDER BY version DESC LIMIT 1 FOR UPDATE",
        group_id, relationship_id,
    )  # fmt: skip


async def _supersede(conn: Any, s: str, current: Any, values: dict[str, Any]) -> None:
    """Expire ``current`` (if any) and record ``values`` as the next version."""
    at = values["recorded_at"]
    if current is not None:
        await conn.execute(
            f"UPDATE {s}.relationships SET expired_at = $4 "
            "WHERE group_id = $1 AND relationship_id = $2 AND version = $3",
            current["group_id"], current["relationship_id"], current["version"], at,
        )  # fmt: skip
    row = {
        **values,
        "version": 1 if current is None else current["version"] + 1,
        "recorded_at": at,
        "expired_at": None,
    }
    names = ", ".join(f'"{c}"' for c in _COLUMNS)
    params = ", ".join(f"${n}::jsonb" if c == "attributes" else f"${n}"
                       for n, c in enumerate(_COLUMNS, start=1))  # fmt: skip
    await conn.execute(
        f"INSERT INTO {s}.relationships ({names}) VALUES ({params})",
        *(row[c] for c in _COLUMNS),
    )


def _provenance(applied: Applied) -> dict[str, Any]:
    e = applied.event
    return {
        "recorded_at": e.occurred_at,
        "event_id": e.event_id,
        "topic": applied.topic,
        "partition": applied.partition,
        "offset": applied.offset,
    }


async def assert_version(conn: Any, s: str, e: RelationshipAsserted, applied: Applied) -> None:
    """Record a new relationship, or a corrected version of a known one."""
    current = await _current(conn, s, e.group_id, e.relationship_id)
    values = {
        "group_id": e.group_id,
        "relationship_id": e.relationship_id,
        "source_entity_id": e.source_entity_id,
        "target_entity_id": e.target_entity_id,
        "relation_type": e.relation_type,
        "fact": e.fact,
        "attributes": json.dumps(e.attributes, sort_keys=True),
        "confidence": e.confidence,
        "valid_from": e.valid_from,
        "valid_to": e.valid_to,
        "change": "asserted",
        "episode_id": e.episode_id,
        "invalidated_by": None,
        "reason": None,
        **_provenance(applied),
    }
    if current is not None and (_stale(current, e.occurred_at) or _same_content(current, values)):
        return
    await _supersede(conn, s, current, values)


def _stale(current: Any, occurred_at: Any) -> bool:
    return bool(occurred_at < current["recorded_at"])


def _same_content(current: Any, values: dict[str, Any]) -> bool:
    for column in _CONTENT:
        old, new = current[column], values[column]
        if column == "attributes":
            old, new = json.loads(old), json.loads(new)
        if old != new:
            return False
    return True


async def invalidate(conn: Any, s: str, e: RelationshipInvalidated, applied: Applied) -> None:
    """Close the relationship's world time at ``valid_to`` in a new version."""
    current = await _current(conn, s, e.group_id, e.relationship_id)
    if current is None:
        log.warning("graph: %s invalidates unknown relationship %s", e.group_id, e.relationship_id)
        return
    if _stale(current, e.occurred_at) or (
        current["valid_to"] == e.valid_to and current["invalidated_by"] == e.invalidated_by
    ):
        return
    values = {c: current[c] for c in _COLUMNS}
    values.update(
        valid_to=e.valid_to,
        change="invalidated",
        episode_id=e.episode_id,
        invalidated_by=e.invalidated_by,
        reason=e.reason,
        **_provenance(applied),
    )
    await _supersede(conn, s, current, values)


async def record(
    conn: Any, s: str, e: RelationshipAsserted | RelationshipInvalidated, applied: Applied
) -> None:
    """The version an assertion or an invalidation makes, if it makes one."""
    if isinstance(e, RelationshipAsserted):
        await assert_version(conn, s, e, applied)
    else:
        await invalidate(conn, s, e, applied)
