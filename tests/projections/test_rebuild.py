"""Rebuilding a projection into a shadow store and swapping it in under load."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import asyncpg
import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from projections.deadletters import DeadLetterProjection
from projections.rebuild import rebuild
from projections.runner import ProjectionRunner
from tests.projections.test_runner import dead, fresh_database

pytestmark = pytest.mark.slow


async def test_rebuild_swaps_in_a_shadow_without_a_failed_query_and_the_live_runner_goes_on(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    dsn = await fresh_database(postgres_dsn)
    settings = isolated_settings(broker.bootstrap, tmp_path, postgres_dsn=dsn)
    pipeline = Pipeline(settings)
    await pipeline.create_topics()
    await pipeline.produce("deadletter", [(f"k{n}", dead(n)) for n in range(300)])

    live = ProjectionRunner(
        DeadLetterProjection(dsn, schema="tribal_ops"), settings, pipeline.serde
    )
    await live.start()
    await live.catch_up()
    stop = asyncio.Event()
    live_task = asyncio.create_task(live.run(stop))

    failures: list[BaseException] = []
    answers: list[int] = []

    async def query_loop() -> None:
        pool = await asyncpg.create_pool(dsn, min_size=2, max_size=4)
        try:
            while not stop.is_set():
                try:
                    answers.append(
                        await pool.fetchval("SELECT count(*) FROM tribal_ops.deadletters")
                    )
                except Exception as exc:
                    failures.append(exc)
                await asyncio.sleep(0.005)
        finally:
            await pool.close()

    queries = asyncio.create_task(query_loop())
    try:
        report = await rebuild(settings, "deadletters")
        assert report.applied == 300
        # after the swap the live runner keeps applying into the new store
        await pipeline.produce("deadletter", [(f"k{n}", dead(n)) for n in range(300, 310)])
        for _ in range(100):
            if answers and answers[-1] == 310:
                break
            await asyncio.sleep(0.1)
    finally:
        stop.set()
        await queries
        with contextlib.suppress(Exception):
            await live_task
        await live.stop()
    assert failures == []
    assert len(answers) > 10
    assert answers[-1] == 310
    assert min(answers) >= 300  # never an empty store while rebuilding
