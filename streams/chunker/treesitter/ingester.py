"""One ingester per tree-sitter grammar (seed: ``python-ingester`` and friends)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import tree_sitter

from streams.chunker.pieces import (
    CODE_BUDGET,
    MAX_LINE_CHARS,
    IngestError,
    Piece,
    SourceDocument,
)
from streams.chunker.treesitter.languages import SPECS, LanguageSpec
from streams.chunker.treesitter.walker import Walker

MAX_SOURCE_CHARS = 2_000_000
"""Larger files are left to the text ingester: parsing them is not worth the time."""
MAX_ERROR_SHARE = 0.1
"""More than this share of a file in syntax errors (or more than a few errors per hundred
lines) means the grammar does not fit it: a few are tolerated, as tree-sitter recovers."""
_LONG_LINE = re.compile(rf"[^\n]{{{MAX_LINE_CHARS + 1}}}")


class TreeSitterIngester:
    """Definitions as chunks with symbols, parents, qualified names and line ranges."""

    def __init__(self, spec: LanguageSpec, budget: int = CODE_BUDGET) -> None:
        self.spec = spec
        self.budget = budget
        self.agent_id = spec.agent_id
        self.capabilities = tuple(f"ingest:{ext}" for ext in spec.extensions)
        self.priority = spec.priority
        self.language: str | None = "typescript" if spec.name == "tsx" else spec.name
        self._parser: tree_sitter.Parser | None = None

    def _parse(self, src: bytes) -> tree_sitter.Tree:
        if self._parser is None:
            self._parser = tree_sitter.Parser(self.spec.grammar())
        return self._parser.parse(src)

    def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        content = doc.content
        if len(content) > MAX_SOURCE_CHARS:
            raise IngestError("TOO_LARGE", f"{len(content):,} characters is over the parse cap")
        if _LONG_LINE.search(content):
            raise IngestError("MINIFIED", f"a line is over {MAX_LINE_CHARS:,} characters")
        # Lone surrogates (undecodable bytes kept by the source) cannot be UTF-8.
        src = content.encode("utf-8", errors="replace")
        root = self._parse(src).root_node
        walker = Walker(self.spec, doc.path, src, self.budget)
        pieces = walker.run(root)
        if root.has_error:
            error_bytes, problems = syntax_errors(root)
            lines = content.count("\n") + 1
            if error_bytes > MAX_ERROR_SHARE * len(src) or problems > 10 + lines // 20:
                raise IngestError(
                    "PARSE_ERROR",
                    f"{problems} syntax errors over {error_bytes:,} of {len(src):,} bytes "
                    f"are too many for the {self.spec.name} grammar",
                )
        return pieces


def syntax_errors(root: tree_sitter.Node) -> tuple[int, int]:
    """Bytes inside ``ERROR`` nodes and the count of ``ERROR``/``MISSING`` nodes.

    Only subtrees that contain an error are entered, so a clean file costs nothing.
    """
    error_bytes = problems = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            error_bytes += node.end_byte - node.start_byte
            problems += 1
            continue
        if node.is_missing:
            problems += 1
        if node.has_error:
            stack.extend(node.children)
    return error_bytes, problems


def treesitter_ingesters(budget: int = CODE_BUDGET) -> list[TreeSitterIngester]:
    """An ingester for every bundled grammar; grammars load on first use."""
    return [TreeSitterIngester(spec, budget) for spec in SPECS]
