"""Ingesters defined by agent files, run through the LLM provider port.

The model is asked for the seed's chunk JSON; only its line ranges and names are
trusted, the text of each chunk is cut from the file itself, so a model cannot put
words in the index that the file does not contain. With the ``local`` provider the
same task is answered by :func:`rule_chunks` from the agent file's ``chunking`` hints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from streams.chunker.agent_files import AgentDefinition
from streams.chunker.pieces import (
    CODE_BUDGET,
    MAX_PIECES,
    IngestError,
    Piece,
    SourceDocument,
    contextualize,
    line_windows,
)
from streams.llm.base import FENCE_RULE, LLMError, LLMProvider, StructuredRequest, fence

INGEST_TASK = "ingest_chunks"
_OUTPUT_RULES = (
    "Return every chunk with chunkType, symbolName, parentSymbol, fullyQualifiedName and "
    "1-based inclusive startLine/endLine as numbered in the file. Chunks must not overlap."
)


class ChunkDraft(BaseModel):
    """One chunk as the seed's JSON names it."""

    model_config = ConfigDict(populate_by_name=True)

    chunk_type: str = Field(default="function", alias="chunkType")
    symbol_name: str | None = Field(default=None, alias="symbolName")
    parent_symbol: str | None = Field(default=None, alias="parentSymbol")
    fully_qualified_name: str | None = Field(default=None, alias="fullyQualifiedName")
    start_line: int = Field(alias="startLine")
    end_line: int = Field(alias="endLine")
    metadata: dict[str, str] = Field(default_factory=dict)


class IngestedChunks(BaseModel):
    """The structured output of the ingest task."""

    chunks: list[ChunkDraft]


def _symbol(pattern: re.Pattern[str] | None, line: str) -> str | None:
    match = pattern.search(line) if pattern is not None else None
    if match is None:
        return None
    if "name" in match.re.groupindex:
        return match.group("name")
    return match.group(1) if match.re.groups else match.group(0)


def rule_chunks(context: dict[str, Any]) -> IngestedChunks:
    """The local provider's answer: a chunk starts at each line matching a boundary,
    takes the comment lines right above it, and runs to the next one."""
    lines = str(context["content"]).split("\n")
    hints = context["hints"]
    rules = [(re.compile(b["pattern"]), b["kind"]) for b in hints.get("boundaries", ())]
    symbol = re.compile(hints["symbol"]) if hints.get("symbol") else None
    comment = hints.get("comment") or None
    starts: list[tuple[int, str, str | None]] = []
    for i, line in enumerate(lines):
        kind = next((k for rx, k in rules if rx.search(line)), None)
        if kind is not None:
            starts.append((i, kind, _symbol(symbol, line)))
    drafts: list[ChunkDraft] = []
    floor = 0
    for n, (i, kind, name) in enumerate(starts):
        first = i
        while comment and first - 1 >= floor and lines[first - 1].lstrip().startswith(comment):
            first -= 1
        if n == 0 and any(line.strip() for line in lines[:first]):
            head = first
            while not lines[head - 1].strip():
                head -= 1
            drafts.append(ChunkDraft(chunk_type="text", start_line=1, end_line=head))
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        drafts.append(
            ChunkDraft(
                chunk_type=kind,
                symbol_name=name,
                fully_qualified_name=name,
                start_line=first + 1,
                end_line=end,
            )
        )
        floor = end
    return IngestedChunks(chunks=drafts)


class LlmIngester:
    """An agent file's ingester: one structured request per file."""

    def __init__(self, definition: AgentDefinition, provider: LLMProvider) -> None:
        self.definition = definition
        self.provider = provider
        # What the registry reads, as the agent file declares it.
        self.agent_id, self.priority = definition.agent_id, definition.priority
        self.capabilities = definition.capabilities
        self.language: str | None = None

    def request(self, doc: SourceDocument) -> StructuredRequest[IngestedChunks]:
        numbered = "\n".join(f"{n:>5}| {line}" for n, line in enumerate(doc.content.split("\n"), 1))
        hints = self.definition.chunking
        return StructuredRequest(
            task=INGEST_TASK,
            system=f"{self.definition.system_prompt}\n\n{_OUTPUT_RULES}\n{FENCE_RULE}",
            prompt=f"Extract semantic chunks from {doc.path}.\n\n{fence('file', numbered)}",
            output_type=IngestedChunks,
            context={"path": doc.path, "content": doc.content, "hints": hints.model_dump()},
            max_tokens=4096,
        )

    async def ingest(self, doc: SourceDocument) -> Sequence[Piece]:
        hints = self.definition.chunking
        if len(doc.content) > hints.max_chars:
            raise IngestError("TOO_LARGE", f"over this agent's {hints.max_chars:,} characters")
        try:
            result = await self.provider.structured(self.request(doc))
        except LLMError as exc:
            raise IngestError(exc.code, str(exc)) from exc
        lines = doc.content.split("\n")
        made_by = {"generated_by": result.generated_by, "model": result.model}
        pieces: list[Piece] = []
        for draft in sorted(result.value.chunks, key=lambda d: d.start_line):
            first = min(max(draft.start_line, 1), len(lines))
            last = min(max(draft.end_line, first), len(lines))
            parts = list(line_windows(lines, first, last, CODE_BUDGET))
            for n, (start, end, body) in enumerate(parts):
                if not body.strip() or len(pieces) >= MAX_PIECES:
                    continue
                part = {"part": f"{n + 1}/{len(parts)}"} if len(parts) > 1 else {}
                pieces.append(
                    Piece(
                        text=contextualize(hints.comment or "", doc.path, (), body),
                        kind=draft.chunk_type,
                        start_line=start,
                        end_line=end,
                        symbol=draft.symbol_name,
                        parent_symbol=draft.parent_symbol,
                        fully_qualified_name=draft.fully_qualified_name,
                        metadata={**draft.metadata, **made_by, **part},
                    )
                )
        return pieces
