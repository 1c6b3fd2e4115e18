"""Reads and memory erasure of the Weaviate adapter.

Hybrid search runs ``near_vector`` and ``bm25`` side by side and fuses them with the
shared :func:`scoring.fuse` (not Weaviate's own fusion), so scores and order are
defined exactly as on pgvector.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from weaviate.classes.query import Filter, MetadataQuery, Sort
from weaviate.exceptions import WeaviateBaseError

from projections.index import weaviate_schema as ws
from projections.index.port import Filters, Hit, IndexedObject, Kind, Query
from projections.index.scoring import (
    WEAVIATE_BM25_HALF,
    fuse,
    lexical_score,
    vector_score,
    vector_score_from_distance,
    weaviate_tenant,
)
from projections.index.weaviate_collections import WeaviateCollections, stored_vector

QUERY_MAXIMUM_RESULTS = 10_000
"""Weaviate's default ``QUERY_MAXIMUM_RESULTS``: a deeper query is refused as "invalid
pagination", so a far page (offset 10,000) asks for no more than this."""


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _unknown_tenant(exc: Exception) -> bool:
    return "tenant" in str(exc).lower()


async def find(collections: WeaviateCollections, query: Query) -> list[Hit]:
    """:meth:`~projections.index.port.SearchIndex.find` on Weaviate."""
    kind, vec, text = query.kind, query.vector, query.text
    col, where = collections.scoped(kind, query.tenant, query.filters)
    depth = min(query.depth, QUERY_MAXIMUM_RESULTS)

    async def nothing() -> Any:
        return None

    try:
        near, lexical = await asyncio.gather(
            col.query.near_vector(
                vec, limit=depth, filters=where, return_metadata=MetadataQuery(distance=True)
            )
            if vec is not None
            else nothing(),
            col.query.bm25(
                text,
                query_properties=ws.SEARCHED,
                limit=depth,
                filters=where,
                include_vector=vec is not None,
                return_metadata=MetadataQuery(score=True),
            )
            if text
            else nothing(),
        )
    except WeaviateBaseError as exc:
        if kind.is_memory and _unknown_tenant(exc):
            return []
        raise
    objects: dict[str, IndexedObject] = {}
    vector_side: list[tuple[str, float]] = []
    lexical_side: list[tuple[str, float]] = []
    vector_of: dict[str, float | None] = {}
    for o in near.objects if near is not None else ():
        key = str(o.uuid)
        objects[key] = ws.from_properties(kind, o.properties)
        vector_side.append((key, vector_score_from_distance(float(o.metadata.distance or 0))))
    for o in lexical.objects if lexical is not None else ():
        key = str(o.uuid)
        objects[key] = ws.from_properties(kind, o.properties)
        lexical_side.append((key, lexical_score(float(o.metadata.score or 0), WEAVIATE_BM25_HALF)))
        found = stored_vector(o)
        vector_of[key] = None if found is None or vec is None else vector_score(_cosine(found, vec))
    fused = fuse(vector_side, lexical_side, query.limit, vector_of)
    return [Hit(objects[f.key], f.score, f.vector, f.lexical) for f in fused]


async def count(
    collections: WeaviateCollections, kind: Kind, tenant: str | None, filters: Filters | None
) -> int:
    """:meth:`~projections.index.port.SearchIndex.count` on Weaviate."""
    col, where = collections.scoped(kind, tenant, filters)
    try:
        result = await col.aggregate.over_all(total_count=True, filters=where)
    except WeaviateBaseError as exc:
        if kind.is_memory and _unknown_tenant(exc):
            return 0
        raise
    return int(result.total_count or 0)


async def recent(
    collections: WeaviateCollections, kind: Kind, tenant: str, filters: Filters | None,
    limit: int,
) -> list[IndexedObject]:  # fmt: skip
    """:meth:`~projections.index.port.SearchIndex.recent` on Weaviate."""
    col, where = collections.scoped(kind, tenant, filters)
    try:
        found = await col.query.fetch_objects(
            filters=where, limit=min(limit, QUERY_MAXIMUM_RESULTS), include_vector=True,
            sort=Sort.by_property("updated_at", ascending=False),
        )  # fmt: skip
    except WeaviateBaseError as exc:
        if _unknown_tenant(exc):
            return []
        raise
    out = []
    for o in found.objects:
        vector = stored_vector(o)
        obj = ws.from_properties(kind, o.properties)
        out.append(replace(obj, vector=None if vector is None else tuple(vector)))
    return out


async def forget(collections: WeaviateCollections, tenant: str, group_id: str | None) -> int:
    """Remove one group's memory objects, or the tenant's Weaviate tenant altogether."""
    deleted = 0
    for kind in (Kind.EPISODE, Kind.SUMMARY):
        if group_id is None:
            deleted += await count(collections, kind, tenant, None)
            col = await collections.concrete(kind)
            if await col.tenants.exists(weaviate_tenant(tenant)):
                await col.tenants.remove([weaviate_tenant(tenant)])
            continue
        try:
            result = await collections.col(kind.value, tenant).data.delete_many(
                where=Filter.by_property("group_id").equal(group_id)
            )
        except WeaviateBaseError as exc:
            if _unknown_tenant(exc):
                continue
            raise
        deleted += int(result.successful)
    return deleted
