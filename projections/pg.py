"""PostgreSQL projections: one transaction per batch, offsets in the same transaction."""

from __future__ import annotations

import copy
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from events.base import Event
from projections.base import Applied, TopicPartitionKey, check_no_gap, is_next
from projections.rows import quoted

if TYPE_CHECKING:
    from runtime.settings import TribalSettings

H = TypeVar("H", bound=Callable[..., Awaitable[None]])
P = TypeVar("P", bound="PgProjection")

OFFSETS_DDL = """
CREATE TABLE IF NOT EXISTS {schema}.projection_offsets (
    projection  text    NOT NULL,
    topic       text    NOT NULL,
    partition   integer NOT NULL,
    next_offset bigint  NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (projection, topic, partition)
)"""
POSITIONS_SQL = (
    "SELECT topic, partition, next_offset FROM {schema}.projection_offsets WHERE projection = $1"
)
"""The next offset per (topic, partition) a projection recorded."""
RECORD_POSITION_SQL = (
    "INSERT INTO {schema}.projection_offsets (projection, topic, partition, next_offset) "
    "VALUES ($1, $2, $3, $4) ON CONFLICT (projection, topic, partition) DO UPDATE "
    "SET next_offset = EXCLUDED.next_offset, applied_at = now()"
)
"""Record one (projection, topic, partition)'s next offset."""


class PgProjection:
    """Base for PostgreSQL projections.

    Subclasses set ``name``, ``topics`` and ``tables``, and register one handler per
    event type with :meth:`handles`. Handlers run inside the batch's transaction. The
    tables live in schema ``tribal_<name>`` unless another is given (a rebuild's shadow).
    """

    name: str = "pg"
    topics: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    """Statements creating the projection's tables (idempotent), ``{s}`` standing for
    its quoted schema."""
    _handlers: dict[type[Event], str]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._handlers = {}
        for attr, value in vars(cls).items():
            for event_type in getattr(value, "_handles", ()):
                cls._handlers[event_type] = attr

    @staticmethod
    def handles(*event_types: type[Event]) -> Callable[[H], H]:
        """Mark ``async def on_x(self, conn, event, applied)`` as the handler of types.

        It is called with the connection of the batch's transaction, the event (one of
        ``event_types``) and the event with its place in the log.
        """

        def mark(fn: H) -> H:
            fn._handles = event_types  # type: ignore[attr-defined]
            return fn

        return mark

    def __init__(self, dsn: str, schema: str | None = None) -> None:
        self.dsn = dsn
        self.schema = schema or f"tribal_{self.name}"
        self.pool: Any = None
        self._positions: dict[TopicPartitionKey, int] = {}

    @classmethod
    def from_settings(cls: type[P], settings: TribalSettings) -> P:
        """The installation's projection (a ``projections.registry`` entry point)."""
        return cls(settings.postgres_dsn)

    @property
    def _s(self) -> str:
        return quoted(self.schema)

    def ddl(self) -> list[str]:
        """Statements that create this projection's tables in ``self.schema``."""
        return [statement.format(s=self._s) for statement in self.tables]

    async def setup(self) -> None:
        import asyncpg

        if self.pool is None:
            self.pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=4)
        async with self.pool.acquire() as conn, conn.transaction():
            # Concurrent setups (worker + API) must not race on CREATE IF NOT EXISTS.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('tribal-setup'))")
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self._s}")
            await conn.execute(OFFSETS_DDL.format(schema=self._s))
            for statement in self.ddl():
                await conn.execute(statement)

    async def positions(self) -> dict[TopicPartitionKey, int]:
        rows = await self.pool.fetch(POSITIONS_SQL.format(schema=self._s), self.name)
        self._positions = {(r["topic"], r["partition"]): r["next_offset"] for r in rows}
        return dict(self._positions)

    async def apply(self, batch: Sequence[Applied]) -> int:
        if not batch:
            return 0
        nexts: dict[TopicPartitionKey, int] = {}
        applied_count = 0
        async with self.pool.acquire() as conn, conn.transaction():
            # Positions are read inside the transaction, not trusted from memory: after
            # a rebuild swaps the store, or a concurrent writer, the store is the truth.
            rows = await conn.fetch(POSITIONS_SQL.format(schema=self._s) + " FOR UPDATE", self.name)
            stored = {(r["topic"], r["partition"]): r["next_offset"] for r in rows}
            check_no_gap(stored, batch)
            for applied in batch:
                key = (applied.topic, applied.partition)
                if applied.offset < max(stored.get(key, 0), nexts.get(key, 0)):
                    continue  # already applied (a replay, or a broker re-send)
                handler = self._handler_for(type(applied.event))
                if handler is not None:
                    await handler(conn, applied.event, applied)
                applied_count += 1
                nexts[key] = applied.offset + 1
            if nexts:
                await conn.executemany(
                    RECORD_POSITION_SQL.format(schema=self._s),
                    [(self.name, t, p, o) for (t, p), o in nexts.items()],
                )
        self._positions.update(nexts)
        return applied_count

    async def skip(self, topic: str, partition: int, offset: int) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            stored = await conn.fetchval(
                f"SELECT next_offset FROM {self._s}.projection_offsets "
                "WHERE projection = $1 AND topic = $2 AND partition = $3 FOR UPDATE",
                self.name,
                topic,
                partition,
            )
            if not is_next(stored, topic, partition, offset):
                return
            await conn.execute(
                RECORD_POSITION_SQL.format(schema=self._s), self.name, topic, partition, offset + 1
            )
        self._positions[(topic, partition)] = offset + 1

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one entry per event type, lives with the class
    def _handler_for(self, event_type: type[Event]) -> Any:
        for klass in event_type.__mro__:
            attr = self._handlers.get(klass)
            if attr is not None:
                return getattr(self, attr)
        return None

    # -- rebuild: build a shadow schema, then swap it in by renames --------------------

    async def make_shadow(self) -> PgProjection:
        """An empty copy of this projection in ``<schema>__shadow`` (any old one dropped)."""
        clone = copy.copy(self)
        clone.schema = f"{self.schema}__shadow"
        clone.pool = None
        clone._positions = {}
        await clone.reset()
        return clone

    async def reset(self) -> None:
        """Drop this projection's schema (used on a shadow before a rebuild)."""
        import asyncpg

        conn = await asyncpg.connect(self.dsn)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {self._s} CASCADE")
        finally:
            await conn.close()

    async def swap_in(self, shadow: PgProjection) -> None:
        """Make ``shadow``'s schema live in one transaction; the old one is dropped.

        Readers block on the renames for a moment instead of failing: PostgreSQL takes
        the locks, and statements planned against the old schema are re-planned.
        """
        import asyncpg

        live, old = self.schema, f"{self.schema}__old"
        conn = await asyncpg.connect(self.dsn)
        try:
            async with conn.transaction():
                await conn.execute(f'DROP SCHEMA IF EXISTS "{old}" CASCADE')
                await conn.execute(f'ALTER SCHEMA "{live}" RENAME TO "{old}"')
                await conn.execute(f'ALTER SCHEMA "{shadow.schema}" RENAME TO "{live}"')
                await conn.execute(f'DROP SCHEMA "{old}" CASCADE')
        finally:
            await conn.close()

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
            self.pool = None
