"""The change feed's reads: a group's relationship versions in the order the log holds them.

Relationship versions are insert-only and carry the (partition, offset) of the event
that recorded them, and a group's facts share one partition of ``tribal.memory.facts``
(keyed by ``group_id``), so the offset is a cursor a reader resumes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from projections.graph.models import require_group_id
from projections.graph.port import GraphReads
from projections.graph.projection import DEFAULT_SCHEMA
from projections.rows import quoted

_SINCE = """
SELECT r.relationship_id, r.version, r.change, r.relation_type, r.fact,
       r.source_entity_id, se.name AS source_name, r.target_entity_id, te.name AS target_name,
       r.valid_from, r.valid_to, r.recorded_at, r.invalidated_by, r.reason, r."offset"
FROM {s}.relationships r
LEFT JOIN {s}.entities se ON se.group_id = r.group_id AND se.entity_id = r.source_entity_id
LEFT JOIN {s}.entities te ON te.group_id = r.group_id AND te.entity_id = r.target_entity_id
WHERE r.group_id = $1 AND r."offset" > $2 ORDER BY r."offset", r.version LIMIT $3
"""


@dataclass(frozen=True)
class FactChange:
    """A relationship version as recorded: ``change`` is ``asserted`` or ``invalidated``.

    The names are those of the entities at either end as they stand now (None for an
    entity merged away since).
    """

    relationship_id: UUID
    version: int
    change: str
    relation_type: str
    fact: str | None
    source_entity_id: UUID
    source_name: str | None
    target_entity_id: UUID
    target_name: str | None
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    invalidated_by: UUID | None
    reason: str | None
    offset: int
    """Where the event that recorded it stands in the group's partition."""


async def changes_after(
    db: GraphReads, group_id: str, after: int, *, limit: int, schema: str = DEFAULT_SCHEMA
) -> list[FactChange]:
    """The group's versions recorded at offsets past ``after``, first first, at most ``limit``."""
    group_id = require_group_id(group_id)
    rows = await db.fetch(_SINCE.format(s=quoted(schema)), group_id, after, limit)
    return [FactChange(**r) for r in rows]


async def last_offset(db: GraphReads, group_id: str, *, schema: str = DEFAULT_SCHEMA) -> int | None:
    """The offset of the group's last recorded version; None while it has none."""
    group_id = require_group_id(group_id)
    value = await db.fetchval(
        f'SELECT max("offset") FROM {quoted(schema)}.relationships WHERE group_id = $1', group_id
    )
    return None if value is None else int(value)
