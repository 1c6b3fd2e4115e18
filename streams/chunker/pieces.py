"""What an ingester returns (seed 004's semantic chunk) and the limits every ingester keeps.

A :class:`Piece` is a chunk before it has an id: the file chunker numbers the pieces
of one document version and turns them into :class:`events.chunks.Chunk`. Its
``text`` is what gets embedded and searched, so it starts with the file path and the
enclosing signatures; ``start_line``/``end_line`` stay those of the code itself.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

CODE_BUDGET = 2_000
"""Characters of code per chunk before cAST splits a node by its children."""
TEXT_BUDGET = 1_200
"""Characters of prose per chunk (see :mod:`streams.chunker.text`)."""
MAX_PIECES = 2_000
"""Chunks per document; beyond it the rest of a file is dropped and the document says so."""
MAX_LINE_CHARS = 5_000
"""A longer line marks minified or generated code: structure-aware ingesters decline it."""


class IngestError(Exception):
    """An ingester cannot handle this input; the registry tries the next in the chain."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One file (or article) to ingest: the seed's ``filePath``, ``content``, ``language``."""

    path: str
    content: str
    language: str | None = None

    @property
    def extension(self) -> str:
        """``py`` for ``a/b.py``; the lower-cased name when there is no extension."""
        name = posixpath.basename(self.path).lower()
        stem, dot, ext = name.rpartition(".")
        return ext if dot and stem else name


@dataclass(frozen=True, slots=True)
class Piece:
    """One semantic chunk: ``kind`` is the seed's ``chunkType``, ``symbol`` its ``symbolName``."""

    text: str
    kind: str
    start_line: int
    end_line: int
    symbol: str | None = None
    parent_symbol: str | None = None
    fully_qualified_name: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)


def contextualize(marker: str, path: str, context: tuple[str, ...], body: str) -> str:
    """``body`` under a header naming the file and the enclosing signatures.

    ``marker`` is the language's line comment (``#``, ``//``) so code chunks still read
    as code; prose uses ``""``.
    """
    lead = f"{marker} " if marker else ""
    head = [f"{lead}{path}", *(f"{lead}{c}" for c in context)]
    return "\n".join(head) + "\n" + body


def line_windows(
    lines: list[str], first: int, last: int, budget: int
) -> Iterator[tuple[int, int, str]]:
    """Lines ``first..last`` (1-based) packed into texts of at most ``budget`` characters.

    A single line longer than ``budget`` is cut into ``budget``-sized windows that all
    carry its line number, so no output is ever larger than the budget.
    """
    start, size = first, 0
    buf: list[str] = []
    for number in range(first, last + 1):
        line = lines[number - 1]
        if len(line) > budget:
            if buf:
                yield start, number - 1, "\n".join(buf)
                buf, size = [], 0
            for offset in range(0, len(line), budget):
                yield number, number, line[offset : offset + budget]
            start = number + 1
            continue
        if buf and size + len(line) + 1 > budget:
            yield start, number - 1, "\n".join(buf)
            buf, size, start = [], 0, number
        if not buf:
            start = number
        buf.append(line)
        size += len(line) + 1
    if buf:
        yield start, last, "\n".join(buf)


def headed_windows(
    path: str, context: tuple[str, ...], lines: list[str], first: int, last: int, budget: int
) -> list[tuple[int, int, str]]:
    """Prose lines ``first..last`` in windows of at most ``budget`` characters
    (:func:`line_windows`), blank ones left out, each under a header naming ``path`` and
    ``context`` (:func:`contextualize`)."""
    return [
        (start, end, contextualize("", path, context, body))
        for start, end, body in line_windows(lines, first, last, budget)
        if body.strip()
    ]
