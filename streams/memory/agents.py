"""The memory agents.

* ``episoder``: ``memory.turns`` → ``memory.episodes`` (stateless, idempotent ids);
* ``extractor``: ``memory.episodes`` → ``memory.facts`` (per-group lane state);
* ``summarizer``: ``memory.episodes`` → ``memory.summaries`` (per-group lane state).

Configuration is seed 003's :class:`MemoryIngestionConfig`; ``TRIBAL_MEMORY_CONFIG``
may hold it as JSON (e.g. a gazetteer, or a smaller ``turns_per_summary``).
"""

from __future__ import annotations

import os

from events.memory import EpisodeRecorded, MemoryForgotten, SystemEventRecorded, TurnRecorded
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME
from streams.embedder.model import Embedder
from streams.embedder.select import embedder_for
from streams.llm import LLMProvider, LocalProvider, provider_from_settings
from streams.memory.config import MemoryIngestionConfig
from streams.memory.episoder import Episoder
from streams.memory.extraction import TASK as EXTRACT_TASK
from streams.memory.extraction import EntityExtractor
from streams.memory.lane import MemoryLane
from streams.memory.lanes import ExtractorLane, NameEmbedder, SummarizerLane
from streams.memory.rules import extract_local
from streams.memory.summaries import SummaryFold
from streams.memory.summarizer import META_TASK, WINDOW_TASK, ConversationSummarizer
from streams.memory.summarizer import summarize_local as _summarize
from streams.spec import AgentSpec

EPISODER_BATCH = (256, 0.02)
"""Up to 256 turns per model call during an import: sorted by length, they pad less."""
LANE_BATCH = (256, 0.1)
REMOTE_LANE_BATCH = (8, 0.1)
"""Episodes per lane batch when an LLM answers (each call takes seconds, and a
conversation's turns are read one after another): the batch commits, and the stage shows
progress, every few calls, not after hundreds (``/healthz`` would call it stuck)."""


def local_provider() -> LocalProvider:
    """The deterministic provider for every memory task."""
    return LocalProvider(
        {EXTRACT_TASK: extract_local, WINDOW_TASK: _summarize, META_TASK: _summarize},
        threaded=(EXTRACT_TASK,),
    )


def config_from_env(env: dict[str, str] | None = None) -> MemoryIngestionConfig:
    """:class:`MemoryIngestionConfig` from ``TRIBAL_MEMORY_CONFIG`` (JSON), else defaults."""
    raw = (os.environ if env is None else env).get("TRIBAL_MEMORY_CONFIG", "")
    return MemoryIngestionConfig.model_validate_json(raw) if raw else MemoryIngestionConfig()


def memory_agents(
    settings: TribalSettings,
    config: MemoryIngestionConfig | None = None,
    provider: LLMProvider | None = None,
    model: Embedder | None = None,
) -> list[AgentSpec]:
    """The three memory agents, sharing one embedding model and one LLM provider."""
    config = config or config_from_env()
    if not config.enabled:
        return []
    provider = provider or provider_from_settings(local_provider())
    model = model or embedder_for(settings.embedding_model, settings.embedding_backend)
    parts = TOPICS_BY_NAME["memory.episodes"].partition_count(settings)
    specs = [
        AgentSpec(
            name="episoder", source="memory.turns",
            processor=Episoder(model, config.embedding_enabled, episode_partitions=parts),
            accepts=(TurnRecorded, SystemEventRecorded, MemoryForgotten), batch=EPISODER_BATCH,
        )
    ]  # fmt: skip
    lanes: list[tuple[str, MemoryLane]] = []
    if config.entity_extraction_enabled:
        extractor = EntityExtractor(provider, config.entity_extraction)
        dedup_model = model if config.deduplication.embedding_match_enabled else None
        lane = ExtractorLane(extractor, names=NameEmbedder(dedup_model), partitions=parts)
        lane.fold.dedup.config = config.deduplication
        lanes.append(("extractor", lane))
    if config.summarization_enabled:
        summarizer = ConversationSummarizer(provider, config.summarization)
        lanes.append(("summarizer", SummarizerLane(SummaryFold(summarizer), partitions=parts)))
    batch = LANE_BATCH if isinstance(provider, LocalProvider) else REMOTE_LANE_BATCH
    for name, memory_lane in lanes:
        specs.append(
            AgentSpec(
                name=name, source="memory.episodes", processor=memory_lane,
                accepts=(EpisodeRecorded, MemoryForgotten), batch=batch,
            )
        )  # fmt: skip
    return specs
