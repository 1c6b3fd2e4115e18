"""Events → :class:`IndexedObject` values (pure: no store, no I/O)."""

from __future__ import annotations

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
                symbol=chunk.symbol,
                symbol_kind=chunk.kind,
                parent_symbol=chunk.parent_symbol,
                fully_qualified_name=chunk.fully_qualified_name,
                start_line=chunk.start_line,
                end_line=chunk.end_line,
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
        tenant=event.tenant,
        document_version=event.metadata_hash,
        title=event.table_name,
        fully_qualified_name=event.fully_qualified_name,
        database=event.database,
        domain=event.domain,
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


def episode_object(event: EpisodeRecorded) -> IndexedObject:
    return IndexedObject(
        chunk_id=str(event.episode_id),
        kind=Kind.EPISODE,
        document_id=str(event.episode_id),
        text=event.content,
        tenant=event.tenant,
        group_id=event.group_id,
        updated_at=event.occurred_at,
        metadata={
            "content_type": event.content_type,
            "source": event.source,
            "source_event_id": str(event.source_event_id),
            **event.source_metadata,
        },
        vector=tuple(event.embedding) if event.embedding is not None else None,
        model=event.embedding_model,
    )


def summary_object(event: SummaryCreated) -> IndexedObject:
    return IndexedObject(
        chunk_id=str(event.summary_id),
        kind=Kind.SUMMARY,
        document_id=str(event.summary_id),
        text=event.content,
        tenant=event.tenant,
        group_id=event.group_id,
        updated_at=event.occurred_at,
        metadata={
            "summary_type": event.summary_type,
            "episode_ids": ",".join(map(str, event.episode_ids)),
            "summary_ids": ",".join(map(str, event.summary_ids)),
            "model": event.model,
        },
    )
