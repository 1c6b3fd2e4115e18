"""The agents' progress: committed offsets against the end, and stalls told from work."""

from __future__ import annotations

from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata

from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from events.kb import KbArticleDeleted
from runtime.observability.progress import (
    AGENT_SOURCES,
    PartitionProgress,
    ProgressTracker,
    group_progress,
)
from runtime.settings import TribalSettings
from streams.agents import agents_for


def test_the_progress_check_covers_every_topic_an_agent_consumes() -> None:
    assert set(AGENT_SOURCES) == {spec.source for spec in agents_for(TribalSettings())}


def test_a_partition_is_stalled_only_while_it_has_work_and_its_offset_stands_still() -> None:
    tracker = ProgressTracker()
    key = ("t.chunks", 0)
    assert tracker.observe({key: PartitionProgress(5, 9)}, now=0)[0].seconds == 0
    assert tracker.observe({key: PartitionProgress(5, 9)}, now=40)[0].seconds == 40
    # It moved: working through a backlog is not being stuck.
    assert tracker.observe({key: PartitionProgress(7, 12)}, now=41)[0].seconds == 0
    # Caught up: nothing to report; new work is timed from when it was last seen idle.
    assert tracker.observe({key: PartitionProgress(12, 12)}, now=90) == []
    assert tracker.observe({key: PartitionProgress(12, 13)}, now=95)[0].seconds == 5


async def four_articles(broker: Broker, tmp_path: Path) -> tuple[Pipeline, str, int]:
    """Four records on one partition of ``kb.articles``: the pipeline, the full topic name
    and the partition."""
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    await pipeline.produce(
        "kb.articles", [("kb-1", KbArticleDeleted(article_id=f"kb-{n}")) for n in range(4)]
    )
    progress = await group_progress(pipeline.settings, ["kb.articles"])
    assert sum(p.end for p in progress.values()) == 4
    assert all(p.committed is None for p in progress.values())
    [(full, partition)] = [k for k, p in progress.items() if p.end]
    return pipeline, full, partition


async def commit(bootstrap: str, group: str, full: str, partition: int, offset: int) -> None:
    """Commit ``offset`` of the partition for consumer group ``group``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(full, partition)])
        await consumer.commit({TopicPartition(full, partition): OffsetAndMetadata(offset, "")})
    finally:
        await consumer.stop()


async def test_group_progress_reads_committed_and_end_offsets_on_both_brokers(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline, full, partition = await four_articles(broker, tmp_path)
    await commit(broker.bootstrap, pipeline.settings.consumer_group, full, partition, 3)
    progress = await group_progress(pipeline.settings, ["kb.articles"])
    assert progress[(full, partition)] == PartitionProgress(3, 4)
    assert progress[(full, partition)].behind == 1


def test_worker_roles_split_the_agents_without_leaving_one_out() -> None:
    from runtime.observability.progress import ROLES, role_group
    from streams.app import default_agents

    settings = TribalSettings()
    sources = [s for role in ROLES.values() for s in role]
    assert sorted(sources) == sorted(AGENT_SOURCES)  # each topic in exactly one role
    everyone = {spec.name for spec in default_agents(settings)}
    by_role = [{spec.name for spec in default_agents(settings, r)} for r in ROLES]
    assert set().union(*by_role) == everyone
    assert sum(len(names) for names in by_role) == len(everyone)
    assert {spec.name for spec in default_agents(settings, "embed")} == {
        "embedder",
        "bulk_embedder",
        "table_embedder",
    }
    assert role_group(settings, "embed") == f"{settings.consumer_group}.embed"
    assert role_group(settings, "all") == settings.consumer_group


async def test_lag_reads_the_group_of_the_role_that_consumes_the_topic(
    broker: Broker, tmp_path: Path
) -> None:
    from runtime.observability.progress import role_group

    pipeline, full, partition = await four_articles(broker, tmp_path)
    chunker = role_group(pipeline.settings, "chunk")  # a `tribal worker --role chunk`
    await commit(broker.bootstrap, chunker, full, partition, 4)
    progress = await group_progress(pipeline.settings, ["kb.articles"])
    assert progress[(full, partition)] == PartitionProgress(4, 4)
