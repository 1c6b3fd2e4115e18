"""Collections, properties and filters of the Weaviate adapter (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    Tokenization,
    VectorDistances,
)
from weaviate.classes.query import Filter
from weaviate.collections.classes.filters import _Filters

from projections.index.port import Filters, IndexedObject, Kind

PENDING = "PendingVector"
"""Vectors whose chunk has not arrived (chunk id, tenant, document id, model)."""
OFFSETS = "Offsets"
"""The projection's next offsets per (topic, partition); written after each batch's data."""
LOGICAL = (*(k.value for k in Kind), PENDING, OFFSETS)

_STORED = tuple(f.name for f in fields(IndexedObject) if f.name not in ("kind", "vector", "model"))
"""The properties an :class:`IndexedObject`'s fields are stored in (the collection is its
kind, the object's own vector its vector)."""
SEARCHED = ["text", "title"]
"""Properties BM25 ranks on (the others are exact-match filters)."""
_NUMBERS = ("start_line", "end_line")
_LISTS = ("intent", "device")
_TYPED = (*SEARCHED, *_NUMBERS, *_LISTS, "updated_at", "metadata")
_LABELS = tuple(name for name in _STORED if name not in _TYPED)
"""Text matched whole, never ranked: ids, names, paths, places."""


def _field(name: str) -> Property:
    return Property(
        name=name,
        data_type=DataType.TEXT,
        tokenization=Tokenization.FIELD,
        index_searchable=False,
        skip_vectorization=True,
    )


def object_properties() -> list[Property]:
    return [
        *(
            Property(name=n, data_type=DataType.TEXT, tokenization=Tokenization.WORD)
            for n in SEARCHED
        ),
        *(_field(n) for n in (*_LABELS, "model")),
        *(Property(name=n, data_type=DataType.INT) for n in _NUMBERS),
        *(
            Property(
                name=n,
                data_type=DataType.TEXT_ARRAY,
                tokenization=Tokenization.FIELD,
                index_searchable=False,
            )
            for n in _LISTS
        ),
        Property(name="updated_at", data_type=DataType.DATE),
        Property(
            name="metadata",
            data_type=DataType.TEXT,
            index_filterable=False,
            index_searchable=False,
        ),
    ]


def collection_config(logical: str) -> dict[str, Any]:
    """Keyword arguments of ``collections.create`` for one logical collection."""
    if logical == OFFSETS:
        return {
            "properties": [
                _field("projection"),
                _field("topic"),
                Property(name="partition", data_type=DataType.INT),
                Property(name="next_offset", data_type=DataType.INT),
            ],
        }
    if logical == PENDING:
        return {
            "properties": [_field(n) for n in ("chunk_id", "tenant", "document_id", "model")],
            # Looked up by id only: a flat index costs nothing to build.
            "vector_config": Configure.Vectors.self_provided(
                vector_index_config=Configure.VectorIndex.flat(
                    distance_metric=VectorDistances.COSINE
                )
            ),
        }
    memory = Kind(logical).is_memory
    # Memory is searched one group at a time, inside one Weaviate tenant: a flat index
    # ranks that group exactly and costs nothing to keep up as turns arrive.
    index = Configure.VectorIndex.flat if memory else Configure.VectorIndex.hnsw
    config: dict[str, Any] = {
        "properties": object_properties(),
        "vector_config": Configure.Vectors.self_provided(
            vector_index_config=index(distance_metric=VectorDistances.COSINE)
        ),
    }
    if memory:
        # One Weaviate tenant per Tribal tenant: isolation is physical, not a filter.
        config["multi_tenancy_config"] = Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
        )
    return config


def to_properties(o: IndexedObject, model: str | None) -> dict[str, Any]:
    props = {name: getattr(o, name) for name in _STORED}
    props.update(
        intent=list(o.intent),
        device=list(o.device),
        metadata=json.dumps(dict(o.metadata)),
        model=model,
    )
    return {k: v for k, v in props.items() if v is not None}


def from_properties(kind: Kind, props: Mapping[str, Any]) -> IndexedObject:
    values: dict[str, Any] = {name: props.get(name) for name in _STORED}
    for names, read in (((*SEARCHED, *_LABELS), str), (_NUMBERS, int)):
        for name in names:
            values[name] = None if values[name] is None else read(values[name])
    for name in _LISTS:
        values[name] = tuple(values[name] or ())
    values.update(
        chunk_id=str(props["chunk_id"]),
        document_id=str(props["document_id"]),
        text=values["text"] or "",
        tenant=values["tenant"] or "default",
        document_version=values["document_version"] or "",
        metadata=json.loads(str(props.get("metadata") or "{}")),
    )
    return IndexedObject(kind=kind, **values)


def to_filter(tenant: str | None, filters: Filters | None) -> _Filters | None:
    """All conditions of ``filters`` (and the tenant property) joined with AND."""
    f = filters or Filters()
    parts: list[_Filters] = []
    if tenant is not None:
        parts.append(Filter.by_property("tenant").equal(tenant))
    for name in ("document_id", "database", "domain", "repo", "language", "symbol_kind"):
        value = getattr(f, name)
        if value is not None:
            parts.append(Filter.by_property(name).equal(value))
    if f.group_id is not None:
        parts.append(Filter.by_property("group_id").equal(f.group_id))
    if f.path_glob is not None:
        parts.append(Filter.by_property("path").like(f.path_glob))
    if f.intent is not None:
        parts.append(Filter.by_property("intent").contains_any([f.intent]))
    if f.device is not None:
        parts.append(Filter.by_property("device").contains_any([f.device]))
    if f.updated_after is not None:
        parts.append(Filter.by_property("updated_at").greater_or_equal(f.updated_after))
    if f.updated_before is not None:
        parts.append(Filter.by_property("updated_at").less_or_equal(f.updated_before))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)
