"""Build the embedder agent's processor from settings (cache connected on first use)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from events.base import Event
from runtime.settings import TribalSettings
from streams.embedder.cache import EmbeddingCache, MemoryEmbeddingCache, PostgresEmbeddingCache
from streams.embedder.embed import DocumentEmbedder
from streams.embedder.select import embedder_for
from streams.warm import WARM_TEXT
from streams.wiring import Emit


class EmbedderProcessor:
    """The ``embedder`` agent: PostgreSQL-backed cache when a DSN is configured.

    :attr:`bulk` is the bulk lane's processor: the same model and cache, with model calls
    that let this one's go first."""

    def __init__(self, settings: TribalSettings) -> None:
        self.settings = settings
        self.model = embedder_for(settings.embedding_model, settings.embedding_backend)
        self._inner: DocumentEmbedder | None = None
        self._background: DocumentEmbedder | None = None
        self._lock = asyncio.Lock()

    async def _embedder(self, background: bool = False) -> DocumentEmbedder:
        async with self._lock:
            if self._inner is None:
                cache: EmbeddingCache = MemoryEmbeddingCache()
                if self.settings.postgres_dsn:
                    cache = await PostgresEmbeddingCache.connect(self.settings.postgres_dsn)
                self._inner = DocumentEmbedder(self.model, cache)
                self._background = DocumentEmbedder(self.model, cache, background=True)
        assert self._background is not None
        return self._background if background else self._inner

    def warm(self) -> None:
        """Load the model before the first record (:mod:`streams.warm`)."""
        self.model.encode([WARM_TEXT])

    async def __call__(self, events: Sequence[Event]) -> list[Emit]:
        return await (await self._embedder())(events)

    async def bulk(self, events: Sequence[Event]) -> list[Emit]:
        """Vectors for the bulk lane (``chunks.bulk``)."""
        return await (await self._embedder(background=True))(events)
