"""The search index on Weaviate (the distributed default), through weaviate-client v4.

One collection per kind plus ``PendingVector`` and ``Offsets``, all named
``{prefix}{Logical}_{generation}`` and reached through aliases ``{prefix}{Logical}``;
a rebuild fills a new generation and :meth:`finish_generation` re-points each alias
(atomic per collection) and deletes the old generation. Episode and Summary are
multi-tenant (one Weaviate tenant per Tribal tenant, created on first write); the
other kinds carry ``tenant`` as a filtered property.

Weaviate has no transactions: object ids are uuid5 (:func:`scoring.object_uuid`), a
batch's data is written before its offsets, and a replay rewrites identical objects
(exactly-once effect). Objects are replaced whole on write, so adding a vector to a
chunk (or text to a pending vector) fetches the other half first and writes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any
from uuid import UUID, uuid5

import weaviate
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from projections.index import weaviate_schema as ws
from projections.index import weaviate_search
from projections.index.port import (
    CHUNK_KINDS,
    Filters,
    Hit,
    IndexedObject,
    IndexWriteError,
    InvalidVectorError,
    Kind,
    MissingTenantError,
    Positions,
    Query,
    SearchIndex,
)
from projections.index.scoring import OBJECT_NAMESPACE, object_uuid
from projections.index.weaviate_collections import WeaviateCollections, stored_vector

_MAX = weaviate_search.QUERY_MAXIMUM_RESULTS


def _check(result: Any, what: str) -> None:
    if result.has_errors:
        first = next(iter(result.errors.values()))
        raise IndexWriteError(f"{what}: {len(result.errors)} objects failed: {first.message}")


class WeaviateIndex(WeaviateCollections, SearchIndex):
    """:class:`~projections.index.port.SearchIndex` on Weaviate."""

    def __init__(
        self,
        http_host: str,
        http_port: int,
        grpc_host: str,
        grpc_port: int,
        prefix: str = "Tribal",
        model: str | None = None,
        generation: str | None = None,
        dims: int = 384,
    ) -> None:
        super().__init__(prefix, generation)
        self.endpoint = (http_host, http_port, grpc_host, grpc_port)
        self.model = model
        self.dims = dims
        """Every vector's length. Weaviate takes the first vector's length for a tenant's
        index, so one wrong vector written first would refuse all the right ones."""

    @classmethod
    def from_url(cls, url: str, grpc_port: int, **kwargs: Any) -> WeaviateIndex:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        host = parts.hostname or "127.0.0.1"
        return cls(host, parts.port or 8080, host, grpc_port, **kwargs)

    async def _connect(self) -> None:
        if self.client is None:
            http_host, http_port, grpc_host, grpc_port = self.endpoint
            self.client = weaviate.use_async_with_custom(
                http_host, http_port, False, grpc_host, grpc_port, False, skip_init_checks=True
            )
            await self.client.connect()

    async def _live_generation(self) -> str | None:
        alias = await self.client.alias.get(alias_name=f"{self.prefix}{ws.OFFSETS}")
        return None if alias is None else str(alias.collection).rsplit("_", 1)[-1]

    async def _create(self, generation: str) -> None:
        collections = self.client.collections
        for logical in ws.LOGICAL:
            name = f"{self.prefix}{logical}_{generation}"
            await _once(
                functools.partial(collections.exists, name),
                functools.partial(collections.create, name, **ws.collection_config(logical)),
            )

    async def setup(self) -> None:
        await self._connect()
        if self.generation is not None:
            await self._create(self.generation)
            return
        if await self._live_generation() is None:
            await self._create("v1")
            aliases = self.client.alias
            for logical in ws.LOGICAL:
                alias = f"{self.prefix}{logical}"
                await _once(
                    functools.partial(aliases.exists, alias_name=alias),
                    functools.partial(
                        aliases.create, alias_name=alias, target_collection=f"{alias}_v1"
                    ),
                )

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        yield  # no transactions: the projection writes offsets after the data

    async def positions(self, projection: str) -> Positions:
        result = await self.col(ws.OFFSETS).query.fetch_objects(
            filters=Filter.by_property("projection").equal(projection), limit=_MAX
        )
        return {
            (str(o.properties["topic"]), int(o.properties["partition"])): int(
                o.properties["next_offset"]
            )
            for o in result.objects
        }

    async def record_positions(self, projection: str, positions: Positions) -> None:
        objects = [
            DataObject(
                uuid=uuid5(OBJECT_NAMESPACE, f"offsets\x1f{projection}\x1f{t}\x1f{p}"),
                properties={"projection": projection, "topic": t, "partition": p, "next_offset": o},
            )
            for (t, p), o in positions.items()
        ]
        if objects:
            _check(await self.col(ws.OFFSETS).data.insert_many(objects), "offsets")

    def _accepts(self, vector: Sequence[float] | None, model: str | None) -> bool:
        if vector is None or model is None:
            return False
        if len(vector) != self.dims:
            raise InvalidVectorError(
                f"a vector of {len(vector)} dimensions; this index holds {self.dims}"
            )
        if self.model is None:
            self.model = model
        return model == self.model

    async def _fetch(self, col: Any, ids: list[UUID], vectors: bool = True) -> dict[UUID, Any]:
        if not ids:
            return {}
        result = await col.query.fetch_objects_by_ids(ids, limit=len(ids), include_vector=vectors)
        return {o.uuid: o for o in result.objects}

    async def upsert_chunks(self, objects: Sequence[IndexedObject]) -> int:
        groups: dict[tuple[Kind, str], list[IndexedObject]] = {}
        for o in objects:
            groups.setdefault((o.kind, o.tenant), []).append(o)
        for (kind, tenant), group in groups.items():
            col = self.kind_col(kind, tenant)
            ids = [object_uuid(o.tenant, o.chunk_id) for o in group]
            existing: dict[UUID, Any] = {}
            pending: dict[UUID, Any] = {}
            # Objects that bring their own vector need nothing from the store.
            if not kind.is_memory and not all(self._accepts(o.vector, o.model) for o in group):
                existing, pending = await asyncio.gather(
                    self._fetch(col, ids), self._fetch(self.col(ws.PENDING), ids)
                )
            batch = []
            for uid, o in zip(ids, group, strict=True):
                vector: list[float] | None = None
                model = None
                if self._accepts(o.vector, o.model):
                    vector, model = list(o.vector or ()), o.model
                else:
                    for source in (existing.get(uid), pending.get(uid)):
                        if source is None:
                            continue
                        found = stored_vector(source)
                        if self._accepts(found, source.properties.get("model")):
                            vector, model = found, self.model
                            break
                batch.append(
                    DataObject(uuid=uid, properties=ws.to_properties(o, model), vector=vector)
                )
            _check(await col.data.insert_many(batch), f"{kind.value} upsert")
            if pending:
                await self.col(ws.PENDING).data.delete_many(
                    where=Filter.by_id().contains_any(list(pending))
                )
        return len(objects)

    async def upsert_vectors(
        self, tenant: str, document_id: str, vectors: Mapping[str, Sequence[float]], model: str
    ) -> int:
        if not vectors or not self._accepts(next(iter(vectors.values())), model):
            return 0
        ids = {object_uuid(tenant, cid): cid for cid in vectors}
        cols = [self.col(k.value) for k in CHUNK_KINDS]
        found = await asyncio.gather(*(self._fetch(c, list(ids), vectors=False) for c in cols))
        for col, objects in zip(cols, found, strict=True):
            if objects:
                batch = [
                    DataObject(
                        uuid=uid,
                        properties={**o.properties, "model": model},
                        vector=list(vectors[ids[uid]]),
                    )
                    for uid, o in objects.items()
                ]
                _check(await col.data.insert_many(batch), "vector upsert")
        seen = {uid for objects in found for uid in objects}
        pending = [
            DataObject(
                uuid=uid,
                properties={
                    "chunk_id": cid,
                    "tenant": tenant,
                    "document_id": document_id,
                    "model": model,
                },
                vector=list(vectors[cid]),
            )
            for uid, cid in ids.items()
            if uid not in seen
        ]
        if pending:
            _check(await self.col(ws.PENDING).data.insert_many(pending), "pending vectors")
        return len(ids)

    async def _delete(self, logicals: Sequence[str], where: Any) -> int:
        results = await asyncio.gather(
            *(self.col(name).data.delete_many(where=where) for name in logicals)
        )
        return sum(int(r.successful) for r in results)

    def _of_document(self, tenant: str, document_id: str) -> Any:
        return Filter.all_of(
            [
                Filter.by_property("tenant").equal(tenant),
                Filter.by_property("document_id").equal(document_id),
            ]
        )

    async def retract_document(self, tenant: str, document_id: str) -> int:
        where = self._of_document(tenant, document_id)
        names = [k.value for k in CHUNK_KINDS]
        deleted = await self._delete(names, where)
        await self._delete([ws.PENDING], where)
        return deleted

    async def delete_stale_chunks(self, tenant: str, document_id: str, keep: Sequence[str]) -> int:
        where = self._of_document(tenant, document_id)
        if keep:
            where = where & Filter.by_property("chunk_id").contains_none(list(keep))
        return await self._delete([k.value for k in CHUNK_KINDS], where)

    async def forget_memory(self, tenant: str, group_id: str | None) -> int:
        return await weaviate_search.forget(self, tenant, group_id)

    async def find(self, query: Query) -> list[Hit]:
        return await weaviate_search.find(self, query)

    async def count(
        self, kind: Kind, tenant: str | None = None, filters: Filters | None = None
    ) -> int:
        if kind.is_memory and tenant is None:
            raise MissingTenantError(f"counting {kind.value} needs a tenant")
        return await weaviate_search.count(self, kind, tenant, filters)

    async def recent(
        self, kind: Kind, tenant: str, filters: Filters | None, limit: int
    ) -> list[IndexedObject]:
        return await weaviate_search.recent(self, kind, tenant, filters, limit)

    async def begin_generation(self, model: str | None = None) -> WeaviateIndex:
        live = await self._live_generation() or "v0"
        shadow = WeaviateIndex(
            *self.endpoint,
            prefix=self.prefix,
            model=model or self.model,
            generation=f"v{int(live.lstrip('v')) + 1}",
            dims=self.dims,
        )
        await shadow._connect()
        await shadow.drop()  # leftovers of an interrupted rebuild
        await shadow.setup()
        return shadow

    async def finish_generation(self, shadow: Any) -> None:
        assert isinstance(shadow, WeaviateIndex)
        assert shadow.generation is not None
        old = await self._live_generation()
        for logical in ws.LOGICAL:
            alias = f"{self.prefix}{logical}"
            target = f"{alias}_{shadow.generation}"
            if await self.client.alias.exists(alias_name=alias):
                await self.client.alias.update(alias_name=alias, new_target_collection=target)
            else:
                await self.client.alias.create(alias_name=alias, target_collection=target)
        if old is not None and old != shadow.generation:
            for logical in ws.LOGICAL:
                await self.client.collections.delete(f"{self.prefix}{logical}_{old}")
        self.model = shadow.model
        await shadow.close()

    async def drop(self) -> None:
        generation = self.generation or await self._live_generation()
        if self.generation is None:
            for logical in ws.LOGICAL:
                await self.client.alias.delete(alias_name=f"{self.prefix}{logical}")
        if generation is not None:
            for logical in ws.LOGICAL:
                await self.client.collections.delete(f"{self.prefix}{logical}_{generation}")

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
            self.client = None


async def _once(
    exists: Callable[[], Awaitable[bool]], create: Callable[[], Awaitable[Any]]
) -> None:
    """Create what does not exist yet; when another process created it in between (the
    API and the projections of one stack set up together), that is the same outcome."""
    if await exists():
        return
    try:
        await create()
    except Exception:
        if not await exists():
            raise
