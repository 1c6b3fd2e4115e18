"""The text ingester (blank-line paragraphs) and the fallback that never declines."""

from __future__ import annotations

from collections.abc import Sequence

from streams.chunker.pieces import (
    CODE_BUDGET,
    MAX_PIECES,
    TEXT_BUDGET,
    Piece,
    SourceDocument,
    headed_windows,
)
from streams.chunker.text import pack_paragraphs

# Prose and data formats: chunked as text before any generic code ingester sees them.
TEXT_EXTENSIONS = (
    "txt", "text", "rst", "adoc", "tex", "log", "json", "jsonl", "yaml", "yml", "toml",
    "ini", "cfg", "conf", "xml", "csv", "tsv", "lock", "properties", "html", "htm", "css",
    "svg", "license", "readme", "avsc",
)  # fmt: skip


class TextIngester:
    """Blank-line separated paragraphs packed up to a size budget (seed: ``text-ingester``)."""

    agent_id = "text-ingester"
    priority = 50
    language: str | None = None

    def __init__(self, budget: int = TEXT_BUDGET) -> None:
        self.budget = budget
        self.capabilities: tuple[str, ...] = (
            "ingest:text",
            *(f"ingest:{e}" for e in TEXT_EXTENSIONS),
        )

    def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        packed = pack_paragraphs(doc.content, self.budget)
        return [
            Piece(text=f"{doc.path}\n{body}", kind="text", start_line=first, end_line=last)
            for first, last, body in packed[:MAX_PIECES]
        ]


class FallbackIngester:
    """The last resort: the whole file as one chunk, or as bounded windows when large."""

    agent_id = "fallback-ingester"
    capabilities: tuple[str, ...] = ("ingest:fallback",)
    priority = 99
    language: str | None = None

    def __init__(self, budget: int = CODE_BUDGET) -> None:
        self.budget = budget

    def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        if not doc.content.strip():
            return []
        lines = doc.content.split("\n")
        windows = headed_windows(doc.path, (), lines, 1, len(lines), self.budget)
        return [
            Piece(text=text, kind="text", start_line=first, end_line=last)
            for first, last, text in windows[:MAX_PIECES]
        ]
