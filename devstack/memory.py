"""The memory processors wired in-process (no broker), the scripted 200-turn support
conversation and a tiny deterministic embedder: for the memory tests and benchmark."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from uuid import NAMESPACE_URL, uuid5

from events.base import Event
from events.memory import EpisodeRecorded, SummaryCreated, TurnRecorded
from streams.memory.agents import local_provider
from streams.memory.config import MemoryIngestionConfig
from streams.memory.episoder import Episoder
from streams.memory.extraction import EntityExtractor
from streams.memory.lanes import ExtractorLane, NameEmbedder, SummarizerLane
from streams.memory.summaries import SummaryFold
from streams.memory.summarizer import ConversationSummarizer

DATA = Path(__file__).parent / "data" / "support_conversation.jsonl"
GAZETTEER = {
    "Apollo Router": "product",
    "Zephyr Hub": "product",
    "Premium plan": "plan",
}


class HashEmbedder:
    """Deterministic character-trigram vectors: similar spellings, similar vectors."""

    name = "hash-trigrams"
    dims = 64

    def encode(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            v = [0.0] * self.dims
            padded = f"  {text.casefold()} "
            for i in range(len(padded) - 2):
                h = hashlib.blake2s(padded[i : i + 3].encode(), digest_size=4).digest()
                v[int.from_bytes(h, "big") % self.dims] += 1.0
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v])
        return out


def conversation(group_id: str, limit: int | None = None) -> list[TurnRecorded]:
    """The scripted 200-turn support conversation as turns of ``group_id``."""
    turns = []
    for line in DATA.read_text().splitlines()[:limit]:
        row = json.loads(line)
        turns.append(
            TurnRecorded(
                event_id=uuid5(NAMESPACE_URL, f"{group_id}/{row['n']}"),
                occurred_at=datetime.fromisoformat(row["occurred_at"]),
                group_id=group_id,
                user_message=row["user_message"],
                agent_response=row["agent_response"],
                metadata=row["metadata"],
            )
        )
    return turns


def config(**extraction: object) -> MemoryIngestionConfig:
    cfg = MemoryIngestionConfig()
    return cfg.model_copy(
        update={
            "entity_extraction": cfg.entity_extraction.model_copy(
                update={"gazetteer": GAZETTEER, **extraction}
            )
        }
    )


@dataclass
class Memory:
    """The three memory processors wired in-process (no broker)."""

    episoder: Episoder
    extractor: ExtractorLane
    summarizer: SummarizerLane

    async def run(
        self, turns: Sequence[Event]
    ) -> tuple[list[EpisodeRecorded], list[Event], list[SummaryCreated]]:
        episodes = [e.event for e in await self.episoder(list(turns))]
        assert all(isinstance(e, EpisodeRecorded) for e in episodes)
        eps = [e for e in episodes if isinstance(e, EpisodeRecorded)]
        facts = [e.event for e in await self.extractor.process(eps)]
        summaries = [e.event for e in await self.summarizer.process(eps)]
        return eps, facts, [s for s in summaries if isinstance(s, SummaryCreated)]


def memory(cfg: MemoryIngestionConfig | None = None) -> Memory:
    cfg = cfg or config()
    provider = local_provider()
    model = HashEmbedder()
    extractor = ExtractorLane(
        EntityExtractor(provider, cfg.entity_extraction), names=NameEmbedder(model)
    )
    extractor.fold.dedup.config = cfg.deduplication
    summarizer = SummarizerLane(SummaryFold(ConversationSummarizer(provider, cfg.summarization)))
    return Memory(Episoder(model), extractor, summarizer)
