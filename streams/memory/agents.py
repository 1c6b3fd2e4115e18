"""The memory agents and their Faust wiring.

* ``episoder``: ``memory.turns`` → ``memory.episodes`` (stateless, idempotent ids);
* ``extractor``: ``memory.episodes`` → ``memory.facts`` (per-group lane state);
* ``summarizer``: ``memory.episodes`` → ``memory.summaries`` (per-group lane state).

Configuration is seed 003's :class:`MemoryIngestionConfig`; ``TRIBAL_MEMORY_CONFIG``
may hold it as JSON (e.g. a gazetteer, or a smaller ``turns_per_summary``).
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

import faust

from events.memory import EpisodeRecorded, MemoryForgotten, SystemEventRecorded, TurnRecorded
from events.serde import EventSerde
from runtime.kafka_log import LogRecord, read_range
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic
from streams.app import AgentSpec
from streams.embedder.model import Embedder, embedder_for
from streams.failures import classify
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
from streams.wiring import Record, dead_letter_record

EPISODER_BATCH = (64, 0.02)
LANE_BATCH = (256, 0.1)


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
    for name, memory_lane in lanes:
        specs.append(
            AgentSpec(
                name=name, source="memory.episodes", processor=memory_lane.process_events,
                accepts=(EpisodeRecorded, MemoryForgotten), batch=LANE_BATCH,
                wire=partial(wire_memory_lane, memory_lane),
            )
        )  # fmt: skip
    return specs


def wire_memory_lane(
    lane: MemoryLane, app: faust.App, spec: AgentSpec, serde: EventSerde, settings: TribalSettings
) -> None:
    """One Faust agent over ``memory.episodes`` that hands batches to ``lane``."""
    dead_topic = topic("deadletter", settings)

    async def reader(short: str, partition: int, start: int, stop: int | None) -> list[LogRecord]:
        count = TOPICS_BY_NAME[short].partition_count(settings)
        if short == "memory.episodes":
            wanted = {partition: (start, stop)}
        elif count == lane.episode_partitions:  # same key, same partition count
            wanted = {partition: (0, None)}
        else:
            wanted = {q: (0, None) for q in range(count)}
        records = await read_range(settings.kafka_bootstrap, topic(short, settings), wanted)
        if short == "memory.episodes":
            return records
        return [r for r in records if r.key and lane.owns(r.key.decode(), partition)]

    lane.serde, lane.reader = serde, reader

    async def send(record: Record) -> None:
        await app.producer.send(
            record.topic, record.key, record.value, record.partition, None, None
        )

    async def agent(stream: Any) -> None:
        size, within = spec.batch or LANE_BATCH
        async for events in stream.take_events(size, within=within):
            messages = [e.message for e in events]
            records = [LogRecord(m.partition, m.offset, m.key, m.value) for m in messages]
            by_offset = {(m.partition, m.offset): m for m in messages}
            emits, failed = await lane.handle_isolating(
                records,
                unknown_attempts=settings.unknown_failure_attempts,
                transient_budget_s=settings.transient_retry_s,
            )
            for record, exc in failed:
                m = by_offset[(record.partition, record.offset)]
                failure = classify(exc)
                await send(
                    dead_letter_record(
                        serde, dead_topic, m.topic, m.partition, m.offset, m.key, m.value,
                        failure.code, f"[{spec.name}] {failure.kind.value} failure: "
                        f"{failure.message}",
                    )
                )  # fmt: skip
            for emit in emits:
                full = topic(emit.topic, settings)
                value = serde.encode(emit.event, full)
                await send(Record(full, emit.key.encode(), value, emit.partition))

    agent.__name__ = agent.__qualname__ = spec.name
    source = app.topic(
        topic(spec.source, settings), key_type=bytes, value_type=bytes,
        key_serializer="raw", value_serializer="raw",
    )  # fmt: skip
    app.agent(source, name=spec.name, concurrency=1, sink=None)(agent)
