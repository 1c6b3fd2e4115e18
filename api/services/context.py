"""What every service function needs: the stores, the query embedder, the caller's tenant."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from projections.index.port import SearchIndex
from streams.embedder.model import Embedder
from streams.settings import TribalSettings

log = logging.getLogger(__name__)


class QueryEmbedder:
    """Embeds queries off the event loop, with an LRU cache of recent query vectors.

    Loading the model takes seconds, so :meth:`preload` starts it in the background
    when the API starts; until it is ready :attr:`ready` is False and callers that
    cannot wait (``/v1/retrieve``) degrade instead of blocking.
    """

    def __init__(self, embedder: Embedder, cache_size: int = 4096) -> None:
        self.embedder = embedder
        self.cache_size = cache_size
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._loading: asyncio.Task[None] | None = None
        self.ready = False
        self.hits = 0
        self.misses = 0

    def preload(self) -> asyncio.Task[None]:
        """Load the model in a thread (idempotent); the task finishes when it is ready."""
        if self._loading is None:
            self._loading = asyncio.create_task(self._load())
        return self._loading

    async def _load(self) -> None:
        try:
            await asyncio.to_thread(self.embedder.encode, ["warm-up"])
            self.ready = True
        except Exception as exc:  # the API serves lexical search without the model
            log.warning("query embedder unavailable: %s", exc)

    def cached(self, text: str) -> tuple[float, ...] | None:
        vector = self._cache.get(text)
        if vector is not None:
            self._cache.move_to_end(text)
            self.hits += 1
        return vector

    async def embed(self, text: str) -> tuple[float, ...]:
        """The query's vector: from the cache, else computed in a worker thread."""
        vector = self.cached(text)
        if vector is not None:
            return vector
        self.misses += 1
        vectors = await asyncio.to_thread(self.embedder.encode, [text])
        vector = tuple(vectors[0])
        self.ready = True
        self._cache[text] = vector
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return vector


@dataclass
class ServiceContext:
    """The read stores of one process. ``db`` is an asyncpg pool over the catalog and graph."""

    settings: TribalSettings
    db: Any = None
    index: SearchIndex | None = None
    embedder: QueryEmbedder | None = None
    ingestor: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    async def vector(self, text: str) -> Sequence[float] | None:
        """The query vector, or None when no embedder is configured."""
        return None if self.embedder is None else await self.embedder.embed(text)


def require_db(ctx: ServiceContext) -> Any:
    from api.services.errors import ServiceError

    if ctx.db is None:
        raise ServiceError(503, "STORE_UNAVAILABLE", "no PostgreSQL is configured", True)
    return ctx.db


async def open_context(settings: TribalSettings, *, load_model: bool = True) -> ServiceContext:
    """Connect to what the settings name; anything unavailable stays None (degraded)."""
    import asyncpg

    from projections.index import index_from_settings
    from streams.embedder.model import SentenceTransformerEmbedder

    ctx = ServiceContext(settings)
    if settings.postgres_dsn:
        try:
            ctx.db = await asyncpg.create_pool(settings.postgres_dsn, min_size=1, max_size=10)
        except (OSError, asyncpg.PostgresError) as exc:
            log.warning("catalog/graph store unavailable: %s", exc)
    if settings.postgres_dsn or settings.weaviate_url:
        index = index_from_settings(settings)
        try:
            await index.setup()
            ctx.index = index
        except Exception as exc:  # search degrades; /v1/retrieve answers its fallback
            log.warning("search index unavailable: %s", exc)
    if load_model:
        ctx.embedder = QueryEmbedder(SentenceTransformerEmbedder(settings.embedding_model))
        ctx.embedder.preload()
    return ctx


async def close_context(ctx: ServiceContext) -> None:
    if ctx.index is not None:
        await ctx.index.close()
    if ctx.db is not None:
        await ctx.db.close()
