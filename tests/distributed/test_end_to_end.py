"""The distributed path end to end: two ``tribal worker`` processes, ``tribal project``
and ``tribal api`` on Apache Kafka, PostgreSQL and Weaviate; one worker is killed with
SIGKILL halfway through a backfill, and the answers end the same as the embedded run's
(``tribal up`` on Tansu, its own PostgreSQL and pgvector) over the same corpus."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from devstack.endpoints import WeaviateEndpoint
from runtime.topics import TOPICS_BY_NAME
from tests import test_embedded
from tests.distributed.corpus import Corpus, questions
from tests.distributed.stack import (
    DistributedStack,
    UpStack,
    searchable,
    sigkill,
    tenant_and_key,
    wait_settled,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]


embedded_dir = test_embedded.data_dir  # the same fixture: a data dir embedded PostgreSQL can use


async def group_members(bootstrap: str, group: str) -> int:
    """Members of a consumer group once it is stable (every partition assigned)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        [response] = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    [described] = response.groups
    state, members = described[2], described[5]
    return len(members) if state == "Stable" else 0


async def wait_for_members(stack: DistributedStack, n: int, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    group = stack.settings.consumer_group
    while await group_members(stack.settings.kafka_bootstrap, group) != n:
        stack.children.check()
        if time.monotonic() > deadline:
            raise AssertionError(f"{group} never had {n} members\n{stack.children.tails()}")
        await asyncio.sleep(0.5)


async def kill_one_worker_mid_backfill(stack: DistributedStack, corpus: Corpus) -> int:
    """SIGKILL a worker once an eighth of the documents have vectors; returns how many
    had them then."""
    settings = stack.settings
    name = stack.pipeline.topic("embeddings")
    tps = [
        TopicPartition(name, p)
        for p in range(TOPICS_BY_NAME["embeddings"].partition_count(settings))
    ]
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap, group_id=None)
    await consumer.start()
    try:
        consumer.assign(tps)
        deadline = time.monotonic() + 180
        while True:
            stack.children.check()
            embedded = int(sum((await consumer.end_offsets(tps)).values()))
            if embedded >= corpus.documents // 8:
                break
            assert time.monotonic() < deadline, f"no vectors in 180 s\n{stack.children.tails()}"
            await asyncio.sleep(0.1)
    finally:
        await consumer.stop()
    sigkill(stack.workers[0])
    return embedded


async def test_two_workers_one_killed_mid_backfill_end_with_the_embedded_runs_answers(
    kafka_bootstrap: str,
    postgres_dsn: str,
    weaviate: WeaviateEndpoint,
    tmp_path: Path,
    embedded_dir: Path,
) -> None:
    tenant, key = tenant_and_key()
    corpus = Corpus(tenant)
    asked = questions(corpus)
    embedded = UpStack(embedded_dir, tenant, key)
    distributed = DistributedStack(kafka_bootstrap, postgres_dsn, weaviate, tmp_path, tenant, key)
    try:
        await asyncio.gather(embedded.start(), distributed.start())
        assert (embedded.info["mode"], embedded.info["index"]) == ("embedded", "pgvector")
        assert distributed.health["mode"] == "distributed"
        assert distributed.health["checks"] == {"kafka": "ok", "postgres": "ok", "index": "ok"}
        await wait_for_members(distributed, 2)

        await corpus.produce(distributed.pipeline)
        await corpus.produce(embedded.pipeline)
        at_kill = await kill_one_worker_mid_backfill(distributed, corpus)
        print(f"killed {distributed.workers[0].name} at {at_kill} of {corpus.documents}")
        assert at_kill < corpus.documents, "the backfill was over before the kill"

        await wait_settled(embedded.api, embedded.children.check, timeout=240)
        expected_counts = await searchable(embedded.index, tenant)
        expected = await embedded.api.answers(asked)
        planted = [(q.expects, a[:1]) for q, a in zip(asked, expected, strict=True)]
        assert all([want] == first for want, first in planted), planted

        victim = distributed.workers[0]
        await wait_settled(distributed.api, lambda: distributed.children.check(victim), 240)
        assert await searchable(distributed.index, tenant) == expected_counts
        assert await distributed.api.answers(asked) == expected
    finally:
        await asyncio.gather(embedded.stop(), distributed.stop())
