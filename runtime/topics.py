"""The topic table of ``shared/ARCHITECTURE.md`` as data, and idempotent creation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from runtime.settings import TribalSettings

FOREVER = -1


@dataclass(frozen=True)
class TopicSpec:
    """One topic: its name (without prefix), what keys it, and whether it is a source."""

    name: str
    key: str
    events: tuple[str, ...]
    source: bool = field(kw_only=True)
    """A system of record, kept forever (given by name: a bare True in a table says nothing)."""
    partitions: int | None = None

    def full_name(self, settings: TribalSettings) -> str:
        return f"{settings.topic_prefix}{self.name}"

    def partition_count(self, settings: TribalSettings) -> int:
        return settings.topic_partitions.get(
            self.name, self.partitions or settings.default_partitions
        )

    def retention_ms(self, settings: TribalSettings) -> int:
        # Source topics are the system of record: they are never deleted.
        return FOREVER if self.source else settings.derived_retention_ms

    def config(self, settings: TribalSettings) -> dict[str, str]:
        return {
            "retention.ms": str(self.retention_ms(settings)),
            "cleanup.policy": "delete",
            # a whole document's chunks (or vectors) travel as one event
            "max.message.bytes": str(settings.max_message_bytes),
        }


TOPICS: tuple[TopicSpec, ...] = (
    TopicSpec("schema.changes", "db.schema.table", ("TableObserved", "TableDropped"), source=True),
    TopicSpec(
        "files.changes", "repo:path", ("FileChanged", "FileDeleted", "FileSkipped"), source=True
    ),
    TopicSpec("kb.articles", "article id", ("KbArticleUpserted", "KbArticleDeleted"), source=True),
    TopicSpec(
        "memory.turns",
        "group_id",
        ("TurnRecorded", "SystemEventRecorded", "MemoryForgotten"),
        source=True,
    ),
    TopicSpec(
        "tables.documented", "table FQN", ("TableDocumented", "DomainDocumented"), source=False
    ),
    TopicSpec("chunks", "document id", ("DocumentChunked", "DocumentRetracted"), source=False),
    # A bulk load's chunks, passed on by the embedder to be embedded after live ones.
    TopicSpec("chunks.bulk", "document id", ("DocumentChunked", "DocumentRetracted"), source=False),
    TopicSpec("embeddings", "document id", ("ChunksEmbedded",), source=False),
    TopicSpec("memory.episodes", "group_id", ("EpisodeRecorded", "MemoryForgotten"), source=False),
    TopicSpec(
        "memory.facts",
        "group_id",
        ("EntitiesExtracted", "EntityMerged", "RelationshipAsserted", "RelationshipInvalidated"),
        source=False,
    ),
    TopicSpec("memory.summaries", "group_id", ("SummaryCreated",), source=False),
    # Dead letters are evidence: keep them until someone re-drives or deletes them.
    TopicSpec("deadletter", "original key", ("DeadLettered",), source=True, partitions=1),
)

LANES: tuple[TopicSpec, ...] = (
    # A database's schema events re-keyed by tenant/database, so that one worker folds
    # the whole database in order (the documenter's lane); kept forever, like its source.
    TopicSpec(
        "documenter.by-database", "tenant/database", ("TableObserved", "TableDropped"), source=True
    ),
)
"""Topics agents keep for themselves: created by the worker that reads them, and read by
no projection."""

TOPICS_BY_NAME = {t.name: t for t in (*TOPICS, *LANES)}


def topic(name: str, settings: TribalSettings) -> str:
    """Full topic name for a short name such as ``"kb.articles"``."""
    if name not in TOPICS_BY_NAME:
        raise KeyError(f"unknown topic {name!r}; known: {', '.join(TOPICS_BY_NAME)}")
    return TOPICS_BY_NAME[name].full_name(settings)


async def ensure_topics(settings: TribalSettings, specs: Iterable[TopicSpec] = TOPICS) -> list[str]:
    """Create every missing topic; existing ones are left as they are. Returns the created."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    admin = AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [s for s in specs if s.full_name(settings) not in existing]
        created: list[str] = []
        for spec in wanted:
            new = NewTopic(
                name=spec.full_name(settings),
                num_partitions=spec.partition_count(settings),
                replication_factor=settings.replication_factor,
                topic_configs=spec.config(settings),
            )
            if create_topic_errors(await admin.create_topics([new])).get(new.name) is None:
                created.append(new.name)
        await _wait_until_described(
            admin, {s.full_name(settings): s.partition_count(settings) for s in wanted}
        )
        return created
    finally:
        await admin.close()


async def _wait_until_described(
    admin: Any, partitions: dict[str, int], timeout: float = 10.0
) -> None:
    # Apache Kafka acknowledges a creation before every broker's metadata shows the
    # partitions; a consumer started right away would find the topic missing.
    if not partitions:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        described = await admin.describe_topics(sorted(partitions))
        counts = {d["topic"]: len(d["partitions"]) for d in described}
        if all(counts.get(name, 0) >= n for name, n in partitions.items()):
            return
        await asyncio.sleep(0.1)


def create_topic_errors(response: Any) -> dict[str, Exception | None]:
    """Per topic of a CreateTopics response: None if created, or the reason it was not.

    aiokafka returns the broker's per-topic error codes instead of raising them, so a
    refused topic (bad replication factor, bad config) would otherwise pass unnoticed.
    A topic that already exists is not an error: a concurrent starter won the race.

    Raises the first real error.
    """
    from aiokafka.errors import TopicAlreadyExistsError, for_code

    out: dict[str, Exception | None] = {}
    for entry in response.topic_errors:
        name, code = entry[0], entry[1]
        message = entry[2] if len(entry) > 2 else None
        if code == 0:
            out[name] = None
            continue
        error = for_code(code)(f"cannot create topic {name!r}: {message or code}")
        if not isinstance(error, TopicAlreadyExistsError):
            raise error
        out[name] = error
    return out
