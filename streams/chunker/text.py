"""Paragraph-packing text chunker for prose (help-desk articles, plain text)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from events.chunks import Chunk

MAX_CHUNK_CHARS = 1_200


def content_version(*parts: str) -> str:
    """sha256 over the parts that define a document version."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", errors="surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def _paragraphs(text: str) -> Iterable[tuple[int, int, str]]:
    """(first line, last line, text) of each blank-line separated paragraph, 1-based."""
    start: int | None = None
    lines: list[str] = []
    # Split on "\n" only, as editors and tree-sitter count lines (not on \x1e, \u2028...).
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if start is None:
                start = number
            lines.append(line)
        elif start is not None:
            yield start, number - 1, "\n".join(lines)
            start, lines = None, []
    if start is not None:
        yield start, start + len(lines) - 1, "\n".join(lines)


def _split_long(first: int, last: int, text: str, limit: int) -> Iterable[tuple[int, int, str]]:
    if len(text) <= limit:
        yield first, last, text
        return
    for offset in range(0, len(text), limit):
        yield first, last, text[offset : offset + limit]


def pack_paragraphs(text: str, limit: int = MAX_CHUNK_CHARS) -> list[tuple[int, int, str]]:
    """``(first line, last line, text)`` of paragraphs packed up to ``limit`` characters."""
    pieces = [p for para in _paragraphs(text) for p in _split_long(*para, limit)]
    packed: list[tuple[int, int, str]] = []
    buf: list[tuple[int, int, str]] = []
    size = 0
    for piece in pieces:
        if buf and size + len(piece[2]) + 2 > limit:
            packed.append((buf[0][0], buf[-1][1], "\n\n".join(p[2] for p in buf)))
            buf, size = [], 0
        buf.append(piece)
        size += len(piece[2]) + 2
    if buf:
        packed.append((buf[0][0], buf[-1][1], "\n\n".join(p[2] for p in buf)))
    return packed


def chunk_text(
    document_id: str, version: str, text: str, limit: int = MAX_CHUNK_CHARS
) -> tuple[Chunk, ...]:
    """Pack paragraphs into chunks of at most ``limit`` characters, keeping line ranges."""
    return tuple(
        Chunk(
            chunk_id=f"{document_id}@{version[:12]}#{index}",
            index=index,
            text=body,
            start_line=first,
            end_line=last,
            kind="section",
        )
        for index, (first, last, body) in enumerate(pack_paragraphs(text, limit))
    )
