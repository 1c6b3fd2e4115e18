"""The ``ingest:{ext}`` registry: priorities and the fallback chain."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from streams.chunker.defaults import default_registry
from streams.chunker.pieces import IngestError, Piece, SourceDocument
from streams.chunker.plain import FallbackIngester, TextIngester
from streams.chunker.registry import IngesterRegistry


class Fake:
    language: str | None = None

    def __init__(self, agent_id: str, capabilities: tuple[str, ...], priority: int) -> None:
        self.agent_id, self.capabilities, self.priority = agent_id, capabilities, priority
        self.fail: Exception | None = None
        self.calls = 0

    def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return [Piece(text=self.agent_id, kind="text", start_line=1, end_line=1)]


def _registry(*fakes: Fake) -> IngesterRegistry:
    registry = IngesterRegistry(FallbackIngester())
    registry.register(TextIngester())
    for fake in fakes:
        registry.register(fake)
    return registry


def test_lower_priority_number_wins_for_a_capability() -> None:
    general, special = Fake("general", ("ingest:py",), 50), Fake("special", ("ingest:py",), 10)
    registry = _registry(general, special)
    assert registry.best_for("ingest:py") is special
    assert registry.best_for("ingest:rb") is None


async def test_the_chain_is_ext_then_star_then_text_then_fallback() -> None:
    ext, star = Fake("ext", ("ingest:lisp",), 80), Fake("star", ("ingest:*",), 60)
    registry = _registry(star, ext)
    doc = SourceDocument("a/b.lisp", "(defun f ())")
    assert [i.agent_id for i in registry.chain_for(doc)] == [
        "ext",
        "star",
        "text-ingester",
        "fallback-ingester",
    ]
    assert (await registry.ingest(doc)).agent_id == "ext"
    ext.fail = IngestError("PARSE_ERROR", "nope")
    result = await registry.ingest(doc)
    assert result.agent_id == "star"
    assert result.attempts == (("ext", "PARSE_ERROR: nope"),)
    star.fail = RuntimeError("bug in an ingester")
    result = await registry.ingest(doc)
    assert result.agent_id == "text-ingester"
    assert [a for a, _ in result.attempts] == ["ext", "star"]


async def test_an_ingester_that_finds_nothing_passes_the_file_on() -> None:
    class Empty(Fake):
        def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
            return []

    registry = _registry(Empty("empty", ("ingest:x",), 1))
    result = await registry.ingest(SourceDocument("f.x", "some words"))
    assert result.agent_id == "text-ingester"
    assert result.attempts[0][1].startswith("NO_CHUNKS")


async def test_when_everything_declines_the_fallback_keeps_the_whole_file() -> None:
    registry = IngesterRegistry(FallbackIngester())
    result = await registry.ingest(SourceDocument("x.weird", "alpha\n\nbeta"))
    assert result.agent_id == "fallback-ingester"
    [piece] = result.pieces
    assert (piece.start_line, piece.end_line) == (1, 3)


async def test_python_that_does_not_parse_falls_down_to_text() -> None:
    registry = default_registry(Path("/nonexistent"))
    broken = "def ok():\n    return 1\n" + "= = if while ;; class\n" * 100
    result = await registry.ingest(SourceDocument("bad.py", broken))
    assert result.agent_id == "text-ingester"
    assert result.attempts[0][0] == "python-ingester"
    assert "PARSE_ERROR" in result.attempts[0][1]


async def test_default_registry_routes_by_extension() -> None:
    registry = default_registry(Path("/nonexistent"))
    cases = {
        "a.py": "python-ingester",
        "a.tsx": "tsx-ingester",
        "a.h": "c-ingester",
        "README.md": "markdown-ingester",
        "data.json": "text-ingester",
        "notes.unknown": "text-ingester",
    }
    for path, agent in cases.items():
        content = "# Title\n\nint x;\n" if path.endswith((".md", ".h")) else "x = 1\n"
        if path.endswith(".tsx"):
            content = "export const x = 1;\n"
        assert (await registry.ingest(SourceDocument(path, content))).agent_id == agent, path


async def test_a_cpp_header_the_c_grammar_cannot_read_goes_to_the_cpp_ingester() -> None:
    registry = default_registry(Path("/nonexistent"))
    header = "namespace geo {\ntemplate <typename T>\nclass Box : public Base<T> {\n public:\n"
    header += "  virtual ~Box() override = default;\n  T get() const noexcept { return v_; }\n"
    header += " private:\n  T v_;\n};\n}  // namespace geo\n"
    result = await registry.ingest(SourceDocument("box.h", header))
    assert result.agent_id == "cpp-ingester"
    assert "geo::Box::get" in {p.fully_qualified_name for p in result.pieces}
