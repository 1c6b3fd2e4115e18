"""The offsets each projection recorded with its writes, read without opening the projection.

A projection stores the next offset it will apply per (topic, partition) in the same
transaction or batch as its data: the PostgreSQL ones in ``projection_offsets`` of their
schema, the index in its live generation. Lag readers (``/healthz``, ``/metrics``) read
those records over connections they already hold; they neither build the projections
nor run their ``setup()``, which creates tables and belongs to the writers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from projections.base import TopicPartitionKey
from projections.catalog.projection import DEFAULT_SCHEMA as CATALOG_SCHEMA
from projections.catalog.projection import CatalogProjection
from projections.deadletters import DeadLetterProjection
from projections.graph.projection import DEFAULT_SCHEMA as GRAPH_SCHEMA
from projections.graph.projection import GraphProjection
from projections.index.port import SearchIndex
from projections.index.projection import IndexProjection
from projections.pg import POSITIONS_SQL
from projections.rows import quoted

Positions = dict[TopicPartitionKey, int]

POSTGRES_OFFSETS = (
    (DeadLetterProjection.name, DeadLetterProjection.topics, "tribal_ops"),
    (CatalogProjection.name, CatalogProjection.topics, CATALOG_SCHEMA),
    (GraphProjection.name, GraphProjection.topics, GRAPH_SCHEMA),
)
"""Name, topics and schema of each PostgreSQL projection, as ``projections.registry``
builds them."""

INDEX = "index"


@dataclass(frozen=True)
class StoredOffsets:
    """One projection's recorded positions, as :func:`projections.lag.projection_lags`
    reads them."""

    name: str
    topics: tuple[str, ...]
    read: Callable[[], Awaitable[Positions]]

    async def positions(self) -> Positions:
        """The next offset per (full topic name, partition); absent = from the start."""
        return await self.read()


def stored_offsets(pool: Any | None, index: SearchIndex | None) -> list[StoredOffsets]:
    """Every projection whose offsets can be read here: the PostgreSQL ones over
    ``pool`` (an asyncpg pool on the installation's database), the index through
    ``index`` (either adapter); a store that is not open is left out."""
    found: list[StoredOffsets] = []
    if pool is not None:
        for name, topics, schema in POSTGRES_OFFSETS:
            found.append(StoredOffsets(name, topics, _postgres_reader(pool, schema, name)))
    if index is not None:
        found.append(StoredOffsets(INDEX, IndexProjection.topics, lambda: index.positions(INDEX)))
    return found


def _postgres_reader(pool: Any, schema: str, name: str) -> Callable[[], Awaitable[Positions]]:
    async def read() -> Positions:
        import asyncpg

        try:
            rows = await pool.fetch(POSITIONS_SQL.format(schema=quoted(schema)), name)
        except asyncpg.UndefinedTableError:  # never set up: nothing applied yet
            return {}
        return {(r["topic"], r["partition"]): r["next_offset"] for r in rows}

    return read
