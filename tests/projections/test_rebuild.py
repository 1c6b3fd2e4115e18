"""Rebuilding a projection into a shadow store and swapping it in under load."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
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


async def isolated_pipeline(broker: Broker, postgres_dsn: str, tmp_path: Path) -> Pipeline:
    """A pipeline on topics of its own, created, and a database of its own."""
    dsn = await fresh_database(postgres_dsn)
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path, postgres_dsn=dsn))
    await pipeline.create_topics()
    return pipeline


@asynccontextmanager
async def running(runner: ProjectionRunner) -> AsyncIterator[asyncio.Event]:
    """``runner`` caught up, then running for the length of the block: the event that
    stops it (set when the block ends)."""
    await runner.start()
    await runner.catch_up()
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    try:
        yield stop
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await task
        await runner.stop()


async def test_rebuild_swaps_in_a_shadow_without_a_failed_query_and_the_live_runner_goes_on(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    pipeline = await isolated_pipeline(broker, postgres_dsn, tmp_path)
    settings, dsn = pipeline.settings, pipeline.settings.postgres_dsn
    await pipeline.produce("deadletter", [(f"k{n}", dead(n)) for n in range(300)])
    live = ProjectionRunner(
        DeadLetterProjection(dsn, schema="tribal_ops"), settings, pipeline.serde
    )
    failures: list[BaseException] = []
    answers: list[int] = []

    async def query_loop(stop: asyncio.Event) -> None:
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

    async with running(live) as stop:
        queries = asyncio.create_task(query_loop(stop))
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
    assert failures == []
    assert len(answers) > 10
    assert answers[-1] == 310
    assert min(answers) >= 300  # never an empty store while rebuilding
