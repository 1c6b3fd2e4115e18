"""The prose chunker: paragraphs packed into bounded chunks with line ranges."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streams.chunker.text import chunk_text, content_version


def test_short_text_is_one_chunk_with_its_line_range() -> None:
    [chunk] = chunk_text("doc", "v" * 64, "Title\n\nFirst para.\nstill first.\n\nSecond.")
    assert (chunk.start_line, chunk.end_line) == (1, 6)
    assert chunk.chunk_id == "doc@vvvvvvvvvvvv#0"


def test_long_text_is_split_under_the_limit_and_keeps_order() -> None:
    text = "\n\n".join(f"paragraph {i} " + "x" * 300 for i in range(20))
    chunks = chunk_text("doc", "a" * 64, text, limit=1000)
    assert len(chunks) > 1
    assert all(len(c.text) <= 1000 for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert "paragraph 0 " in chunks[0].text
    assert "paragraph 19 " in chunks[-1].text


def test_version_changes_when_content_changes() -> None:
    assert content_version("t", "a") != content_version("t", "b")
    assert content_version("ta", "") != content_version("t", "a")


@given(st.text(max_size=5000))
def test_no_text_is_lost_and_no_chunk_exceeds_the_limit(text: str) -> None:
    chunks = chunk_text("doc", "b" * 64, text, limit=500)
    assert all(len(c.text) <= 500 for c in chunks)
    kept = "".join(c.text for c in chunks)
    assert "".join(kept.split()) == "".join(text.split())
