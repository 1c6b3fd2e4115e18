"""Collections, properties and filters of the Weaviate adapter (no I/O)."""

from __future__ import annotations

import json
from collections.abc import Mapping
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

SEARCHED = ["text", "title"]
"""Properties BM25 ranks on (the others are exact-match filters)."""
_FIELDS = (
    "chunk_id",
    "tenant",
    "document_id",
    "document_version",
    "url",
    "path",
    "repo",
    "language",
    "symbol",
    "symbol_kind",
    "parent_symbol",
    "fully_qualified_name",
    "database",
    "domain",
    "group_id",
    "model",
)


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
        Property(name="text", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        Property(name="title", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        *(_field(n) for n in _FIELDS),
        Property(name="start_line", data_type=DataType.INT),
        Property(name="end_line", data_type=DataType.INT),
        Property(
            name="intent",
            data_type=DataType.TEXT_ARRAY,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
        ),
        Property(
            name="device",
            data_type=DataType.TEXT_ARRAY,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
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
    config: dict[str, Any] = {
        "properties": object_properties(),
        "vector_config": Configure.Vectors.self_provided(
            vector_index_config=Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
        ),
    }
    if Kind(logical).is_memory:
        # One Weaviate tenant per Tribal tenant: isolation is physical, not a filter.
        config["multi_tenancy_config"] = Configure.multi_tenancy(
            enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
        )
    return config


def to_properties(o: IndexedObject, model: str | None) -> dict[str, Any]:
    props: dict[str, Any] = {
        "text": o.text,
        "title": o.title,
        "chunk_id": o.chunk_id,
        "tenant": o.tenant,
        "document_id": o.document_id,
        "document_version": o.document_version,
        "url": o.url,
        "path": o.path,
        "repo": o.repo,
        "language": o.language,
        "symbol": o.symbol,
        "symbol_kind": o.symbol_kind,
        "parent_symbol": o.parent_symbol,
        "fully_qualified_name": o.fully_qualified_name,
        "database": o.database,
        "domain": o.domain,
        "group_id": o.group_id,
        "model": model,
        "start_line": o.start_line,
        "end_line": o.end_line,
        "intent": list(o.intent),
        "device": list(o.device),
        "updated_at": o.updated_at,
        "metadata": json.dumps(dict(o.metadata)),
    }
    return {k: v for k, v in props.items() if v is not None}


def from_properties(kind: Kind, props: Mapping[str, Any]) -> IndexedObject:
    def text(name: str) -> str | None:
        value = props.get(name)
        return None if value is None else str(value)

    def number(name: str) -> int | None:
        value = props.get(name)
        return None if value is None else int(value)

    return IndexedObject(
        chunk_id=str(props["chunk_id"]),
        kind=kind,
        document_id=str(props["document_id"]),
        text=str(props.get("text") or ""),
        tenant=str(props.get("tenant") or "default"),
        document_version=str(props.get("document_version") or ""),
        title=text("title"),
        url=text("url"),
        path=text("path"),
        repo=text("repo"),
        language=text("language"),
        symbol=text("symbol"),
        symbol_kind=text("symbol_kind"),
        parent_symbol=text("parent_symbol"),
        fully_qualified_name=text("fully_qualified_name"),
        start_line=number("start_line"),
        end_line=number("end_line"),
        database=text("database"),
        domain=text("domain"),
        intent=tuple(props.get("intent") or ()),
        device=tuple(props.get("device") or ()),
        group_id=text("group_id"),
        updated_at=props.get("updated_at"),
        metadata=json.loads(str(props.get("metadata") or "{}")),
    )


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
