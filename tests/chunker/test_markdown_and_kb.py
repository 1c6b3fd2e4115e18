"""Markdown sections by header path; help-desk articles by section with their metadata."""

from __future__ import annotations

from datetime import UTC, datetime

from events.chunks import DocumentChunked
from events.kb import KbArticleUpserted
from streams.chunker.kb import chunk_kb_article
from streams.chunker.markdown import MarkdownIngester, sections
from streams.chunker.pieces import SourceDocument

README = """\
Intro line before any header.

# Tribal

Live memory.

## Install

```bash
# not a header: inside a fence
pip install tribal
```

### Linux

Use the wheel.

Usage
-----

Run it.
"""


def test_sections_carry_their_header_path() -> None:
    got = [(s.path, s.start_line, s.end_line) for s in sections(README)]
    assert got == [
        ((), 1, 1),
        (("Tribal",), 3, 5),
        (("Tribal", "Install"), 7, 12),
        (("Tribal", "Install", "Linux"), 14, 16),
        (("Tribal", "Usage"), 18, 21),
    ]


def test_markdown_chunks_name_section_parent_and_path() -> None:
    pieces = MarkdownIngester().ingest(SourceDocument("docs/README.md", README))
    linux = next(p for p in pieces if p.symbol == "Linux")
    assert linux.kind == "section"
    assert linux.parent_symbol == "Install"
    assert linux.fully_qualified_name == "Tribal > Install > Linux"
    assert linux.metadata["header_path"] == "Tribal > Install > Linux"
    assert linux.text == "docs/README.md\nTribal > Install > Linux\n### Linux\n\nUse the wheel."


def test_a_long_section_is_split_into_bounded_parts() -> None:
    text = "# Big\n\n" + "\n".join(f"line {n} " + "x" * 80 for n in range(100))
    pieces = MarkdownIngester().ingest(SourceDocument("big.md", text))
    assert len(pieces) > 1
    assert all(p.symbol == "Big" for p in pieces)
    assert all(len(p.text) < 1_300 for p in pieces)


def _article(content: str) -> KbArticleUpserted:
    return KbArticleUpserted(
        article_id="kb-9",
        title="Reset the Apollo",
        url="https://help.example/kb-9",
        content=content,
        intent=("troubleshooting", "reset"),
        device=("apollo",),
        last_updated=datetime(2026, 2, 1, tzinfo=UTC),
    )


def test_help_desk_articles_are_chunked_by_section_with_article_metadata() -> None:
    content = (
        "Follow these steps when the device hangs.\n\nSoft reset\n\nHold the button for 5 "
        "seconds.\n\nFactory reset:\n\nHold both buttons for 30 seconds.\nAll data is lost."
    )
    [emit] = list(chunk_kb_article(_article(content)))
    doc = emit.event
    assert isinstance(doc, DocumentChunked)
    sections_ = [c.metadata["section"] for c in doc.chunks]
    assert sections_ == ["", "Soft reset", "Factory reset"]
    factory = doc.chunks[2]
    assert factory.text.startswith("Reset the Apollo\nFactory reset\n")
    assert factory.metadata["title"] == "Reset the Apollo"
    assert factory.metadata["url"] == "https://help.example/kb-9"
    assert factory.metadata["intent"] == "troubleshooting,reset"
    assert factory.metadata["device"] == "apollo"
    assert factory.metadata["last_updated"] == "2026-02-01T00:00:00+00:00"
    assert doc.metadata["intent"] == "troubleshooting,reset"
    assert doc.chunked_by == "kb-section-ingester"


def test_markdown_articles_use_their_headers_and_an_empty_one_keeps_its_title() -> None:
    [emit] = list(chunk_kb_article(_article("## Steps\n\n1. Unplug.\n2. Wait.")))
    assert isinstance(emit.event, DocumentChunked)
    assert [c.symbol for c in emit.event.chunks] == ["Steps"]
    [empty] = list(chunk_kb_article(_article("")))
    assert isinstance(empty.event, DocumentChunked)
    assert [c.text for c in empty.event.chunks] == ["Reset the Apollo"]
