"""The embedding cache port, keyed by (model, sha256 of the text), and its adapters."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol


def text_key(text: str) -> bytes:
    """The cache key of a text: its sha256."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest()


class EmbeddingCache(Protocol):
    """Vectors already computed, so an unchanged chunk is never embedded again."""

    async def get_many(self, model: str, keys: Iterable[bytes]) -> dict[bytes, list[float]]:
        """The cached vectors among ``keys`` (missing keys are absent)."""
        ...

    async def put_many(self, model: str, items: dict[bytes, list[float]]) -> None:
        """Remember vectors for keys."""
        ...


class MemoryEmbeddingCache:
    """A bounded LRU in this process."""

    def __init__(self, capacity: int = 200_000) -> None:
        self.capacity = capacity
        self._data: OrderedDict[tuple[str, bytes], list[float]] = OrderedDict()

    async def get_many(self, model: str, keys: Iterable[bytes]) -> dict[bytes, list[float]]:
        found: dict[bytes, list[float]] = {}
        for key in keys:
            vec = self._data.get((model, key))
            if vec is not None:
                self._data.move_to_end((model, key))
                found[key] = vec
        return found

    async def put_many(self, model: str, items: dict[bytes, list[float]]) -> None:
        for key, vec in items.items():
            self._data[(model, key)] = vec
            self._data.move_to_end((model, key))
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)


class PostgresEmbeddingCache:
    """A table shared by every worker: ``tribal_embedding_cache(model, text_hash, vector)``."""

    DDL = """
    CREATE TABLE IF NOT EXISTS tribal_embedding_cache (
        model      text   NOT NULL,
        text_hash  bytea  NOT NULL,
        vector     real[] NOT NULL,
        PRIMARY KEY (model, text_hash)
    )"""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @classmethod
    async def connect(cls, dsn: str) -> PostgresEmbeddingCache:
        import asyncpg

        pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
        async with pool.acquire() as conn:
            await conn.execute(cls.DDL)
        return cls(pool)

    async def close(self) -> None:
        await self.pool.close()

    async def get_many(self, model: str, keys: Iterable[bytes]) -> dict[bytes, list[float]]:
        wanted = list(keys)
        if not wanted:
            return {}
        rows = await self.pool.fetch(
            "SELECT text_hash, vector FROM tribal_embedding_cache "
            "WHERE model = $1 AND text_hash = ANY($2::bytea[])",
            model,
            wanted,
        )
        return {bytes(r["text_hash"]): list(r["vector"]) for r in rows}

    async def put_many(self, model: str, items: dict[bytes, list[float]]) -> None:
        if not items:
            return
        await self.pool.executemany(
            "INSERT INTO tribal_embedding_cache (model, text_hash, vector) VALUES ($1, $2, $3) "
            "ON CONFLICT (model, text_hash) DO NOTHING",
            [(model, k, v) for k, v in items.items()],
        )
