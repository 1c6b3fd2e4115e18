"""Chunked documents → ``ChunksEmbedded``, one model call per batch of misses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from events.base import Event
from events.chunks import ChunksEmbedded, ChunkVector, DocumentChunked
from streams.embedder.cache import EmbeddingCache, text_key
from streams.embedder.model import Embedder
from streams.wiring import Emit


@dataclass
class EmbedStats:
    """What the last calls cost: texts looked up, cache hits, model calls."""

    texts: int = 0
    hits: int = 0
    model_calls: int = 0


class DocumentEmbedder:
    """The embedder agent's processor: batches of chunk events in, vectors out."""

    def __init__(self, model: Embedder, cache: EmbeddingCache) -> None:
        self.model = model
        self.cache = cache
        self.stats = EmbedStats()

    async def __call__(self, events: Sequence[Event]) -> list[Emit]:
        docs = [e for e in events if isinstance(e, DocumentChunked)]
        # Retractions need no vectors: the index projection reads them from the
        # chunks topic itself.
        if not docs:
            return []
        keys = {c.chunk_id: text_key(c.text) for d in docs for c in d.chunks}
        texts = {keys[c.chunk_id]: c.text for d in docs for c in d.chunks}
        cached = await self.cache.get_many(self.model.name, texts)
        missing = [k for k in texts if k not in cached]
        self.stats.texts += len(texts)
        self.stats.hits += len(cached)
        if missing:
            self.stats.model_calls += 1
            vectors = await asyncio.to_thread(self.model.encode, [texts[k] for k in missing])
            fresh = dict(zip(missing, vectors, strict=True))
            await self.cache.put_many(self.model.name, fresh)
            cached.update(fresh)
        dims = self.model.dims
        return [
            Emit(
                "embeddings",
                doc.document_id,
                ChunksEmbedded(
                    tenant=doc.tenant,
                    document_id=doc.document_id,
                    document_version=doc.document_version,
                    model=self.model.name,
                    dims=dims,
                    vectors=tuple(
                        ChunkVector(chunk_id=c.chunk_id, vector=cached[keys[c.chunk_id]])
                        for c in doc.chunks
                    ),
                ),
            )
            for doc in docs
        ]
