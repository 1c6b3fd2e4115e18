"""Events → :class:`IndexedObject` values (pure: no store, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from events.chunks import DocumentChunked
from events.documents import TableDocumented, table_document_id, table_search_text
from events.memory import EpisodeRecorded, SummaryCreated
from projections.index.port import IndexedObject, Kind

KIND_BY_SOURCE = {
    "file": Kind.CODE_CHUNK,
    "kb": Kind.KB_CHUNK,
    "table": Kind.TABLE_DOC,
    "domain": Kind.TABLE_DOC,
}
"""``DocumentChunked.source_type`` → kind; unknown source types are help-desk-like text."""
_CHUNK_OWN = ("symbol", "parent_symbol", "fully_qualified_name", "start_line", "end_line")
"""Where a chunk sits in its document, under the names an indexed object gives them."""
_TABLE_OWN = ("tenant", "fully_qualified_name", "database", "domain")
"""What a table's object keeps of its documentation under the same names."""


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _updated(value: str | None, fallback: datetime) -> datetime:
    try:
        return datetime.fromisoformat(value) if value else fallback
    except ValueError:
        return fallback


def chunk_objects(event: DocumentChunked) -> list[IndexedObject]:
    """One object per chunk; document metadata first, the chunk's own wins."""
    kind = KIND_BY_SOURCE.get(event.source_type, Kind.KB_CHUNK)
    objects = []
    for chunk in event.chunks:
        meta = {**event.metadata, **chunk.metadata}
        objects.append(
            IndexedObject(
                chunk_id=chunk.chunk_id,
                kind=kind,
                document_id=event.document_id,
                text=chunk.text,
                tenant=event.tenant,
                document_version=event.document_version,
                title=meta.get("title") or event.title,
                url=meta.get("url") or event.url,
                path=event.path,
                repo=meta.get("repo"),
                language=chunk.language or event.language,
                symbol_kind=chunk.kind,
                **{name: getattr(chunk, name) for name in _CHUNK_OWN},
                database=meta.get("database"),
                domain=meta.get("domain"),
                intent=_split(meta.get("intent")),
                device=_split(meta.get("device")),
                updated_at=_updated(meta.get("last_updated"), event.occurred_at),
                metadata=meta,
            )
        )
    return objects


def table_object(event: TableDocumented) -> IndexedObject:
    doc = table_document_id(event.fully_qualified_name)
    return IndexedObject(
        chunk_id=doc,
        kind=Kind.TABLE_DOC,
        document_id=doc,
        text=table_search_text(event),
        document_version=event.metadata_hash,
        title=event.table_name,
        **{name: getattr(event, name) for name in _TABLE_OWN},
        updated_at=event.occurred_at,
        metadata={
            "schema": event.schema_name,
            "table": event.table_name,
            "description": event.description,
            "key_columns": ",".join(event.key_columns),
            "row_count_approx": str(event.row_count_approx or 0),
            "priority": str(event.priority),
            "database_type": event.database_type,
        },
    )


def _memory_object(
    event: EpisodeRecorded | SummaryCreated,
    kind: Kind,
    object_id: str,
    metadata: dict[str, str],
    vector: Sequence[float] | None = None,
    model: str | None = None,
) -> IndexedObject:
    """An episode or a summary: its own document, in its group, at its event's time."""
    return IndexedObject(
        chunk_id=object_id,
        kind=kind,
        document_id=object_id,
        text=event.content,
        tenant=event.tenant,
        group_id=event.group_id,
        updated_at=event.occurred_at,
        metadata=metadata,
        vector=None if vector is None else tuple(vector),
        model=model,
    )


def episode_object(event: EpisodeRecorded) -> IndexedObject:
    metadata = {
        "content_type": event.content_type,
        "source": event.source,
        "source_event_id": str(event.source_event_id),
        **event.source_metadata,
    }
    return _memory_object(
        event, Kind.EPISODE, str(event.episode_id), metadata, event.embedding, event.embedding_model
    )


def summary_object(event: SummaryCreated) -> IndexedObject:
    metadata = {
        "summary_type": event.summary_type,
        "episode_ids": ",".join(map(str, event.episode_ids)),
        "summary_ids": ",".join(map(str, event.summary_ids)),
        "model": event.model,
    }
    return _memory_object(event, Kind.SUMMARY, str(event.summary_id), metadata)


def searchable_object(event: TableDocumented | EpisodeRecorded | SummaryCreated) -> IndexedObject:
    """The one object a table's documentation, an episode or a summary is searched as."""
    if isinstance(event, TableDocumented):
        return table_object(event)
    if isinstance(event, EpisodeRecorded):
        return episode_object(event)
    return summary_object(event)
