"""The topic table becomes real topics, once, with the retention each kind needs."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError

from devstack import Broker
from runtime.settings import TribalSettings
from runtime.topics import FOREVER, TOPICS, ensure_topics, topic

DERIVED_RETENTION_MS = 3_600_000


def _settings(bootstrap: str, **overrides: Any) -> TribalSettings:
    values: dict[str, Any] = {
        "kafka_bootstrap": bootstrap,
        "topic_prefix": f"t{uuid.uuid4().hex[:8]}.",
        "default_partitions": 2,
        "topic_partitions": {"memory.turns": 5, "chunks": 3},
        "derived_retention_ms": DERIVED_RETENTION_MS,
        "replication_factor": 1,
    }
    values.update(overrides)
    return TribalSettings(**values)


async def topic_configs(bootstrap: str, names: list[str]) -> dict[str, dict[str, str]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        responses = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, name) for name in names]
        )
    finally:
        await admin.close()
    out: dict[str, dict[str, str]] = {}
    for response in responses:
        for error_code, _message, _type, name, entries in response.resources:
            assert error_code == 0, (name, error_code)
            out[name] = {entry[0]: entry[1] for entry in entries}
    return out


async def partition_counts(bootstrap: str, names: list[str]) -> dict[str, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return {d["topic"]: len(d["partitions"]) for d in await admin.describe_topics(names)}
    finally:
        await admin.close()


def test_the_topic_table_has_the_eleven_topics_of_the_architecture_and_the_bulk_lane() -> None:
    assert [t.name for t in TOPICS] == [
        "schema.changes",
        "files.changes",
        "kb.articles",
        "memory.turns",
        "tables.documented",
        "chunks",
        "chunks.bulk",
        "embeddings",
        "memory.episodes",
        "memory.facts",
        "memory.summaries",
        "deadletter",
    ]
    sources = {t.name for t in TOPICS if t.source}
    assert sources == {
        "schema.changes",
        "files.changes",
        "kb.articles",
        "memory.turns",
        "deadletter",
    }


def test_partition_counts_honour_the_per_topic_override() -> None:
    settings = TribalSettings(default_partitions=4, topic_partitions={"memory.turns": 12})
    counts = {t.name: t.partition_count(settings) for t in TOPICS}

    assert counts["memory.turns"] == 12
    assert counts["deadletter"] == 1  # its own fixed count beats the default
    assert counts["chunks"] == 4
    assert topic("kb.articles", settings) == f"{settings.topic_prefix}kb.articles"
    with pytest.raises(KeyError, match="unknown topic"):
        topic("nope", settings)


async def test_ensure_topics_creates_every_topic_with_its_partition_count(broker: Broker) -> None:
    settings = _settings(broker.bootstrap)
    names = [t.full_name(settings) for t in TOPICS]

    created = await ensure_topics(settings)

    assert sorted(created) == sorted(names)
    counts = await partition_counts(broker.bootstrap, names)
    expected = {t.full_name(settings): t.partition_count(settings) for t in TOPICS}
    assert counts == expected
    assert counts[topic("memory.turns", settings)] == 5
    assert counts[topic("chunks", settings)] == 3
    assert counts[topic("deadletter", settings)] == 1
    assert counts[topic("embeddings", settings)] == 2


async def test_ensuring_topics_again_creates_nothing(broker: Broker) -> None:
    settings = _settings(broker.bootstrap)
    await ensure_topics(settings)

    assert await ensure_topics(settings) == []
    # a changed override does not touch topics that already exist
    changed = settings.model_copy(update={"topic_partitions": {"memory.turns": 9}})
    assert await ensure_topics(changed) == []
    turns = topic("memory.turns", settings)
    assert (await partition_counts(broker.bootstrap, [turns]))[turns] == 5


async def test_source_topics_live_forever_and_derived_topics_expire(broker: Broker) -> None:
    settings = _settings(broker.bootstrap)
    await ensure_topics(settings)

    configs = await topic_configs(broker.bootstrap, [t.full_name(settings) for t in TOPICS])

    for spec in TOPICS:
        config = configs[spec.full_name(settings)]
        expected = FOREVER if spec.source else DERIVED_RETENTION_MS
        assert config["retention.ms"] == str(expected), spec.name
        assert config["cleanup.policy"] == "delete", spec.name


async def test_a_topic_the_broker_refuses_is_an_error_not_a_creation(broker: Broker) -> None:
    if broker.name == "tansu":
        pytest.skip("Tansu accepts any replication factor: it has nothing to refuse here")
    settings = _settings(broker.bootstrap, replication_factor=3)

    with pytest.raises(KafkaError, match="cannot create topic"):
        await ensure_topics(settings)
