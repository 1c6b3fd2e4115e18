"""What a load had accepted, looked for once it has drained: every turn an episode in
its group, every file change embedded, each file at its last version, no new dead
letters."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncpg
from aiokafka import AIOKafkaConsumer, TopicPartition

from events.chunks import ChunksEmbedded
from events.deadletter import DeadLettered
from events.files import FileChanged
from events.memory import EpisodeRecorded
from events.registry import registry_from_settings
from events.serde import EventSerde
from projections.index.pgvector import DEFAULT_SCHEMA as INDEX_SCHEMA
from projections.index.port import Kind
from runtime.observability.progress import log_ends
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic
from streams.chunker.files import file_document_id

T = TypeVar("T")


@dataclass
class Ledger:
    """What a load had accepted (a 202, a broker ack), to look for once it has drained."""

    episodes: dict[str, str] = field(default_factory=dict)
    """The episode id of each accepted turn: its group id."""
    versions: set[tuple[str, str]] = field(default_factory=set)
    """(document id, sha256) of each acknowledged file change."""
    latest: dict[str, str] = field(default_factory=dict)
    """Document id: the sha256 of its last acknowledged change."""
    deadletters_before: int = 0

    def sent_file(self, change: FileChanged) -> None:
        doc = file_document_id(change.repo, change.path)
        self.versions.add((doc, change.sha256))
        self.latest[doc] = change.sha256  # acks of one key come in the order it was sent


async def scan_topic(
    settings: TribalSettings, short: str, item: Callable[[Any], T | None]
) -> list[T]:
    """``item`` of every decoded record of a topic, from its beginning to its end now."""
    serde = EventSerde(registry_from_settings(settings))
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False
    )
    await consumer.start()
    out: list[T] = []
    try:
        tps = [
            TopicPartition(topic(short, settings), p)
            for p in range(TOPICS_BY_NAME[short].partition_count(settings))
        ]
        ends = await log_ends(consumer, tps)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        todo = {tp for tp in tps if ends[tp] > 0}
        deadline = time.monotonic() + 300
        while todo and time.monotonic() < deadline:
            batch = await consumer.getmany(*todo, timeout_ms=500, max_records=5000)
            for tp, records in batch.items():
                for record in records:
                    if record.offset < ends[tp]:
                        found = item(serde.decode(record.value))
                        if found is not None:
                            out.append(found)
                if records and records[-1].offset + 1 >= ends[tp]:
                    todo.discard(tp)
        if todo:
            raise TimeoutError(f"{short}: not read to its end within 300 s")
    finally:
        await consumer.stop()
    return out


async def topic_size(settings: TribalSettings, short: str) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap)
    await consumer.start()
    try:
        tps = [
            TopicPartition(topic(short, settings), p)
            for p in range(TOPICS_BY_NAME[short].partition_count(settings))
        ]
        return sum((await log_ends(consumer, tps)).values())
    finally:
        await consumer.stop()


async def verify_landed(live: TribalSettings, ledger: Ledger) -> dict[str, Any]:
    """Every accepted turn an episode (on its topic and in the index, in its group), every
    acknowledged file change embedded, each file's last change the version the index
    holds with all its vectors, and no new dead letters."""

    def episode(event: Any) -> str | None:
        return str(event.episode_id) if isinstance(event, EpisodeRecorded) else None

    def embedded(event: Any) -> tuple[str, str] | None:
        if not isinstance(event, ChunksEmbedded):
            return None
        return event.document_id, event.document_version

    def dead(event: Any) -> str:
        if not isinstance(event, DeadLettered):
            return "not a DeadLettered"
        return f"{event.origin_topic.removeprefix(live.topic_prefix)}: {event.error_code}"

    on_topic = set(await scan_topic(live, "memory.episodes", episode))
    versions = set(await scan_topic(live, "embeddings", embedded))
    letters = await scan_topic(live, "deadletter", dead)
    conn = await asyncpg.connect(live.postgres_dsn)
    try:
        episodes = await conn.fetch(
            f'SELECT document_id, group_id, embedding IS NOT NULL AS vector FROM "{INDEX_SCHEMA}"'
            ".objects WHERE kind = $1",
            Kind.EPISODE.value,
        )
        # kind IS NULL: a vector waiting for its chunk (not searchable), kept apart.
        files = await conn.fetch(
            "SELECT document_id, "
            "array_agg(DISTINCT document_version) FILTER (WHERE kind IS NOT NULL) AS versions, "
            "bool_and(embedding IS NOT NULL) FILTER (WHERE kind IS NOT NULL) AS vectors, "
            "count(*) FILTER (WHERE kind IS NULL) AS pending "
            f'FROM "{INDEX_SCHEMA}".objects WHERE document_id LIKE $1 GROUP BY document_id',
            "file:load:%",
        )
    finally:
        await conn.close()
    indexed = {r["document_id"]: (r["group_id"], r["vector"]) for r in episodes}
    accepted = ledger.episodes
    not_on_topic = [e for e in accepted if e not in on_topic]
    not_indexed = [e for e in accepted if e not in indexed]
    wrong_group = [e for e, g in accepted.items() if e in indexed and indexed[e][0] != g]
    no_vector = [e for e in accepted if e in indexed and not indexed[e][1]]
    held = {r["document_id"]: (set(r["versions"] or ()), bool(r["vectors"])) for r in files}
    pending = {r["document_id"]: r["pending"] for r in files if r["pending"]}
    not_embedded = sorted(ledger.versions - versions)
    stale = [d for d, sha in ledger.latest.items() if held.get(d, (set(), False))[0] != {sha}]
    vectorless = [d for d in ledger.latest if d in held and not held[d][1]]
    new_letters = letters[ledger.deadletters_before :]
    lost = not_on_topic or not_indexed or wrong_group or not_embedded or stale or vectorless
    return {
        "turns": {
            "accepted": len(accepted),
            "groups": len(set(accepted.values())),
            "episodes_on_topic": len(accepted) - len(not_on_topic),
            "episodes_in_index": len(accepted) - len(not_indexed),
            "in_another_group": len(wrong_group),
            "without_vector": len(no_vector),
            "missing_examples": (not_indexed or not_on_topic)[:5],
        },
        "files": {
            "acknowledged_changes": len(ledger.versions),
            "changes_embedded": len(ledger.versions) - len(not_embedded),
            "paths": len(ledger.latest),
            "paths_at_last_version": len(ledger.latest) - len(stale),
            "paths_without_all_vectors": len(vectorless),
            # Vectors of a version replaced before they came (a late bulk-lane batch):
            # not searchable and not lost, but left behind.
            "pending_vectors_left": sum(pending.values()),
            "paths_with_pending_vectors": len(pending),
            "missing_examples": [f"{d}@{v[:8]}" for d, v in not_embedded[:5]] + stale[:5],
        },
        "deadletters": {
            "before_load": ledger.deadletters_before,
            "new": len(new_letters),
            "by_origin": dict(Counter(new_letters)),
        },
        "nothing_lost": not lost and not new_letters,
    }
