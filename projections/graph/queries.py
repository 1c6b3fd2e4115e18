"""Point-in-time reads of the temporal graph, always within one ``group_id``.

Every public function takes ``db`` (a :class:`~projections.graph.port.GraphReads`, such
as an asyncpg pool or connection) and a required ``group_id``, validated before any SQL
runs; every statement filters on it. Two clocks select a version of each relationship:

* ``as_of`` (world time): the fact held then, ``valid_from <= as_of < valid_to``.
  None means now.
* ``known_at`` (system time): the version recorded by then and not yet superseded,
  ``recorded_at <= known_at < expired_at``. None means the latest knowledge.
"""

from __future__ import annotations

import json
from datetime import datetime
from uuid import UUID

from projections.graph.models import (
    Alias,
    EntityHistory,
    EntityRecord,
    EntityVersion,
    Fact,
    Provenance,
    require_aware,
    require_group_id,
)
from projections.graph.port import GraphReads
from projections.graph.projection import DEFAULT_SCHEMA
from projections.rows import Row, contains_pattern, from_row, quoted

_FACTS = """
SELECT r.*, r.attributes::text AS attrs,
       coalesce(sa.entity_id, r.source_entity_id) AS source_id, se.name AS source_name,
       coalesce(ta.entity_id, r.target_entity_id) AS target_id, te.name AS target_name,
       (SELECT array_agg(v.episode_id ORDER BY v.version) FROM {s}.relationships v
        WHERE v.group_id = r.group_id AND v.relationship_id = r.relationship_id
          AND v.version <= r.version AND v.change = 'asserted' AND v.episode_id IS NOT NULL
       ) AS said_in
FROM {s}.relationships r
LEFT JOIN {s}.aliases sa ON sa.group_id = r.group_id AND sa.alias_id = r.source_entity_id
LEFT JOIN {s}.aliases ta ON ta.group_id = r.group_id AND ta.alias_id = r.target_entity_id
LEFT JOIN {s}.entities se ON se.group_id = r.group_id
     AND se.entity_id = coalesce(sa.entity_id, r.source_entity_id)
LEFT JOIN {s}.entities te ON te.group_id = r.group_id
     AND te.entity_id = coalesce(ta.entity_id, r.target_entity_id)
WHERE r.group_id = $1
"""


def _uuid(value: UUID | str) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))


def _provenance(row: Row, change: str) -> Provenance:
    return from_row(Provenance, row, change=change)


def _fact(row: Row) -> Fact:
    return from_row(
        Fact,
        row,
        source_entity_id=row["source_id"],
        target_entity_id=row["target_id"],
        attributes=json.loads(row["attrs"]),
        provenance=_provenance(row, row["change"]),
        episode_ids=tuple(dict.fromkeys(row["said_in"] or ())),
    )


async def facts_for(
    db: GraphReads,
    group_id: str,
    *,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    schema: str = DEFAULT_SCHEMA,
    limit: int = 1000,
) -> list[Fact]:
    """The relationships that held at ``as_of``, as they were known at ``known_at``."""
    group_id = require_group_id(group_id)
    as_of, known_at = require_aware("as_of", as_of), require_aware("known_at", known_at)
    rows = await db.fetch(
        _FACTS.format(s=quoted(schema))
        + "AND r.valid_from <= coalesce($2, now()) "
        "AND (r.valid_to IS NULL OR r.valid_to > coalesce($2, now())) "
        "AND (($3::timestamptz IS NULL AND r.expired_at IS NULL) OR ($3 IS NOT NULL "
        "AND r.recorded_at <= $3 AND (r.expired_at IS NULL OR r.expired_at > $3))) "
        "ORDER BY r.valid_from, r.relationship_id LIMIT $4",
        group_id, as_of, known_at, limit,
    )  # fmt: skip
    return [_fact(r) for r in rows]


def _record(row: Row, aliases: tuple[str, ...]) -> EntityRecord:
    return from_row(EntityRecord, row, attributes=json.loads(row["attributes"]), aliases=aliases)


def _version(row: Row) -> EntityVersion:
    return from_row(
        EntityVersion,
        row,
        attributes=json.loads(row["attributes"]),
        provenance=_provenance(row, row["change"]),
    )


async def entity_with_history(
    db: GraphReads, group_id: str, entity_id: UUID | str, *, schema: str = DEFAULT_SCHEMA
) -> EntityHistory | None:
    """The entity (or the one it was merged into), every version, every fact version.

    Each version carries its provenance: the episode, the event and its
    (topic, partition, offset). None when the group has no such entity.
    """
    group_id = require_group_id(group_id)
    s, wanted = quoted(schema), _uuid(entity_id)
    kept = await db.fetchval(
        f"SELECT entity_id FROM {s}.aliases WHERE group_id = $1 AND alias_id = $2",
        group_id, wanted,
    )  # fmt: skip
    kept = wanted if kept is None else kept
    row = await db.fetchrow(
        f"SELECT * FROM {s}.entities WHERE group_id = $1 AND entity_id = $2", group_id, kept
    )
    if row is None:
        return None
    alias_rows = await db.fetch(
        f"SELECT * FROM {s}.aliases WHERE group_id = $1 AND entity_id = $2 "
        "ORDER BY recorded_at, alias_id",
        group_id, kept,
    )  # fmt: skip
    aliases = tuple(
        from_row(Alias, a, name=a["alias_name"], provenance=_provenance(a, "merged"))
        for a in alias_rows
    )
    ids = [kept, *(a.alias_id for a in aliases)]
    version_rows = await db.fetch(
        f"SELECT * FROM {s}.entity_versions WHERE group_id = $1 AND entity_id = ANY($2::uuid[]) "
        'ORDER BY recorded_at, topic, partition, "offset", extracted_id',
        group_id, ids,
    )  # fmt: skip
    versions = tuple(_version(v) for v in version_rows)
    fact_rows = await db.fetch(
        _FACTS.format(s=s) + "AND (r.source_entity_id = ANY($2::uuid[]) "
        "OR r.target_entity_id = ANY($2::uuid[])) ORDER BY r.relationship_id, r.version",
        group_id, ids,
    )  # fmt: skip
    names = tuple(a.name for a in aliases if a.name and a.name != row["name"])
    return EntityHistory(_record(row, names), aliases, versions, tuple(_fact(r) for r in fact_rows))


async def search_entities(
    db: GraphReads, group_id: str, name_like: str, *, schema: str = DEFAULT_SCHEMA, limit: int = 20
) -> list[EntityRecord]:
    """Entities whose name, or a merged duplicate's name, contains ``name_like``.

    Case-insensitive; ``%`` and ``_`` match themselves. Exact names come first.
    """
    group_id = require_group_id(group_id)
    s = quoted(schema)
    rows = await db.fetch(
        f"SELECT e.*, coalesce(array_agg(a.alias_name) FILTER (WHERE a.alias_name IS NOT NULL "
        "AND a.alias_name <> e.name), '{}') AS alias_names "
        f"FROM {s}.entities e LEFT JOIN {s}.aliases a "
        "ON a.group_id = e.group_id AND a.entity_id = e.entity_id "
        "WHERE e.group_id = $1 GROUP BY e.group_id, e.entity_id "
        "HAVING e.name ILIKE $2 OR bool_or(a.alias_name ILIKE $2) "
        "ORDER BY lower(e.name) = lower($3) DESC, e.name, e.entity_id LIMIT $4",
        group_id, contains_pattern(name_like), name_like, limit,
    )  # fmt: skip
    return [_record(r, tuple(sorted(set(r["alias_names"])))) for r in rows]
