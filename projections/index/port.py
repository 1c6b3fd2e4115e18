"""The search index port: what the index projection writes and the API reads.

Two adapters implement it with one contract test suite
(``tests/projections/test_index_contract.py``): :mod:`projections.index.pgvector`
(embedded default) and :mod:`projections.index.weaviate` (distributed default).

Objects are keyed by ``(tenant, chunk_id)``; their store id is
:func:`projections.index.scoring.object_uuid` of that pair, so applying an event
twice writes the same object twice and changes nothing.

Text and vectors arrive independently (``tribal.chunks`` and ``tribal.embeddings``
are consumed as separate partitions). A vector whose chunk is not there yet is kept
*pending*, invisible to searches, and joins the chunk when it arrives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from projections.index.scoring import CANDIDATES_PER_SIDE
from streams.failures import BadRecordError


class Kind(StrEnum):
    """A collection of the index. Memory kinds are isolated per tenant."""

    TABLE_DOC = "TableDoc"
    CODE_CHUNK = "CodeChunk"
    KB_CHUNK = "KbChunk"
    EPISODE = "Episode"
    SUMMARY = "Summary"

    @property
    def is_memory(self) -> bool:
        return self in (Kind.EPISODE, Kind.SUMMARY)


CHUNK_KINDS = (Kind.TABLE_DOC, Kind.CODE_CHUNK, Kind.KB_CHUNK)
"""Kinds whose vectors arrive on ``tribal.embeddings`` (``ChunksEmbedded``)."""
MEMORY_KINDS = (Kind.EPISODE, Kind.SUMMARY)


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    BM25 = "bm25"
    VECTOR = "vector"


class SearchIndexError(Exception):
    """Base of the index's own errors."""


class MissingTenantError(SearchIndexError, ValueError):
    """A memory kind was queried or written without a tenant scope."""


class InvalidVectorError(SearchIndexError, BadRecordError):
    """A vector the generation cannot hold (another length than its model's)."""

    code = "INVALID_VECTOR"


class IndexWriteError(SearchIndexError, RuntimeError):
    """The store rejected some objects; the batch must be retried."""


@dataclass(frozen=True)
class IndexedObject:
    """One searchable object: a chunk, a table's documentation, an episode, a summary."""

    chunk_id: str
    kind: Kind
    document_id: str
    text: str
    tenant: str = "default"
    document_version: str = ""
    title: str | None = None
    url: str | None = None
    path: str | None = None
    repo: str | None = None
    language: str | None = None
    symbol: str | None = None
    symbol_kind: str | None = None
    parent_symbol: str | None = None
    fully_qualified_name: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    database: str | None = None
    domain: str | None = None
    intent: tuple[str, ...] = ()
    device: tuple[str, ...] = ()
    group_id: str | None = None
    updated_at: datetime | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    vector: tuple[float, ...] | None = None
    """Only for objects whose event carries its own embedding (episodes)."""
    model: str | None = None


@dataclass(frozen=True)
class Filters:
    """Conjunctive filters; ``None`` means "any". ``path_glob``: ``*`` any run, ``?`` one."""

    document_id: str | None = None
    database: str | None = None
    domain: str | None = None
    repo: str | None = None
    path_glob: str | None = None
    language: str | None = None
    symbol_kind: str | None = None
    intent: str | None = None
    device: str | None = None
    group_id: str | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None


@dataclass(frozen=True)
class Hit:
    """A search result. ``score`` is in [0, 1] with one meaning on every adapter."""

    object: IndexedObject
    score: float
    vector_score: float | None = None
    lexical_score: float | None = None


@dataclass(frozen=True)
class Query:
    """One search as an adapter runs it (:meth:`SearchIndex.find`).

    It holds only the inputs its mode uses (no vector for ``bm25``, no text for
    ``vector``), and a tenant wherever its kind needs one.
    """

    kind: Kind
    text: str | None
    vector: list[float] | None
    filters: Filters | None
    limit: int
    tenant: str | None

    @property
    def depth(self) -> int:
        """Candidates to take from each side: more when two lists are fused into one."""
        fused = self.vector is not None and bool(self.text)
        return self.limit * CANDIDATES_PER_SIDE if fused else self.limit


Positions = dict[tuple[str, int], int]


class SearchIndex(Protocol):
    """A search index generation: writes, searches, offsets, and its own replacement.

    The adapters subclass it and inherit :meth:`search`, which checks what every
    adapter would check and leaves them :meth:`find`.
    """

    model: str | None
    """The embedding model this generation holds vectors of (``None``: the first seen)."""

    async def setup(self) -> None:
        """Create collections/tables and indexes if missing; idempotent."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[None]:
        """Group the writes of one batch and its :meth:`record_positions`.

        PostgreSQL: one database transaction. Weaviate: no transaction exists, so the
        projection records positions last; replays rewrite identical objects
        (exactly-once *effect*).
        """
        ...

    async def positions(self, projection: str) -> Positions:
        """Next offset per (full topic, partition) recorded by ``projection``."""
        ...

    async def record_positions(self, projection: str, positions: Positions) -> None:
        """Store next offsets; inside :meth:`transaction`, after the batch's data."""
        ...

    async def upsert_chunks(self, objects: Sequence[IndexedObject]) -> int:
        """Insert or replace objects' text and metadata, keeping any vector they have.

        A pending vector for the same ``(tenant, chunk_id)`` joins the object.
        Returns how many objects were written.
        """
        ...

    async def upsert_vectors(
        self, tenant: str, document_id: str, vectors: Mapping[str, Sequence[float]], model: str
    ) -> int:
        """Set the vectors of chunks (chunk id → vector) embedded by ``model``.

        Chunks not indexed yet keep their vector pending. Vectors of a model other
        than :attr:`model` are ignored (a new model needs a new generation) and 0 is
        returned; otherwise how many vectors were stored.
        """
        ...

    async def retract_document(self, tenant: str, document_id: str) -> int:
        """Delete every object and pending vector of a document; returns objects deleted."""
        ...

    async def delete_stale_chunks(self, tenant: str, document_id: str, keep: Sequence[str]) -> int:
        """Delete the document's objects whose chunk id is not in ``keep`` (older versions).

        Pending vectors are kept: they may belong to a newer version whose chunks are
        still on their way.
        """
        ...

    async def forget_memory(self, tenant: str, group_id: str | None) -> int:
        """Delete the memory objects of one group, or of the whole tenant (``None``)."""
        ...

    async def search(
        self,
        query_text: str | None,
        query_vector: Sequence[float] | None,
        kind: Kind,
        filters: Filters | None = None,
        limit: int = 10,
        tenant: str | None = None,
        mode: SearchMode = SearchMode.HYBRID,
    ) -> list[Hit]:
        """The best ``limit`` objects of ``kind``, best first, scored per :mod:`scoring`.

        Memory kinds require ``tenant`` (:class:`MissingTenantError` otherwise) and
        never return another tenant's objects. A mode whose input is missing (no
        vector for ``vector``) degrades to the input present.
        """
        if kind.is_memory and tenant is None:
            raise MissingTenantError(f"searching {kind.value} needs a tenant")
        text = query_text if query_text and mode != SearchMode.VECTOR else None
        vector = (
            list(query_vector) if query_vector is not None and mode != SearchMode.BM25 else None
        )
        if vector is None and text is None:
            return []
        return await self.find(Query(kind, text, vector, filters, limit, tenant))

    async def find(self, query: Query) -> list[Hit]:
        """The adapter's side of :meth:`search`, which checked and trimmed ``query``."""
        ...

    async def count(
        self, kind: Kind, tenant: str | None = None, filters: Filters | None = None
    ) -> int:
        """How many searchable objects of ``kind`` match (pending vectors excluded)."""
        ...

    async def recent(
        self, kind: Kind, tenant: str, filters: Filters | None, limit: int
    ) -> list[IndexedObject]:
        """The latest ``limit`` objects of a memory ``kind`` matching ``filters``, newest
        ``updated_at`` first, each with its vector: a conversation read whole, for a
        ranking that needs its neighbours and sessions (:mod:`api.services.recall`)."""
        ...

    async def begin_generation(self, model: str | None = None) -> SearchIndex:
        """An empty shadow generation (set up) to rebuild into while this one serves."""
        ...

    async def finish_generation(self, shadow: SearchIndex) -> None:
        """Atomically make ``shadow`` the generation this index reads and writes; drop
        the old one. ``shadow`` must not be used afterwards (close it)."""
        ...

    async def drop(self) -> None:
        """Delete this generation and everything in it (offsets included)."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
