"""Help-desk articles → ``DocumentChunked`` / ``DocumentRetracted``."""

from __future__ import annotations

from collections.abc import Iterable

from events.base import Event
from events.chunks import DocumentChunked, DocumentRetracted
from events.kb import KbArticleDeleted, KbArticleUpserted
from streams.chunker.text import chunk_text, content_version
from streams.wiring import Emit


def kb_document_id(article_id: str) -> str:
    return f"kb:{article_id}"


def chunk_kb_article(event: Event) -> Iterable[Emit]:
    """One article version in, all of its chunks out (or a retraction)."""
    if isinstance(event, KbArticleDeleted):
        doc = kb_document_id(event.article_id)
        yield Emit(
            "chunks",
            doc,
            DocumentRetracted(tenant=event.tenant, document_id=doc, reason="article deleted"),
        )
        return
    assert isinstance(event, KbArticleUpserted)
    doc = kb_document_id(event.article_id)
    version = content_version(event.title, event.content)
    text = f"{event.title}\n\n{event.content}"
    yield Emit(
        "chunks",
        doc,
        DocumentChunked(
            tenant=event.tenant,
            document_id=doc,
            document_version=version,
            source_type="kb",
            title=event.title,
            url=event.url,
            chunked_by="text",
            chunks=chunk_text(doc, version, text),
            metadata={
                "intent": ",".join(event.intent),
                "device": ",".join(event.device),
                "last_updated": event.last_updated.isoformat(),
            },
        ),
    )
