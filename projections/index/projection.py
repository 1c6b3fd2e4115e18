"""The index projection: chunks, vectors, table docs and memory into a :class:`SearchIndex`.

Generic over the port, so the same projection feeds pgvector and Weaviate. One handler
per event type (``DocumentChunked`` in runs planned by :mod:`.batching`, which also
lets a document's vectors ride with its text when both are in the batch). Positions
are read and recorded inside the index's :meth:`~SearchIndex.transaction`: on
PostgreSQL the data and the offsets commit together; on Weaviate the offsets are
written after the data and a crash in between re-applies a batch whose writes are
idempotent upserts and deletes (exactly-once effect).

Model change: vectors carry their model. A generation holds one model's vectors and
ignores others, so switching models is a rebuild: ``shadow = await
index.begin_generation(model=new)``, run an ``IndexProjection(shadow)`` over the topics
until caught up (the embeddings topic must hold the new model's vectors), then
``await index.finish_generation(shadow)``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from events.base import Event
from events.chunks import ChunksEmbedded, DocumentRetracted
from events.documents import TableDocumented, table_document_id
from events.memory import EpisodeRecorded, MemoryForgotten, SummaryCreated
from events.schema import TableDropped
from projections.base import Applied, check_no_gap, is_next
from projections.index.batching import ChunkedRun, plan
from projections.index.documents import searchable_object
from projections.index.port import Positions, SearchIndex

log = logging.getLogger(__name__)

Handler = Callable[["IndexProjection", Any], Awaitable[None]]
"""``async def on_x(self, event)``, called with events of the types it handles."""
_HANDLERS: dict[type[Event], Handler] = {}


def _handles(*event_types: type[Event]) -> Callable[[Handler], Handler]:
    def mark(fn: Handler) -> Handler:
        for event_type in event_types:
            _HANDLERS[event_type] = fn
        return fn

    return mark


class IndexProjection:
    """Folds index events into one :class:`SearchIndex` generation."""

    topics: tuple[str, ...] = (
        "chunks",
        "embeddings",
        "tables.documented",
        "memory.episodes",
        "memory.summaries",
        "schema.changes",
    )
    """A forget is read from ``memory.episodes``, where the episoder passes it on in its
    place among the group's episodes: read from ``memory.turns`` as well, it could be
    applied after an episode of a turn written after it (another topic, read at its own
    pace), and erase that too."""

    def __init__(self, index: SearchIndex, name: str = "index") -> None:
        self.index = index
        self.name = name

    async def setup(self) -> None:
        await self.index.setup()

    # -- rebuild: a new index generation, swapped in atomically ---------------------

    async def make_shadow(self) -> IndexProjection:
        """A projection over a new, empty index generation."""
        return IndexProjection(await self.index.begin_generation(), name=self.name)

    async def swap_in(self, shadow: IndexProjection) -> None:
        """Make the shadow generation live (alias or schema swap); drop the old one."""
        await self.index.finish_generation(shadow.index)

    async def positions(self) -> Positions:
        return await self.index.positions(self.name)

    async def apply(self, batch: Sequence[Applied]) -> int:
        """Apply what the index has not applied yet; positions commit with the data."""
        async with self.index.transaction():
            # Read inside the batch (not cached): after a generation swap the positions
            # are the new generation's.
            done = await self.index.positions(self.name)
            check_no_gap(done, batch)
            fresh = [a for a in batch if a.offset >= done.get((a.topic, a.partition), 0)]
            if not fresh:
                return 0
            for step in plan([a.event for a in fresh]):
                if isinstance(step, ChunkedRun):
                    await self.on_chunked_run(step)
                    continue
                handler = _handler_for(type(step))
                if handler is not None:
                    await handler(self, step)
            nexts: Positions = {}
            for applied in fresh:
                key = (applied.topic, applied.partition)
                nexts[key] = max(nexts.get(key, 0), applied.offset + 1)
            await self.index.record_positions(self.name, nexts)
        return len(fresh)

    async def skip(self, topic: str, partition: int, offset: int) -> None:
        async with self.index.transaction():
            done = await self.index.positions(self.name)
            if is_next(done.get((topic, partition)), topic, partition, offset):
                await self.index.record_positions(self.name, {(topic, partition): offset + 1})

    async def close(self) -> None:
        await self.index.close()

    async def on_chunked_run(self, run: ChunkedRun) -> None:
        """``DocumentChunked`` events (with the vectors that came in the same batch)."""
        await self.index.upsert_chunks(run.objects)
        # A new version replaces the previous one wholesale (chunk ids embed the version).
        for (tenant, document_id), keep in run.keep.items():
            await self.index.delete_stale_chunks(tenant, document_id, keep)

    @_handles(DocumentRetracted)
    async def on_document_retracted(self, event: DocumentRetracted) -> None:
        await self.index.retract_document(event.tenant, event.document_id)

    @_handles(ChunksEmbedded)
    async def on_chunks_embedded(self, event: ChunksEmbedded) -> None:
        vectors = {v.chunk_id: v.vector for v in event.vectors}
        stored = await self.index.upsert_vectors(
            event.tenant, event.document_id, vectors, event.model
        )
        if vectors and not stored:
            log.info(
                "index: ignored %d vectors of %s by model %s (generation holds %s)",
                len(vectors),
                event.document_id,
                event.model,
                self.index.model,
            )

    @_handles(TableDocumented, EpisodeRecorded, SummaryCreated)
    async def on_searchable(
        self, event: TableDocumented | EpisodeRecorded | SummaryCreated
    ) -> None:
        """One event, one searchable object: a table's documentation, an episode, a summary."""
        await self.index.upsert_chunks([searchable_object(event)])

    @_handles(TableDropped)
    async def on_table_dropped(self, event: TableDropped) -> None:
        await self.index.retract_document(
            event.tenant, table_document_id(event.fully_qualified_name)
        )

    @_handles(MemoryForgotten)
    async def on_memory_forgotten(self, event: MemoryForgotten) -> None:
        group = None if event.scope == "tenant" else event.group_id
        await self.index.forget_memory(event.tenant, group)


def _handler_for(event_type: type[Event]) -> Handler | None:
    for klass in event_type.__mro__:
        handler = _HANDLERS.get(klass)
        if handler is not None:
            return handler
    return None
