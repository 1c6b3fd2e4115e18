"""Isolated topics for a test, and waiting on a real worker between them.

Each wait first asks whether the worker still runs, so a worker that dies fails the test
at once, with its log, instead of at the timeout."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from devstack import Broker
from devstack.pipeline import Pipeline, WorkerProcess, eventually, isolated_settings

Check = Callable[[], Awaitable[bool]]


async def fresh_pipeline(broker: Broker, data_dir: Path) -> Pipeline:
    """Topics of this test's own on ``broker``, created; state kept under ``data_dir``."""
    pipeline = Pipeline(isolated_settings(broker.bootstrap, data_dir))
    await pipeline.create_topics()
    return pipeline


async def eventually_while_running(worker: WorkerProcess, check: Check, timeout: float) -> None:
    """Await ``check`` until it is true; fail with the worker's log as soon as it exits."""

    async def running_and_checked() -> bool:
        assert worker.proc is not None
        assert worker.proc.poll() is None, worker.log()
        return await check()

    await eventually(running_and_checked, timeout=timeout)


def holds(pipeline: Pipeline, short: str, count: int) -> Check:
    """A check that the topic ``short`` holds at least ``count`` records."""

    async def enough() -> bool:
        return len(await pipeline.read_all(short)) >= count

    return enough
