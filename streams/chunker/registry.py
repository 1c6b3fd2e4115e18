"""The ingester registry: ``ingest:{ext}`` capabilities with priorities (seed 004).

Lower priority numbers are more specialised and are tried first. For a file the chain
is every ingester for ``ingest:{ext}``, then ``ingest:*`` (generic code), then
``ingest:text``, then the fallback that keeps the whole file. An ingester that raises,
or returns nothing for non-blank input, hands the file to the next one; the attempts
are recorded so the document says why it was not chunked by its first choice.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from streams.chunker.pieces import IngestError, Piece, SourceDocument

log = logging.getLogger(__name__)

ANY = "ingest:*"
TEXT = "ingest:text"


class Ingester(Protocol):
    """Turns one document into semantic chunks; may be ``async`` (LLM-backed ingesters)."""

    agent_id: str
    capabilities: tuple[str, ...]
    priority: int
    language: str | None
    """The language its chunks are in, or ``None`` to keep the document's own."""

    def ingest(self, doc: SourceDocument) -> Sequence[Piece] | Awaitable[Sequence[Piece]]:
        """The chunks of ``doc``, or :class:`IngestError` when it cannot handle it."""
        ...


@dataclass(frozen=True)
class Ingestion:
    """The pieces of one document and which ingester produced them."""

    pieces: tuple[Piece, ...]
    agent_id: str
    language: str | None
    attempts: tuple[tuple[str, str], ...] = ()
    """``(agent id, reason)`` for every ingester that declined before ``agent_id``."""


class IngesterRegistry:
    """Ingesters by capability; the ``fallback`` answers when every other one declines."""

    def __init__(self, fallback: Ingester) -> None:
        self.fallback = fallback
        self._by_capability: dict[str, list[Ingester]] = {}
        self._order: dict[str, int] = {}

    def register(self, ingester: Ingester) -> None:
        """Add ``ingester`` under each of its capabilities (a later one with the same
        agent id replaces the earlier, so reloading an agent file is idempotent)."""
        self.unregister(ingester.agent_id)
        self._order[ingester.agent_id] = len(self._order)
        for capability in ingester.capabilities:
            self._by_capability.setdefault(capability.lower(), []).append(ingester)

    def unregister(self, agent_id: str) -> None:
        for ingesters in self._by_capability.values():
            ingesters[:] = [i for i in ingesters if i.agent_id != agent_id]

    def candidates(self, capability: str) -> list[Ingester]:
        """Ingesters for ``capability``, best (lowest priority, then first registered) first."""
        found = self._by_capability.get(capability.lower(), [])
        return sorted(found, key=lambda i: (i.priority, self._order.get(i.agent_id, 0)))

    def best_for(self, capability: str) -> Ingester | None:
        """The seed's ``GetBestForCapability``."""
        found = self.candidates(capability)
        return found[0] if found else None

    def chain_for(self, doc: SourceDocument) -> list[Ingester]:
        """Every ingester to try for ``doc``, in order, each once, the fallback last."""
        chain: list[Ingester] = []
        seen: set[str] = set()
        for capability in (f"ingest:{doc.extension}", ANY, TEXT):
            for ingester in self.candidates(capability):
                if ingester.agent_id not in seen:
                    seen.add(ingester.agent_id)
                    chain.append(ingester)
        if self.fallback.agent_id not in seen:
            chain.append(self.fallback)
        return chain

    async def ingest(self, doc: SourceDocument) -> Ingestion:
        """Chunks from the first ingester in the chain that succeeds."""
        attempts: list[tuple[str, str]] = []
        chain = self.chain_for(doc)
        for ingester in chain:
            try:
                out = ingester.ingest(doc)
                pieces = tuple(await out if inspect.isawaitable(out) else out)
            except IngestError as exc:
                attempts.append((ingester.agent_id, f"{exc.code}: {exc}"))
                continue
            except Exception as exc:  # a bug in one ingester must not lose the file
                if ingester is chain[-1]:
                    raise
                log.warning("ingester %s failed on %s", ingester.agent_id, doc.path, exc_info=True)
                attempts.append((ingester.agent_id, f"{type(exc).__name__}: {exc}"[:300]))
                continue
            if not pieces and doc.content.strip() and ingester is not chain[-1]:
                attempts.append((ingester.agent_id, "NO_CHUNKS: found nothing to chunk"))
                continue
            language = ingester.language or doc.language
            return Ingestion(pieces, ingester.agent_id, language, tuple(attempts))
        raise IngestError("NO_INGESTER", f"no ingester could chunk {doc.path}")
