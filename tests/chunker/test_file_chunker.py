"""The file agent: FileChanged → DocumentChunked; deletions, skips and renames retract."""

from __future__ import annotations

import hashlib
from pathlib import Path

from events.chunks import DocumentChunked, DocumentRetracted
from events.files import FileChanged, FileDeleted, FileSkipped
from events.registry.file import FileSchemaRegistry
from events.serde import EventSerde
from sources.file_languages import language_for
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker

REPO = Path(__file__).resolve().parents[2]


def changed(path: str, content: str, renamed_from: str | None = None) -> FileChanged:
    data = content.encode("utf-8", errors="surrogatepass")
    return FileChanged(
        repo="tribal",
        path=path,
        content=content,
        sha256=hashlib.sha256(data).hexdigest(),
        language=language_for(path),
        size_bytes=len(data),
        renamed_from=renamed_from,
    )


def _chunker() -> FileChunker:
    return FileChunker(default_registry(Path("/nonexistent"), {"TRIBAL_LLM_PROVIDER": "local"}))


async def test_a_changed_file_becomes_all_chunks_of_its_version(tmp_path: Path) -> None:
    source = (REPO / "streams/wiring.py").read_text(encoding="utf-8")
    event = changed("streams/wiring.py", source)
    [emit] = await _chunker()(event)
    doc = emit.event
    assert isinstance(doc, DocumentChunked)
    assert emit.topic == "chunks"
    assert emit.key == doc.document_id == "file:tribal:streams/wiring.py"
    assert doc.document_version == event.sha256
    assert (doc.source_type, doc.path, doc.language) == ("file", "streams/wiring.py", "python")
    assert doc.chunked_by == "python-ingester"
    assert [c.index for c in doc.chunks] == list(range(len(doc.chunks)))
    assert doc.chunks[0].chunk_id == f"file:tribal:streams/wiring.py@{event.sha256[:12]}#0"
    handle = next(c for c in doc.chunks if c.symbol == "handle" and c.parent_symbol == "Handler")
    assert handle.fully_qualified_name == "streams.wiring.Handler.handle"
    assert handle.language == "python"
    serde = EventSerde(FileSchemaRegistry(tmp_path))  # the new fields survive Avro
    assert serde.decode(serde.encode(doc, "tribal.chunks")) == doc


async def test_deleted_and_skipped_files_are_retracted() -> None:
    chunker = _chunker()
    [deleted] = await chunker(FileDeleted(repo="tribal", path="a.py"))
    [skipped] = await chunker(FileSkipped(repo="tribal", path="a.py", reason="binary"))
    for emit in (deleted, skipped):
        assert isinstance(emit.event, DocumentRetracted)
        assert emit.key == emit.event.document_id == "file:tribal:a.py"
    assert isinstance(skipped.event, DocumentRetracted)
    assert skipped.event.reason == "file skipped: binary"


async def test_a_renamed_file_retracts_its_old_document() -> None:
    retract, chunked = await _chunker()(changed("new/x.py", "def f():\n    pass\n", "old/x.py"))
    assert isinstance(retract.event, DocumentRetracted)
    assert retract.key == "file:tribal:old/x.py"
    assert isinstance(chunked.event, DocumentChunked)
    assert chunked.key == "file:tribal:new/x.py"


async def test_an_empty_file_has_no_chunks_and_a_fallback_is_recorded() -> None:
    [empty] = await _chunker()(changed("e.py", ""))
    assert isinstance(empty.event, DocumentChunked)
    assert empty.event.chunks == ()
    [broken] = await _chunker()(changed("b.py", "def ok(:\n" + "= = if ;; class\n" * 50))
    assert isinstance(broken.event, DocumentChunked)
    assert broken.event.chunked_by == "text-ingester"
    assert "python-ingester (PARSE_ERROR" in broken.event.metadata["declined_by"]
