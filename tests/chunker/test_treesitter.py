"""tree-sitter chunks: per-language definitions, and Python checked against ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from streams.chunker.pieces import CODE_BUDGET, Piece, SourceDocument
from streams.chunker.treesitter import SPECS, TreeSitterIngester
from tests.chunker.samples import SAMPLES

REPO = Path(__file__).resolve().parents[2]
INGESTERS = {spec.name: TreeSitterIngester(spec) for spec in SPECS}
DEFINITION_KINDS = {"class", "function", "method"}


def _chunks(language: str, path: str, content: str) -> list[Piece]:
    return list(INGESTERS[language].ingest(SourceDocument(path, content)))


def _ast_definitions(source: str, module: str) -> dict[str, tuple[str, int, int]]:
    """fqn → (kind, first line incl. decorators, last line) of every def not inside a function."""
    found: dict[str, tuple[str, int, int]] = {}
    stack: list[tuple[ast.AST, tuple[str, ...], bool]] = [(ast.parse(source), (module,), False)]
    while stack:
        node, names, in_class = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                assert child.end_lineno is not None
                fqn = ".".join((*names, child.name))
                if isinstance(child, ast.ClassDef):
                    found[fqn] = ("class", first, child.end_lineno)
                    stack.append((child, (*names, child.name), True))
                else:
                    found[fqn] = ("method" if in_class else "function", first, child.end_lineno)
            elif not isinstance(child, ast.expr):
                stack.append((child, names, in_class))  # if/try blocks at module level
    return found


@pytest.mark.parametrize(
    "path",
    [
        "streams/wiring.py",
        "events/serde.py",
        "streams/app.py",
        "streams/chunker/treesitter/walker.py",
        "streams/chunker/registry.py",
        "sources/files.py",
    ],
)
def test_python_chunks_match_ast_definitions_by_fqn_and_line_range(path: str) -> None:
    source = (REPO / path).read_text(encoding="utf-8")
    module = path.removesuffix(".py").replace("/", ".")
    expected = _ast_definitions(source, module)
    got: dict[str, tuple[str, int, int]] = {}
    for c in _chunks("python", path, source):
        if c.kind in DEFINITION_KINDS and c.fully_qualified_name:
            kind, first, last = got.get(c.fully_qualified_name, (c.kind, c.start_line, 0))
            got[c.fully_qualified_name] = (kind, min(first, c.start_line), max(last, c.end_line))
    assert got == expected


def test_a_method_chunk_names_its_class_and_reads_with_its_context() -> None:
    source = (REPO / "streams/wiring.py").read_text(encoding="utf-8")
    [handle] = [
        c
        for c in _chunks("python", "streams/wiring.py", source)
        if c.fully_qualified_name == "streams.wiring.Handler.handle"
    ]
    assert (handle.kind, handle.symbol, handle.parent_symbol) == ("method", "handle", "Handler")
    head = handle.text.split("\n")
    assert head[:2] == ["# streams/wiring.py", "# class Handler:"]
    code = "\n".join(source.split("\n")[handle.start_line - 1 : handle.end_line])
    assert handle.text.endswith(code)


def test_a_class_chunk_is_a_skeleton_with_member_bodies_elided() -> None:
    source = (REPO / "streams/wiring.py").read_text(encoding="utf-8")
    [handler] = [
        c
        for c in _chunks("python", "streams/wiring.py", source)
        if c.fully_qualified_name == "streams.wiring.Handler" and c.kind == "class"
    ]
    assert (
        "async def handle_batch(self, batch: Sequence[Incoming]) -> list[Record]:" in handler.text
    )
    assert "good.append" not in handler.text  # a method body


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_each_language_yields_its_class_and_function_chunks(language: str) -> None:
    path, source, expected = SAMPLES[language]
    chunks = _chunks(language, path, source)
    got = {(c.kind, c.fully_qualified_name) for c in chunks}
    assert expected <= got
    lines = source.split("\n")
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text.startswith(f"{INGESTERS[language].spec.marker} {path}")


def test_doc_comments_travel_with_their_definition() -> None:
    path, source, _ = SAMPLES["rust"]
    [circle] = [c for c in _chunks("rust", path, source) if c.kind == "struct"]
    assert circle.start_line == 1  # the /// line, then #[derive], then the struct
    assert "#[derive(Debug)]" in circle.text


def test_an_oversized_function_is_split_into_parts_within_the_budget() -> None:
    body = "".join(f"    value_{n} = compute({n}, 'some argument text here')\n" for n in range(300))
    source = f"def huge():\n{body}    return value_1\n"
    chunks = _chunks("python", "big.py", source)
    assert len(chunks) > 1
    assert {c.fully_qualified_name for c in chunks} == {"big.huge"}
    assert all(len(c.text) <= CODE_BUDGET + 200 for c in chunks)
    assert (chunks[0].start_line, chunks[-1].end_line) == (1, 302)
    covered = [n for c in chunks for n in range(c.start_line, c.end_line + 1)]
    assert covered == list(range(1, 303))  # contiguous, no overlap, nothing lost
    assert chunks[1].metadata["part"] == f"2/{len(chunks)}"
    assert "# def huge():" in chunks[1].text  # later parts name their function
