"""Plan a batch of index events into fewer writes, with the same end state (pure).

Two rewrites, both order-safe:

* A ``ChunksEmbedded`` whose document's *last* chunks-topic event in the batch is a
  ``DocumentChunked`` of the same version rides along with it: the objects are written
  once, with their vectors, instead of text first and vectors after.
* Consecutive ``DocumentChunked`` of distinct documents become one upsert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from events.base import Event
from events.chunks import ChunksEmbedded, DocumentChunked, DocumentRetracted
from projections.index.documents import chunk_objects
from projections.index.port import IndexedObject


@dataclass
class ChunkedRun:
    """Documents to upsert together; ``keep`` is each document's chunk ids."""

    objects: list[IndexedObject] = field(default_factory=list)
    keep: dict[tuple[str, str], list[str]] = field(default_factory=dict)


Step = ChunkedRun | Event


def _doc(event: Event) -> tuple[str, str] | None:
    if isinstance(event, DocumentChunked | DocumentRetracted | ChunksEmbedded):
        return (event.tenant, event.document_id)
    return None


def plan(events: Sequence[Event]) -> list[Step]:
    """The batch as steps: :class:`ChunkedRun` groups, or single events to dispatch."""
    last_chunks: dict[tuple[str, str], int] = {}
    for i, event in enumerate(events):
        key = _doc(event)
        if key is not None and not isinstance(event, ChunksEmbedded):
            last_chunks[key] = i
    riders: dict[int, ChunksEmbedded] = {}
    carried: set[int] = set()
    for i, event in enumerate(events):
        if isinstance(event, ChunksEmbedded):
            j = last_chunks.get((event.tenant, event.document_id))
            if j is None or j in riders:
                continue
            target = events[j]
            if (
                isinstance(target, DocumentChunked)
                and target.document_version == event.document_version
            ):
                riders[j] = event
                carried.add(i)
    steps: list[Step] = []
    run: ChunkedRun | None = None
    for i, event in enumerate(events):
        if i in carried:
            continue
        if isinstance(event, DocumentChunked):
            key = (event.tenant, event.document_id)
            if run is None or key in run.keep:
                run = ChunkedRun()
                steps.append(run)
            objects = chunk_objects(event)
            rider = riders.get(i)
            if rider is not None:
                vectors = {v.chunk_id: tuple(v.vector) for v in rider.vectors}
                objects = [
                    replace(o, vector=vectors.get(o.chunk_id), model=rider.model)
                    if o.chunk_id in vectors
                    else o
                    for o in objects
                ]
            run.objects += objects
            run.keep[key] = [o.chunk_id for o in objects]
            continue
        run = None
        steps.append(event)
    return steps
