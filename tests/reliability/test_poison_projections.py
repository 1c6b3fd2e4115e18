"""A record a store refuses costs only itself: the projection runner isolates it.

The runner sorts every failure into data, transient or unknown
(:mod:`streams.failures`). A batch that fails for a reason of its own is split until
the bad record stands alone; that record goes to ``tribal.deadletter`` with its reason
and origin, and every good record in the batch lands, whatever tenant it belongs to.
The search index runs on both adapters (pgvector and Weaviate) on Apache Kafka.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import httpx
import pytest

from devstack.pipeline import Pipeline, eventually, isolated_settings
from devstack.served import ThreadedServer
from events.deadletter import DeadLettered
from events.memory import EpisodeRecorded
from projections.deadletters import DeadLetterProjection
from projections.health import HealthBoard, stuck_stages
from projections.index.pgvector import PgVectorIndex
from projections.index.port import Kind, SearchIndex
from projections.index.projection import IndexProjection
from projections.runner import ProjectionRunner
from streams.failures import FailureKind, classify
from tests.projections.test_index_contract import fresh_index
from tests.projections.test_index_events import MODEL
from tests.projections.test_runner import dead, fresh_database

pytestmark = pytest.mark.slow

TENANTS = [f"tenant{n:02d}" for n in range(12)]


def episode(n: int, content: str | None = None) -> EpisodeRecorded:
    vector = [0.0] * 384
    vector[n % 384] = 1.0
    return EpisodeRecorded(
        group_id=f"{TENANTS[n % len(TENANTS)]}:s1",
        episode_id=uuid.uuid4(),
        source_event_id=uuid.uuid4(),
        content=content or f"turn number {n} about invoices",
        content_type="message",
        source="user",
        embedding=vector,
        embedding_model=MODEL,
    )


def poisoned(adapter: str) -> EpisodeRecorded:
    """An episode the adapter's store refuses, built without the model's checks, as a
    foreign or buggy producer could write it."""
    good = episode(0)
    if adapter == "pgvector":
        # PostgreSQL text cannot hold U+0000 ("invalid byte sequence for encoding").
        return good.model_copy(update={"content": "a\x00b", "group_id": "tenant00:poison"})
    # Weaviate refuses a vector of another length than the collection's.
    return good.model_copy(update={"embedding": [0.5, 0.5, 0.5], "group_id": "tenant00:poison"})


@pytest.fixture(params=["pgvector", "weaviate"])
async def index(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, SearchIndex]]:
    idx = await fresh_index(request, "P")
    await idx.setup()
    yield request.param, idx
    await idx.setup()  # the runner closed it
    await idx.drop()
    await idx.close()


async def _count_episodes(idx: SearchIndex) -> int:
    total = 0
    for tenant in TENANTS:
        with contextlib.suppress(Exception):  # a tenant with nothing yet
            total += await idx.count(Kind.EPISODE, tenant=tenant)
    return total


async def test_99_good_records_land_and_1_bad_one_is_dead_lettered_with_its_reason(
    index: tuple[str, SearchIndex], kafka_bootstrap: str, tmp_path: Path
) -> None:
    adapter, idx = index
    pipeline = Pipeline(isolated_settings(kafka_bootstrap, tmp_path, unknown_failure_attempts=2))
    await pipeline.create_topics()
    good = [episode(n) for n in range(1, 100)]
    items = [(e.group_id, e) for e in good[:40]]
    items.append(("tenant00:poison", poisoned(adapter)))
    items += [(e.group_id, e) for e in good[40:]]
    await pipeline.produce("memory.episodes", items)

    runner = ProjectionRunner(IndexProjection(idx), pipeline.settings, pipeline.serde)
    await runner.start()
    try:
        await runner.catch_up()
        lag = await runner.measure_lag()
        landed = await _count_episodes(idx)
    finally:
        await runner.stop()

    assert landed == 99
    assert runner.dead_lettered == 1
    assert lag.messages == 0, "the store's position moved past the bad record"
    letters = [e for e in await pipeline.decoded("deadletter") if isinstance(e, DeadLettered)]
    assert len(letters) == 1
    [letter] = letters
    assert letter.origin_topic == pipeline.topic("memory.episodes")
    assert letter.origin_key == "tenant00:poison"
    assert letter.payload, "the original bytes are kept for a re-drive"
    assert "projection index" in letter.error_message
    if adapter == "pgvector":
        assert letter.error_code == "STORE_DATA_EXCEPTION", letter


async def test_a_restarted_runner_does_not_retry_what_it_dead_lettered(
    postgres_dsn: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(kafka_bootstrap, tmp_path))
    await pipeline.create_topics()
    dsn = await fresh_database(postgres_dsn)
    idx = PgVectorIndex(dsn, model=MODEL)
    await idx.setup()
    await pipeline.produce(
        "memory.episodes", [("tenant00:poison", poisoned("pgvector")), ("tenant01:s1", episode(1))]
    )
    for _ in range(2):
        runner = ProjectionRunner(IndexProjection(idx), pipeline.settings, pipeline.serde)
        await runner.start()
        await runner.catch_up()
        assert (await runner.measure_lag()).messages == 0
        await runner.stop()
        idx = PgVectorIndex(dsn, model=MODEL)
        await idx.setup()
    letters = [e for e in await pipeline.decoded("deadletter") if isinstance(e, DeadLettered)]
    assert len(letters) == 1
    await idx.close()


async def test_healthz_turns_degraded_when_a_stage_is_stuck_and_ok_once_it_advances(
    postgres_dsn: str, kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A lock held on the dead-letter table blocks the projection's writes: within
    ``stuck_after_s`` the runner reports itself stuck, and ``/healthz`` answers
    ``degraded`` naming the stage, topic, partition, offset and what it waits on;
    ``/metrics`` has the stuck gauge. Once the lock is released the record lands and
    health is ``ok`` again."""
    dsn = await fresh_database(postgres_dsn)
    pipeline = Pipeline(
        isolated_settings(kafka_bootstrap, tmp_path, stuck_after_s=2.0, postgres_dsn=dsn)
    )
    await pipeline.create_topics()
    projection = DeadLetterProjection(dsn, schema="tribal_ops")
    board = HealthBoard(dsn)
    runner = ProjectionRunner(projection, pipeline.settings, pipeline.serde, health=board)
    await runner.start()
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    reader = HealthBoard(dsn)
    blocker = await asyncpg.connect(dsn)
    api = ThreadedServer(pipeline.settings)
    await asyncio.to_thread(api.__enter__)
    client = httpx.AsyncClient(base_url=api.url, timeout=10)
    try:
        assert (await client.get("/healthz")).json()["status"] == "ok"
        await pipeline.produce("deadletter", [("k0", dead(0))])

        async def landed(n: int) -> bool:
            return int((await projection.summary())["total"]) == n

        await eventually(lambda: landed(1), timeout=30)
        lock = blocker.transaction()
        await lock.start()
        await blocker.execute("LOCK TABLE tribal_ops.deadletters IN ACCESS EXCLUSIVE MODE")
        await pipeline.produce("deadletter", [("k1", dead(1))])

        async def stuck() -> bool:
            return bool(stuck_stages(await reader.read(), 2.0))

        await eventually(stuck, timeout=30)
        [report] = stuck_stages(await reader.read(), 2.0)
        assert report["stage"] == "deadletters"
        assert report["topic"] == pipeline.topic("deadletter")
        assert report["partition"] is not None
        assert report["offset"] is not None
        assert report["lag_messages"] >= 1
        assert "waiting" in report["last_error"]

        health = (await client.get("/healthz")).json()
        assert health["status"] == "degraded", health
        [named] = health["stuck"]
        assert {k: named[k] for k in ("stage", "topic", "partition", "offset")} == {
            k: report[k] for k in ("stage", "topic", "partition", "offset")
        }
        assert named["last_error"]
        assert health["projections"]["deadletters"]["status"] == "stuck"
        metrics = (await client.get("/metrics")).text
        assert 'tribal_stage_stuck{stage="deadletters"} 1.0' in metrics

        await lock.rollback()  # the operator's fix

        async def healthy() -> bool:
            return bool((await client.get("/healthz")).json()["status"] == "ok")

        await eventually(healthy, timeout=30)
        await eventually(lambda: landed(2), timeout=30)
        metrics = (await client.get("/metrics")).text
        assert 'tribal_stage_stuck{stage="deadletters"} 0.0' in metrics
    finally:
        await client.aclose()
        await asyncio.to_thread(api.__exit__, None, None, None)
        await blocker.close()
        stop.set()
        await task
        await runner.stop()
        await reader.close()


def test_failures_are_sorted_into_data_transient_and_unknown() -> None:
    data = asyncpg.exceptions.CharacterNotInRepertoireError(
        'invalid byte sequence for encoding "UTF8": 0x00'
    )
    assert classify(data).kind is FailureKind.DATA
    assert classify(asyncpg.exceptions.UniqueViolationError("dup")).kind is FailureKind.DATA
    assert classify(asyncpg.exceptions.SerializationError("x")).kind is FailureKind.TRANSIENT
    assert classify(asyncpg.exceptions.AdminShutdownError("x")).kind is FailureKind.TRANSIENT
    assert classify(ConnectionRefusedError(111, "refused")).kind is FailureKind.TRANSIENT
    assert classify(TimeoutError()).kind is FailureKind.TRANSIENT
    assert classify(UnicodeEncodeError("utf-8", "\udcff", 0, 1, "x")).kind is FailureKind.DATA
    assert classify(RuntimeError("something new")).kind is FailureKind.UNKNOWN
