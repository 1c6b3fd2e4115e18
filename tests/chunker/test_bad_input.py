"""Hostile input: deep nesting, minified megabytes, undecodable bytes. Never a crash."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events.chunks import DocumentChunked
from streams.chunker.defaults import default_registry
from streams.chunker.files import MAX_DOCUMENT_BYTES, FileChunker
from streams.chunker.pieces import CODE_BUDGET, MAX_PIECES, SourceDocument
from streams.chunker.registry import IngesterRegistry
from tests.chunker.test_file_chunker import changed

BOUND = CODE_BUDGET + 400  # a chunk's code plus its path/signature header


@pytest.fixture(scope="module")
def registry() -> IngesterRegistry:
    return default_registry(Path("/nonexistent"), {"TRIBAL_LLM_PROVIDER": "local"})


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("deep_parens.py", "x = " + "(" * 5_000 + "1" + ")" * 5_000 + "\n"),
        (
            "deep_classes.py",
            "".join(" " * n + f"class C{n}:\n" for n in range(300)) + " " * 300 + "pass\n",
        ),
        (
            "deep_ifs.py",
            "def f():\n"
            + "".join(" " * (n + 1) + "if x:\n" for n in range(900))
            + " " * 901
            + "pass\n",
        ),
        ("deep.js", "const a = " + "[" * 20_000 + "]" * 20_000 + ";\n"),
        ("deep.c", "int f() { " + "{" * 5_000 + "}" * 5_000 + " }\n"),
        ("deep_ns.cpp", "namespace a { " * 2_000 + "} " * 2_000 + "\n"),
    ],
)
async def test_deep_nesting_is_chunked_without_recursion_and_stays_bounded(
    registry: IngesterRegistry, path: str, source: str
) -> None:
    started = time.perf_counter()
    result = await registry.ingest(SourceDocument(path, source))
    assert time.perf_counter() - started < 10
    assert result.pieces
    assert len(result.pieces) <= MAX_PIECES
    assert all(len(p.text) <= BOUND for p in result.pieces)


async def test_a_minified_ten_megabyte_line_falls_back_to_bounded_text_chunks(
    registry: IngesterRegistry,
) -> None:
    minified = "var a=function(b){return b+1};" * 350_000  # ~10.5 MB, one line
    started = time.perf_counter()
    result = await registry.ingest(SourceDocument("dist/app.min.js", minified))
    assert time.perf_counter() - started < 20
    assert result.agent_id == "text-ingester"
    assert result.attempts[0][0] == "javascript-ingester"
    assert result.attempts[0][1].startswith("TOO_LARGE")
    assert len(result.pieces) <= MAX_PIECES
    assert all(len(p.text) <= BOUND for p in result.pieces)

    emits = await FileChunker(registry)(changed("dist/app.min.js", minified))
    doc = emits[0].event
    assert isinstance(doc, DocumentChunked)
    assert sum(len(c.text) for c in doc.chunks) <= MAX_DOCUMENT_BYTES
    assert doc.metadata["truncated"] == "true"


async def test_a_minified_bundle_under_the_size_cap_is_not_parsed_either(
    registry: IngesterRegistry,
) -> None:
    minified = "var a=function(b){return b+1};" * 5_000
    result = await registry.ingest(SourceDocument("dist/app.min.js", minified))
    assert result.agent_id == "text-ingester"
    assert ("javascript-ingester", "MINIFIED: a line is over 5,000 characters") in result.attempts


async def test_undecodable_bytes_and_nul_characters_do_not_crash(
    registry: IngesterRegistry,
) -> None:
    raw = b"def f():\n    return '\xff\xfe caf\xc3\xa9'\n"
    content = raw.decode("utf-8", errors="surrogateescape")
    [emit] = await FileChunker(registry)(changed("weird.py", content))
    doc = emit.event
    assert isinstance(doc, DocumentChunked)
    assert doc.chunks[0].symbol == "f"
    assert "\ufffd\ufffd café" in doc.chunks[0].text
    for text in ("\ud800 lone surrogate", "nul \x00 inside\n" * 3):
        [emit] = await FileChunker(registry)(changed("weird.py", text))
        assert isinstance(emit.event, DocumentChunked)
        assert emit.event.chunks


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=3_000),
    ext=st.sampled_from(["py", "js", "ts", "go", "rs", "java", "cs", "c", "cpp", "rb", "md", "x"]),
)
async def test_arbitrary_text_in_any_language_never_crashes(text: str, ext: str) -> None:
    registry = default_registry(Path("/nonexistent"), {"TRIBAL_LLM_PROVIDER": "local"})
    result = await registry.ingest(SourceDocument(f"f.{ext}", text))
    lines = text.split("\n")
    for p in result.pieces:
        assert 1 <= p.start_line <= p.end_line <= max(len(lines), 1)
        assert len(p.text) <= BOUND
