"""Help-desk articles → ``DocumentChunked`` / ``DocumentRetracted``.

An article is chunked by section: markdown headers, or the short standalone lines that
help-desk exports use as headers. Each chunk starts with the article title and its
section path, and carries the article's title, url, last_updated, intent and device in
its metadata, so a retrieved chunk can be cited and filtered on its own (seed 002).
"""

from __future__ import annotations

from collections.abc import Iterable

from events.base import Event
from events.chunks import Chunk, DocumentChunked, DocumentRetracted
from events.kb import KbArticleDeleted, KbArticleUpserted
from streams.chunker.files import to_chunks
from streams.chunker.markdown import section_pieces
from streams.chunker.pieces import Piece
from streams.chunker.text import content_version
from streams.wiring import Emit

KB_INGESTER = "kb-section-ingester"


def kb_document_id(article_id: str) -> str:
    return f"kb:{article_id}"


def _article_metadata(event: KbArticleUpserted) -> dict[str, str]:
    return {
        "intent": ",".join(event.intent),
        "device": ",".join(event.device),
        "last_updated": event.last_updated.isoformat(),
    }


def kb_chunks(document_id: str, version: str, event: KbArticleUpserted) -> tuple[Chunk, ...]:
    """The article's sections as chunks (its title alone when it has no text)."""
    pieces = section_pieces(event.title, event.content, plain_headers=True)
    if not pieces:
        pieces = [Piece(text=event.title, kind="section", start_line=1, end_line=1)]
    shared = {"title": event.title, "url": event.url, **_article_metadata(event)}
    chunks, _ = to_chunks(document_id, version, pieces, None)
    return tuple(
        c.model_copy(
            update={"metadata": {**shared, "section": c.fully_qualified_name or "", **c.metadata}}
        )
        for c in chunks
    )


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
            chunked_by=KB_INGESTER,
            chunks=kb_chunks(doc, version, event),
            metadata=_article_metadata(event),
        ),
    )
