"""Fold entity and relationship events into the temporal graph.

* ``EntitiesExtracted``: each entity is upserted under its surviving id (an id that
  was merged away resolves through ``aliases``); attributes merge, new keys win, and
  ``valid_from`` of an existing entity is kept (seed 003's ``merge_entities``) unless
  an earlier one arrives late (world time: the entity was known from the earlier turn).
* ``EntityMerged``: the duplicate leaves ``entities``, becomes an alias of the kept
  entity, and its attributes fold into it; its versions stay as they were.
* ``RelationshipAsserted``/``RelationshipInvalidated``: a new version of the
  relationship, see :mod:`projections.graph.relationships`.
* ``MemoryForgotten``: every row of the group (or of every group of the tenant) is
  deleted, and a tombstone makes later-replayed facts recorded before it no-ops.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

from events.base import MemoryEvent
from events.facts import (
    EntitiesExtracted,
    Entity,
    EntityMerged,
    RelationshipAsserted,
    RelationshipInvalidated,
)
from events.memory import MemoryForgotten
from projections.base import Applied
from projections.graph import relationships
from projections.graph.ddl import TABLES
from projections.pg import PgProjection

log = logging.getLogger(__name__)

DEFAULT_SCHEMA = "tribal_graph"
_GROUP_TABLES = ("relationships", "aliases", "entity_versions", "entities")


class GraphProjection(PgProjection):
    """The temporal entity graph in its own schema (``tribal_graph`` by default)."""

    name: str = "graph"
    topics: tuple[str, ...] = ("memory.facts", "memory.turns")
    tables = TABLES

    async def _forgotten(self, conn: Any, e: MemoryEvent) -> bool:
        """True when ``e`` was recorded before its group or tenant was forgotten."""
        hit = await conn.fetchval(
            f"SELECT 1 FROM {self._s}.forgotten WHERE forgotten_at >= $3 AND "
            "((scope = 'group' AND key = $1) OR (scope = 'tenant' AND key = $2))",
            e.group_id, e.tenant, e.occurred_at,
        )  # fmt: skip
        return hit is not None

    async def _resolve(self, conn: Any, group_id: str, entity_id: UUID) -> UUID:
        kept = await conn.fetchval(
            f"SELECT entity_id FROM {self._s}.aliases WHERE group_id = $1 AND alias_id = $2",
            group_id, entity_id,
        )  # fmt: skip
        return entity_id if kept is None else UUID(str(kept))

    async def _upsert_entity(
        self, conn: Any, e: MemoryEvent, entity_id: UUID, entity: Entity, attributes: str
    ) -> Any:
        """Insert or merge into ``entity_id``; returns the row as it now stands."""
        return await conn.fetchrow(
            f"INSERT INTO {self._s}.entities AS x VALUES "
            "($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $9) "
            "ON CONFLICT (group_id, entity_id) DO UPDATE SET name = EXCLUDED.name, "
            "entity_type = EXCLUDED.entity_type, "
            "attributes = x.attributes || EXCLUDED.attributes, "
            "confidence = EXCLUDED.confidence, valid_to = EXCLUDED.valid_to, "
            "valid_from = least(x.valid_from, EXCLUDED.valid_from), "
            "updated_at = greatest(x.updated_at, EXCLUDED.updated_at) RETURNING *",
            e.group_id, entity_id, entity.name, entity.entity_type, attributes,
            entity.confidence, entity.valid_from, entity.valid_to, e.occurred_at,
        )  # fmt: skip

    async def _version(
        self,
        conn: Any,
        applied: Applied,
        row: Any,
        change: str,
        extracted_id: UUID,
        episode_id: UUID | None,
    ) -> None:
        e = applied.event
        await conn.execute(
            f"INSERT INTO {self._s}.entity_versions VALUES "
            "($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16) "
            "ON CONFLICT DO NOTHING",
            row["group_id"], row["entity_id"], change, extracted_id, row["name"],
            row["entity_type"], row["attributes"], row["confidence"], row["valid_from"],
            row["valid_to"], e.occurred_at, episode_id, e.event_id, applied.topic,
            applied.partition, applied.offset,
        )  # fmt: skip

    @PgProjection.handles(EntitiesExtracted)
    async def on_entities_extracted(
        self, conn: Any, e: EntitiesExtracted, applied: Applied
    ) -> None:
        if await self._forgotten(conn, e):
            return
        for entity in e.entities:
            kept = await self._resolve(conn, e.group_id, entity.entity_id)
            attributes = json.dumps(entity.attributes)
            row = await self._upsert_entity(conn, e, kept, entity, attributes)
            await self._version(conn, applied, row, "extracted", entity.entity_id, e.episode_id)

    @PgProjection.handles(EntityMerged)
    async def on_entity_merged(self, conn: Any, e: EntityMerged, applied: Applied) -> None:
        if await self._forgotten(conn, e):
            return
        kept = await self._resolve(conn, e.group_id, e.existing_entity_id)
        gone = await self._resolve(conn, e.group_id, e.merged_entity_id)
        folded: dict[str, str] = {}
        alias_name = None
        if gone != kept:
            old = await conn.fetchrow(
                f"DELETE FROM {self._s}.entities WHERE group_id = $1 AND entity_id = $2 "
                "RETURNING name, attributes::text AS attributes",
                e.group_id, gone,
            )  # fmt: skip
            if old is not None:
                alias_name, folded = old["name"], json.loads(old["attributes"])
            await self._alias(conn, applied, e, gone, kept, alias_name)
        attributes = json.dumps({**folded, **e.entity.attributes})
        row = await self._upsert_entity(conn, e, kept, e.entity, attributes)
        await self._version(conn, applied, row, "merged", e.merged_entity_id, e.episode_id)

    async def _alias(
        self, conn: Any, applied: Applied, e: EntityMerged, gone: UUID, kept: UUID, name: str | None
    ) -> None:
        await conn.execute(
            f"INSERT INTO {self._s}.aliases VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
            "ON CONFLICT (group_id, alias_id) DO UPDATE SET entity_id = EXCLUDED.entity_id",
            e.group_id, gone, kept, name, e.stage, e.score, e.occurred_at, e.episode_id,
            e.event_id, applied.topic, applied.partition, applied.offset,
        )  # fmt: skip
        # Whatever had been merged into the duplicate now points at the survivor.
        await conn.execute(
            f"UPDATE {self._s}.aliases SET entity_id = $3 WHERE group_id = $1 AND entity_id = $2",
            e.group_id, gone, kept,
        )  # fmt: skip

    @PgProjection.handles(RelationshipAsserted, RelationshipInvalidated)
    async def on_relationship_changed(
        self, conn: Any, e: RelationshipAsserted | RelationshipInvalidated, applied: Applied
    ) -> None:
        if not await self._forgotten(conn, e):
            await relationships.record(conn, self._s, e, applied)

    @PgProjection.handles(MemoryForgotten)
    async def on_memory_forgotten(self, conn: Any, e: MemoryForgotten, applied: Applied) -> None:
        scope, key = ("tenant", e.tenant) if e.scope == "tenant" else ("group", e.group_id)
        where = "split_part(group_id, ':', 1) = $1" if scope == "tenant" else "group_id = $1"
        for table in _GROUP_TABLES:
            await conn.execute(f"DELETE FROM {self._s}.{table} WHERE {where}", key)
        await conn.execute(
            f"INSERT INTO {self._s}.forgotten AS f VALUES ($1, $2, $3) ON CONFLICT (scope, key) "
            "DO UPDATE SET forgotten_at = greatest(f.forgotten_at, EXCLUDED.forgotten_at)",
            scope, key, e.occurred_at,
        )  # fmt: skip
        log.info("graph: forgot %s %s", scope, key)
