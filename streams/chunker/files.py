"""Source files → ``DocumentChunked`` / ``DocumentRetracted`` on ``tribal.chunks``.

A file is the document ``file:{repo}:{path}``; its version is the content's sha256.

Stale chunks: a ``DocumentChunked`` carries *all* chunks of one version and replaces
the previous version wholesale. Chunk ids embed the version
(``{document id}@{sha256[:12]}#{index}``), so a projection applies it by writing the new
chunks and deleting every chunk of the document whose id is not among them; nothing
here has to remember which chunks an earlier version had. (Emitting a retraction per
vanished chunk would need the previous version's ids: state per file, unbounded, and
redundant with replace semantics.) Deletions, skips (a file that became binary or too
large) and the old path of a rename become ``DocumentRetracted``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

from events.base import Event
from events.chunks import Chunk, DocumentChunked, DocumentRetracted
from events.files import FileChanged, FileDeleted, FileSkipped
from streams.chunker.pieces import Piece, SourceDocument
from streams.chunker.registry import IngesterRegistry, Ingestion
from streams.wiring import Emit, ProcessingError

MAX_DOCUMENT_BYTES = 900_000
"""Chunk text per document, under the producer's default 1 MB request size."""


def file_document_id(repo: str, path: str) -> str:
    return f"file:{repo}:{path}"


def chunk_id(document_id: str, version: str, index: int) -> str:
    """The id scheme of :func:`streams.chunker.text.chunk_text`."""
    return f"{document_id}@{version[:12]}#{index}"


def to_chunks(
    document_id: str, version: str, pieces: Sequence[Piece], language: str | None
) -> tuple[tuple[Chunk, ...], int]:
    """Numbered chunks, and how many pieces were dropped to stay under the size cap."""
    chunks: list[Chunk] = []
    total = 0
    for index, piece in enumerate(pieces):
        text = piece.text
        total += len(text) if text.isascii() else len(text.encode("utf-8", errors="replace"))
        if total > MAX_DOCUMENT_BYTES:
            return tuple(chunks), len(pieces) - index
        # A chunk is its piece, numbered, in the document's language.
        chunks.append(
            Chunk(
                chunk_id=chunk_id(document_id, version, index),
                index=index,
                language=language,
                **asdict(piece),
            )
        )
    return tuple(chunks), 0


def _valid_text(content: str) -> str:
    """``content`` with lone surrogates (bytes the source could not decode) replaced."""
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        try:  # bytes a source kept with surrogateescape: back to bytes, then U+FFFD
            raw = content.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            raw = content.encode("utf-8", errors="surrogatepass")
        return raw.decode("utf-8", errors="replace")
    return content


def _document_metadata(event: FileChanged, ingestion: Ingestion, dropped: int) -> dict[str, str]:
    """The file's repo and size, the ingesters that declined it before the one that
    chunked it, and how many chunks the size cap dropped."""
    metadata = {"repo": event.repo, "size_bytes": str(event.size_bytes)}
    if ingestion.attempts:
        metadata["declined_by"] = "; ".join(f"{a} ({r})" for a, r in ingestion.attempts)
    if dropped:
        metadata.update(truncated="true", chunks_dropped=str(dropped))
    return metadata


class FileChunker:
    """The ``file_chunker`` agent's processor."""

    def __init__(self, registry: IngesterRegistry) -> None:
        self.registry = registry

    async def __call__(self, event: Event) -> list[Emit]:
        if isinstance(event, FileDeleted):
            return [self._retract(event.tenant, event.repo, event.path, "file deleted")]
        if isinstance(event, FileSkipped):
            reason = f"file skipped: {event.reason}"
            return [self._retract(event.tenant, event.repo, event.path, reason)]
        if not isinstance(event, FileChanged):
            raise ProcessingError("UNEXPECTED_EVENT_TYPE", type(event).__name__)
        emits: list[Emit] = []
        if event.renamed_from and event.renamed_from != event.path:
            reason = f"renamed to {event.path}"
            emits.append(self._retract(event.tenant, event.repo, event.renamed_from, reason))
        emits.append(await self.chunked(event))
        return emits

    async def chunked(self, event: FileChanged) -> Emit:
        """The ``DocumentChunked`` for one file version."""
        doc_id = file_document_id(event.repo, event.path)
        source = SourceDocument(event.path, _valid_text(event.content), event.language)
        try:
            ingestion = await self.registry.ingest(source)
        except Exception as exc:
            raise ProcessingError("CHUNKING_FAILED", f"{event.path}: {exc}") from exc
        language = ingestion.language or event.language
        chunks, dropped = to_chunks(doc_id, event.sha256, ingestion.pieces, language)
        return Emit(
            "chunks",
            doc_id,
            DocumentChunked(
                tenant=event.tenant,
                document_id=doc_id,
                document_version=event.sha256,
                source_type="file",
                title=event.path,
                path=event.path,
                language=language,
                chunked_by=ingestion.agent_id,
                chunks=chunks,
                metadata=_document_metadata(event, ingestion, dropped),
            ),
        )

    @staticmethod
    def _retract(tenant: str, repo: str, path: str, reason: str) -> Emit:
        doc_id = file_document_id(repo, path)
        return Emit(
            "chunks", doc_id, DocumentRetracted(tenant=tenant, document_id=doc_id, reason=reason)
        )
