"""Chunks and their vectors: ``tribal.chunks`` and ``tribal.embeddings`` (key: document id).

The chunk format follows seed 004's semantic chunk (``chunkType`` is ``kind``,
``symbolName`` is ``symbol``).
"""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import Field, model_validator

from events.base import TenantEvent, Value
from events.types import Vector


class Chunk(Value):
    """One semantic chunk of a document."""

    chunk_id: str = Field(description="Stable id: document id, version and index.")
    index: int = Field(ge=0)
    text: str
    start_line: int | None = None
    end_line: int | None = None
    symbol: str | None = None
    kind: str = Field(default="text", description="class, function, method, section, text...")
    metadata: dict[str, str] = Field(default_factory=dict)
    parent_symbol: str | None = Field(
        default=None, description="The enclosing symbol (class, namespace, header), if any."
    )
    fully_qualified_name: str | None = Field(
        default=None, description="e.g. 'streams.wiring.Handler.handle' or a header path."
    )
    language: str | None = Field(default=None, description="e.g. 'python', 'markdown'.")


class DocumentChunked(TenantEvent):
    """All chunks of one version of a document; replaces any previous version's chunks."""

    avro_name: ClassVar[str] = "tribal.chunks.DocumentChunked"

    document_id: str
    document_version: str = Field(description="sha256 of the content that was chunked.")
    source_type: str = Field(description="'file', 'kb', 'table' or 'domain'.")
    title: str | None = None
    url: str | None = None
    path: str | None = None
    language: str | None = None
    chunked_by: str = Field(description="The ingester that produced the chunks.")
    chunks: tuple[Chunk, ...]
    metadata: dict[str, str] = Field(default_factory=dict)


class DocumentRetracted(TenantEvent):
    """A document is gone: its chunks and vectors must disappear."""

    avro_name: ClassVar[str] = "tribal.chunks.DocumentRetracted"

    document_id: str
    reason: str | None = None


class ChunkVector(Value):
    """The embedding of one chunk."""

    chunk_id: str
    vector: Vector


class ChunksEmbedded(TenantEvent):
    """Vectors for the chunks of one document version."""

    avro_name: ClassVar[str] = "tribal.embeddings.ChunksEmbedded"

    document_id: str
    document_version: str
    model: str
    dims: int = Field(gt=0)
    vectors: tuple[ChunkVector, ...]

    @model_validator(mode="after")
    def _dims_match(self) -> Self:
        for item in self.vectors:
            if len(item.vector) != self.dims:
                raise ValueError(
                    f"vector of chunk {item.chunk_id!r} has {len(item.vector)} dims, "
                    f"expected {self.dims}"
                )
        return self
