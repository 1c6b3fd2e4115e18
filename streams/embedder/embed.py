"""Chunked documents and table documentation → ``ChunksEmbedded``, one model call per
batch of misses."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from events.base import Event
from events.chunks import ChunksEmbedded, ChunkVector, DocumentChunked
from events.documents import TableDocumented, table_document_id, table_search_text
from streams.embedder.cache import EmbeddingCache, text_key
from streams.embedder.model import Embedder, background_executor, encode_background
from streams.embedder.views import embedding_texts
from streams.wiring import Emit


@dataclass
class EmbedStats:
    """What the last calls cost: texts looked up, cache hits, model calls."""

    texts: int = 0
    hits: int = 0
    model_calls: int = 0


@dataclass(frozen=True)
class _Doc:
    """One document version to embed: its chunks as ``(chunk id, text)``."""

    tenant: str
    document_id: str
    document_version: str
    chunks: tuple[tuple[str, str], ...]


def _documents(events: Sequence[Event]) -> list[_Doc]:
    """Chunked documents, and each documented table as a one-chunk document."""
    out = []
    for e in events:
        if isinstance(e, DocumentChunked):
            texts = embedding_texts(e.chunks, e.path)
            chunks = tuple((c.chunk_id, t) for c, t in zip(e.chunks, texts, strict=True))
            out.append(_Doc(e.tenant, e.document_id, e.document_version, chunks))
        elif isinstance(e, TableDocumented):
            doc = table_document_id(e.fully_qualified_name)
            text = table_search_text(e)
            out.append(_Doc(e.tenant, doc, e.metadata_hash, ((doc, text),)))
    return out


class DocumentEmbedder:
    """The embedder agent's processor: batches of chunk events in, vectors out.

    ``background``: the bulk lane's embedder, whose model calls let live ones go first."""

    def __init__(self, model: Embedder, cache: EmbeddingCache, background: bool = False) -> None:
        self.model = model
        self.cache = cache
        self.background = background
        self.stats = EmbedStats()

    async def __call__(self, events: Sequence[Event]) -> list[Emit]:
        # Retractions and domain documents need no vectors: the index projection reads
        # them from their own topics.
        docs = _documents(events)
        if not docs:
            return []
        keys = {cid: text_key(text) for d in docs for cid, text in d.chunks}
        texts = {keys[cid]: text for d in docs for cid, text in d.chunks}
        cached = await self.cache.get_many(self.model.name, texts)
        missing = [k for k in texts if k not in cached]
        self.stats.texts += len(texts)
        self.stats.hits += len(cached)
        if missing:
            self.stats.model_calls += 1
            batch = [texts[k] for k in missing]
            if self.background:
                vectors = await asyncio.get_running_loop().run_in_executor(
                    background_executor(), encode_background, self.model, batch
                )
            else:
                vectors = await asyncio.to_thread(self.model.encode, batch)
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
                        ChunkVector(chunk_id=cid, vector=cached[keys[cid]]) for cid, _ in doc.chunks
                    ),
                ),
            )
            for doc in docs
        ]
