"""Markdown (and header-structured prose): one chunk per section, keyed by its header path."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from streams.chunker.pieces import MAX_PIECES, TEXT_BUDGET, Piece, SourceDocument, headed_windows

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_PLAIN_HEADER = re.compile(r"^[A-Z0-9][^.!?;,]{0,78}[:?]?$")
HEADER_SEP = " > "


@dataclass(frozen=True, slots=True)
class Section:
    """Lines ``start_line..end_line`` (1-based) under the headers ``path``."""

    path: tuple[str, ...]
    level: int
    start_line: int
    end_line: int


def _is_plain_header(lines: list[str], i: int) -> bool:
    """A short standalone line (blank before and after), as help-desk exports write them."""
    line = lines[i].strip()
    before = i == 0 or not lines[i - 1].strip()
    after = i + 1 < len(lines) and not lines[i + 1].strip()
    return bool(before and after and _PLAIN_HEADER.match(line)) and len(line.split()) <= 10


def _headers(lines: list[str], plain: bool) -> list[tuple[int, int, int, str]]:
    """``(first line index, body line index, level, title)`` of each header."""
    found: list[tuple[int, int, int, str]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        atx = _ATX.match(line)
        if atx:
            found.append((i, i + 1, len(atx.group(1)), atx.group(2).strip() or "(untitled)"))
        elif (
            line.strip()
            and i + 1 < len(lines)
            and _SETEXT.match(lines[i + 1])
            and (i == 0 or not lines[i - 1].strip())
            and not line.lstrip().startswith(("-", "*", "|", ">"))
        ):
            level = 1 if lines[i + 1].strip().startswith("=") else 2
            found.append((i, i + 2, level, line.strip()))
        elif plain and _is_plain_header(lines, i):
            found.append((i, i + 1, 1, line.strip().rstrip(":")))
    # a setext underline is not itself a header
    return [h for n, h in enumerate(found) if n == 0 or h[0] >= found[n - 1][1]]


def sections(text: str, plain_headers: bool = False) -> list[Section]:
    """The sections of ``text`` with a non-blank body, in order.

    ``plain_headers`` also treats short standalone lines as headers (level 1).
    """
    lines = text.split("\n")
    found = _headers(lines, plain_headers)
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    bounds = [(0, 0, 0, ""), *found]  # the preamble before the first header
    for n, (first, body, level, title) in enumerate(bounds):
        end = found[n][0] if n < len(found) else len(lines)
        if n:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
        if not any(line.strip() for line in lines[body:end]):
            continue
        while end > first and not lines[end - 1].strip():
            end -= 1
        out.append(Section(tuple(t for _, t in stack), level, first + 1, end))
    return out


def section_pieces(
    path: str, text: str, plain_headers: bool = False, budget: int = TEXT_BUDGET
) -> list[Piece]:
    """Pieces for each section, split by lines when a section exceeds ``budget``."""
    lines = text.split("\n")
    pieces: list[Piece] = []
    for sec in sections(text, plain_headers):
        header_path = HEADER_SEP.join(sec.path)
        context = (header_path,) if header_path else ()
        meta = {"header_path": header_path, "level": str(sec.level)} if sec.path else {}
        parts = headed_windows(path, context, lines, sec.start_line, sec.end_line, budget)
        for n, (first, last, text) in enumerate(parts):
            if len(pieces) >= MAX_PIECES:
                return pieces
            pieces.append(
                Piece(
                    text=text,
                    kind="section",
                    start_line=first,
                    end_line=last,
                    symbol=sec.path[-1] if sec.path else None,
                    parent_symbol=sec.path[-2] if len(sec.path) > 1 else None,
                    fully_qualified_name=header_path or None,
                    metadata={**meta, "part": f"{n + 1}/{len(parts)}"} if len(parts) > 1 else meta,
                )
            )
    return pieces


class MarkdownIngester:
    """Sections by header path (ATX and setext headers; fenced code is not a header)."""

    agent_id = "markdown-ingester"
    capabilities: tuple[str, ...] = ("ingest:md", "ingest:markdown", "ingest:mdx")
    priority = 20
    language: str | None = "markdown"

    def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        return section_pieces(doc.path, doc.content)
