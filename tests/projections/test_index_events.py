"""Events and a feed for the search index contract tests (no tests here: helpers only)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from events.base import Event
from events.chunks import Chunk, ChunksEmbedded, ChunkVector, DocumentChunked
from events.documents import TableDocumented
from projections.base import Applied
from projections.index.projection import IndexProjection
from streams.embedder.model import Embedder

MODEL = "sentence-transformers/all-MiniLM-L6-v2"

KB = {
    "apollo": (
        "Apollo Not Hashing Troubleshooting",
        "If your Apollo shows 0 H/s, first check that your pool configuration is correct "
        "and that the miner is connected to the pool.",
        "not_hashing,performance_issue",
        "Apollo,Apollo II",
    ),
    "wifi": (
        "Connecting to WiFi",
        "Open the settings page, choose your wireless network and enter the password "
        "to connect the device to the internet.",
        "connectivity",
        "Apollo III",
    ),
    "refund": (
        "Refund policy",
        "Orders can be returned within 30 days of delivery for a full refund of the "
        "purchase price.",
        "billing",
        "Apollo II",
    ),
}

CODE = {
    "streams/embedder/model.py": (
        "def encode(texts): turn texts into sentence-transformers embedding vectors",
        "function",
    ),
    "streams/chunker/files.py": (
        "class FileChunker: split source files into semantic chunks by symbol",
        "class",
    ),
    "api/http.py": (
        "async def search(request): starlette route answering search queries over HTTP",
        "function",
    ),
}


def version(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def kb_doc(key: str, tenant: str = "default", extra: str = "") -> DocumentChunked:
    title, content, intent, device = KB[key]
    v = version(content + extra)
    meta = {"intent": intent, "device": device, "last_updated": "2024-12-15T10:00:00+00:00"}
    chunks = tuple(
        Chunk(chunk_id=f"kb:{key}@{v[:12]}#{i}", index=i, text=text, kind="section")
        for i, text in enumerate([f"{title}\n\n{content}", *([extra] if extra else [])])
    )
    return DocumentChunked(
        tenant=tenant,
        document_id=f"kb:{key}",
        document_version=v,
        source_type="kb",
        title=title,
        url=f"https://docs.example.com/{key}",
        chunked_by="kb-section-ingester",
        chunks=chunks,
        metadata=meta,
    )


def code_doc(path: str, text: str | None = None, repo: str = "tribal") -> DocumentChunked:
    body, kind = CODE.get(path, ("", "text"))
    body = text if text is not None else body
    v = version(body)
    doc = f"file:{repo}:{path}"
    chunk = Chunk(
        chunk_id=f"{doc}@{v[:12]}#0",
        index=0,
        text=body,
        kind=kind,
        symbol=body.split("(")[0].split()[-1].rstrip(":"),
        language="python",
    )
    return DocumentChunked(
        document_id=doc,
        document_version=v,
        source_type="file",
        title=path,
        path=path,
        language="python",
        chunked_by="python-ingester",
        chunks=(chunk,),
        metadata={"repo": repo},
    )


def embedded(doc: DocumentChunked, embedder: Embedder, model: str = MODEL) -> ChunksEmbedded:
    vectors = embedder.encode([c.text for c in doc.chunks])
    return ChunksEmbedded(
        tenant=doc.tenant,
        document_id=doc.document_id,
        document_version=doc.document_version,
        model=model,
        dims=len(vectors[0]),
        vectors=tuple(
            ChunkVector(chunk_id=c.chunk_id, vector=v)
            for c, v in zip(doc.chunks, vectors, strict=True)
        ),
    )


def table_doc(table: str, description: str, domain: str = "sales") -> TableDocumented:
    return TableDocumented(
        generated_by="template",
        model="local",
        content=f"# {table}\n\n{description}",
        fully_qualified_name=f"shop.public.{table}",
        database="shop",
        schema_name="public",
        table_name=table,
        domain=domain,
        description=description,
        column_descriptions={"id": "primary key", "created_at": "when the row was created"},
        metadata_hash=version(description),
    )


TOPIC_OF = {
    "DocumentChunked": "chunks",
    "DocumentRetracted": "chunks",
    "ChunksEmbedded": "embeddings",
    "TableDocumented": "tables.documented",
    "TableDropped": "schema.changes",
    "EpisodeRecorded": "memory.episodes",
    "SummaryCreated": "memory.summaries",
    "MemoryForgotten": "memory.episodes",
}


@dataclass
class Feed:
    """Hands events to a projection as the runner would, with growing offsets."""

    projection: IndexProjection
    offsets: dict[str, int] = field(default_factory=dict)

    def wrap(self, events: Sequence[Event]) -> list[Applied]:
        batch = []
        for event in events:
            topic = "tribal." + TOPIC_OF[type(event).__name__]
            offset = self.offsets.get(topic, 0)
            self.offsets[topic] = offset + 1
            batch.append(Applied(topic, 0, offset, None, event))
        return batch

    async def __call__(self, *events: Event) -> int:
        return await self.projection.apply(self.wrap(events))


def test_the_index_reads_forgets_in_their_place_among_the_episodes_only() -> None:
    # From memory.turns as well, a forget read late (that topic at its own pace) would
    # erase the episode of a turn written after it.
    assert "memory.episodes" in IndexProjection.topics
    assert "memory.turns" not in IndexProjection.topics
