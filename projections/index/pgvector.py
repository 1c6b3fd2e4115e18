"""The search index on PostgreSQL + pgvector (the embedded default).

A generation is a schema (default ``tribal_index``) holding ``objects`` (text,
metadata, a generated English ``tsvector`` with a GIN index, and the vector with one
partial HNSW ``vector_cosine_ops`` index per kind), ``projection_offsets`` and
``generation`` (model, dims). Rows are keyed by ``(tenant, chunk_id)``; a row with no
``kind`` is a vector whose chunk has not arrived (pending, never searched).

Rebuild: :meth:`begin_generation` creates ``<schema>__next`` without its search
indexes (bulk loads are several times faster); :meth:`finish_generation` builds them,
renames ``<schema>`` away and ``<schema>__next`` into its place and drops the old one
in one transaction, so a search sees either generation, never a mix. Offsets live in
the generation's schema, so they swap with it.

"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from projections.index import pgvector_sql as sql
from projections.index.port import (
    Filters,
    Hit,
    IndexedObject,
    Kind,
    MissingTenantError,
    Positions,
    Query,
    SearchIndex,
)
from projections.index.scoring import (
    PG_TS_RANK_HALF,
    fuse,
    lexical_score,
    vector_score_from_distance,
)
from projections.pg import OFFSETS_DDL, POSITIONS_SQL, RECORD_POSITION_SQL
from projections.rows import quoted

DEFAULT_SCHEMA = "tribal_index"
SHADOW_SUFFIX = "__next"
_OR_QUERY = "(SELECT replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery AS q) t"
"""Any query word matches (BM25-like), not all of them as ``plainto_tsquery`` would."""


@dataclass(eq=False, repr=False)
class PgVectorIndex(SearchIndex):
    """:class:`~projections.index.port.SearchIndex` on PostgreSQL with pgvector."""

    dsn: str
    schema: str = DEFAULT_SCHEMA
    model: str | None = None
    dims: int = 384
    defer_indexes: bool = False
    """Leave the search indexes to :meth:`build_indexes`: a shadow generation's bulk
    load is several times faster without them."""
    pool: Any = field(default=None, init=False)
    _tx: ContextVar[Any] = field(init=False)
    """The connection of the transaction this task is in (:meth:`transaction`), if any."""

    def __post_init__(self) -> None:
        self._tx = ContextVar(f"pgvector-tx-{id(self)}", default=None)

    @property
    def _s(self) -> str:
        return quoted(self.schema)

    async def _init_connection(self, conn: Any) -> None:
        await conn.set_type_codec(
            "vector",
            schema="public",
            encoder=sql.encode_vector,
            decoder=sql.decode_vector,
            format="binary",
        )

    async def setup(self) -> None:
        import asyncpg

        if self.pool is None:
            conn = await asyncpg.connect(self.dsn)
            try:
                await conn.execute("SELECT pg_advisory_lock(hashtext('tribal-setup'))")
                await conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
                await conn.execute("SELECT pg_advisory_unlock(hashtext('tribal-setup'))")
            finally:
                await conn.close()
            self.pool = await asyncpg.create_pool(
                self.dsn,
                min_size=1,
                max_size=8,
                init=self._init_connection,
                # Filtered vector searches keep scanning the graph until `limit` rows match.
                server_settings={"hnsw.iterative_scan": "strict_order", "hnsw.ef_search": "100"},
            )
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext('tribal-setup'))")
            await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self._s}")
            await conn.execute(OFFSETS_DDL.format(schema=self._s))
            for statement in sql.ddl(self.schema, self.dims):
                await conn.execute(statement)
            if not self.defer_indexes:
                for statement in sql.search_index_ddl(self.schema):
                    await conn.execute(statement)
            await conn.execute(
                f"INSERT INTO {self._s}.generation (model, dims) VALUES ($1, $2) "
                "ON CONFLICT DO NOTHING",
                self.model,
                self.dims,
            )
            row = await conn.fetchrow(f"SELECT model, dims FROM {self._s}.generation")
        self.model, self.dims = row["model"], row["dims"]

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        async with self.pool.acquire() as conn, conn.transaction():
            token = self._tx.set(conn)
            try:
                yield
            finally:
                self._tx.reset(token)

    @contextlib.asynccontextmanager
    async def _conn(self) -> AsyncIterator[Any]:
        conn = self._tx.get()
        if conn is not None:
            yield conn
        else:
            async with self.pool.acquire() as fresh:
                yield fresh

    async def positions(self, projection: str) -> Positions:
        async with self._conn() as conn:
            rows = await conn.fetch(POSITIONS_SQL.format(schema=self._s), projection)
        return {(r["topic"], r["partition"]): r["next_offset"] for r in rows}

    async def record_positions(self, projection: str, positions: Positions) -> None:
        async with self._conn() as conn:
            await conn.executemany(
                RECORD_POSITION_SQL.format(schema=self._s),
                [(projection, t, p, o) for (t, p), o in positions.items()],
            )

    def _accepts(self, vector: Sequence[float] | None, model: str | None) -> bool:
        if vector is None or len(vector) != self.dims:
            return False
        return self.model is None or model == self.model

    async def _adopt(self, conn: Any, model: str) -> None:
        if self.model is None:
            await conn.execute(
                f"UPDATE {self._s}.generation SET model = $1 WHERE model IS NULL", model
            )
            self.model = await conn.fetchval(f"SELECT model FROM {self._s}.generation")

    async def upsert_chunks(self, objects: Sequence[IndexedObject]) -> int:
        if not objects:
            return 0
        names = (*sql.COLUMNS, "embedding", "model")
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in sql.COLUMNS[1:] if c != "tenant")
        statement = (
            f"INSERT INTO {self._s}.objects AS o ({', '.join(names)}) VALUES "
            f"({', '.join(f'${i}' for i in range(1, len(names) + 1))}) "
            f"ON CONFLICT (tenant, chunk_id) DO UPDATE SET {updates}, "
            "embedding = COALESCE(EXCLUDED.embedding, o.embedding), "
            "model = COALESCE(EXCLUDED.model, o.model)"
        )
        async with self._conn() as conn:
            for o in objects:
                if o.vector is not None and o.model is not None:
                    await self._adopt(conn, o.model)
            rows = []
            for o in objects:
                ok = self._accepts(o.vector, o.model)
                extra = (o.vector, o.model) if ok else (None, None)
                rows.append((*sql.object_args(o), *extra))
            await conn.executemany(statement, rows)
        return len(objects)

    async def upsert_vectors(
        self, tenant: str, document_id: str, vectors: Mapping[str, Sequence[float]], model: str
    ) -> int:
        async with self._conn() as conn:
            await self._adopt(conn, model)
            rows = [
                (tenant, cid, document_id, vec, model)
                for cid, vec in vectors.items()
                if self._accepts(vec, model)
            ]
            await conn.executemany(
                f"INSERT INTO {self._s}.objects AS o "
                "(tenant, chunk_id, document_id, embedding, model) VALUES ($1, $2, $3, $4, $5) "
                "ON CONFLICT (tenant, chunk_id) DO UPDATE "
                "SET embedding = EXCLUDED.embedding, model = EXCLUDED.model",
                rows,
            )
        return len(rows)

    async def _delete(self, condition: str, *args: Any) -> int:
        async with self._conn() as conn:
            status = await conn.execute(f"DELETE FROM {self._s}.objects WHERE {condition}", *args)
        return int(status.rsplit(" ", 1)[-1])

    async def retract_document(self, tenant: str, document_id: str) -> int:
        return await self._delete("tenant = $1 AND document_id = $2", tenant, document_id)

    async def delete_stale_chunks(self, tenant: str, document_id: str, keep: Sequence[str]) -> int:
        return await self._delete(
            "tenant = $1 AND document_id = $2 AND kind IS NOT NULL "
            "AND NOT (chunk_id = ANY($3::text[]))",
            tenant,
            document_id,
            list(keep),
        )

    async def forget_memory(self, tenant: str, group_id: str | None) -> int:
        return await self._delete(
            "tenant = $1 AND kind IN ('Episode', 'Summary') "
            "AND ($2::text IS NULL OR group_id = $2)",
            tenant,
            group_id,
        )

    async def find(self, query: Query) -> list[Hit]:
        if query.vector is not None and len(query.vector) != self.dims:
            query = replace(query, vector=None)  # another model's vector: lexical only
        vec, text, depth = query.vector, query.text, query.depth
        objects: dict[str, IndexedObject] = {}
        vector_side: list[tuple[str, float]] = []
        lexical_side: list[tuple[str, float]] = []
        vector_of: dict[str, float | None] = {}
        async with self.pool.acquire() as conn:
            if vec is not None:
                cond, args = sql.where(query.kind, query.tenant, query.filters, first_param=2)
                rows = await conn.fetch(
                    f"SELECT {sql.SELECT_COLUMNS}, o.embedding <=> $1 AS distance "
                    f"FROM {self._s}.objects o WHERE {cond} AND o.embedding IS NOT NULL "
                    f"ORDER BY o.embedding <=> $1 LIMIT {int(depth)}",
                    vec,
                    *args,
                )
                for r in rows:
                    objects[r["chunk_id"]] = sql.row_object(r)
                    vector_side.append((r["chunk_id"], vector_score_from_distance(r["distance"])))
            if text:
                first = 3 if vec is not None else 2
                cond, args = sql.where(query.kind, query.tenant, query.filters, first_param=first)
                distance = "o.embedding <=> $2" if vec is not None else "NULL::float8"
                rows = await conn.fetch(
                    f"SELECT {sql.SELECT_COLUMNS}, ts_rank_cd(o.tsv, t.q) AS raw, "
                    f"{distance} AS distance FROM {self._s}.objects o, {_OR_QUERY} "
                    f"WHERE {cond} AND o.tsv @@ t.q "
                    f"ORDER BY raw DESC, o.chunk_id LIMIT {int(depth)}",  # ties: stable
                    text,
                    *([vec] if vec is not None else []),
                    *args,
                )
                for r in rows:
                    objects[r["chunk_id"]] = sql.row_object(r)
                    lexical_side.append((r["chunk_id"], lexical_score(r["raw"], PG_TS_RANK_HALF)))
                    d = r["distance"]
                    vector_of[r["chunk_id"]] = None if d is None else vector_score_from_distance(d)
        fused = fuse(vector_side, lexical_side, query.limit, vector_of)
        return [Hit(objects[f.key], f.score, f.vector, f.lexical) for f in fused]

    async def count(
        self, kind: Kind, tenant: str | None = None, filters: Filters | None = None
    ) -> int:
        if kind.is_memory and tenant is None:
            raise MissingTenantError(f"counting {kind.value} needs a tenant")
        cond, args = sql.where(kind, tenant, filters, first_param=1)
        async with self._conn() as conn:
            n = await conn.fetchval(f"SELECT count(*) FROM {self._s}.objects o WHERE {cond}", *args)
        return int(n)

    async def recent(
        self, kind: Kind, tenant: str, filters: Filters | None, limit: int
    ) -> list[IndexedObject]:
        cond, args = sql.where(kind, tenant, filters, first_param=1)
        async with self._conn() as conn:
            rows = await conn.fetch(
                f"SELECT {sql.SELECT_COLUMNS}, o.embedding FROM {self._s}.objects o "
                f"WHERE {cond} ORDER BY o.updated_at DESC NULLS LAST, o.chunk_id "
                f"LIMIT {int(limit)}",
                *args,
            )
        return [
            replace(sql.row_object(r), vector=None if r["embedding"] is None else
                    tuple(r["embedding"]))
            for r in rows
        ]  # fmt: skip

    async def begin_generation(self, model: str | None = None) -> PgVectorIndex:
        shadow = PgVectorIndex(
            self.dsn, self.schema + SHADOW_SUFFIX, model or self.model, self.dims, True
        )
        await shadow.setup()
        await shadow.drop()  # a shadow left by an interrupted rebuild starts over
        await shadow.setup()
        return shadow

    async def build_indexes(self) -> None:
        """Build the HNSW and GIN indexes (a bulk build is far faster than per row)."""
        async with self.pool.acquire() as conn:
            await conn.execute("SET maintenance_work_mem = '512MB'")
            await conn.execute("SET max_parallel_maintenance_workers = 4")
            for statement in sql.search_index_ddl(self.schema):
                await conn.execute(statement)
            await conn.execute(f"ANALYZE {self._s}.objects")
            await conn.execute("RESET maintenance_work_mem")
            await conn.execute("RESET max_parallel_maintenance_workers")
        self.defer_indexes = False

    async def finish_generation(self, shadow: Any) -> None:
        assert isinstance(shadow, PgVectorIndex)
        await shadow.build_indexes()  # before the swap: searches never see a slow scan
        retired = self.schema + "__retired"
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(f'DROP SCHEMA IF EXISTS "{retired}" CASCADE')
            await conn.execute(f'ALTER SCHEMA {self._s} RENAME TO "{retired}"')
            await conn.execute(f'ALTER SCHEMA "{shadow.schema}" RENAME TO {self._s}')
            await conn.execute(f'DROP SCHEMA "{retired}" CASCADE')
        self.model, self.dims = shadow.model, shadow.dims
        await shadow.close()

    async def drop(self) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute(f"DROP SCHEMA IF EXISTS {self._s} CASCADE")

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
            self.pool = None
