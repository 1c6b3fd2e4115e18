"""Episodes before extraction: while the episoder works through a backlog, the memory
lanes of its process wait (briefly), so that an import becomes searchable first."""

from __future__ import annotations

import asyncio
import time

from streams.memory.backlog import BACKLOG_BATCH, Backlog


async def test_a_lane_goes_on_at_once_when_the_episoder_has_no_backlog() -> None:
    backlog = Backlog(quiet_s=0.2)
    with backlog.working(1):  # a live turn
        assert await backlog.wait() < 0.05


async def test_a_lane_waits_until_the_episoder_is_quiet_after_a_backlog_batch() -> None:
    backlog = Backlog(quiet_s=0.2)

    async def episoder() -> float:
        for _ in range(3):
            with backlog.working(BACKLOG_BATCH):
                await asyncio.sleep(0.1)
        return time.monotonic()

    ending = asyncio.create_task(episoder())
    await asyncio.sleep(0.01)
    waited = await backlog.wait()
    resumed = time.monotonic()
    assert waited >= 0.4
    assert resumed - await ending >= 0.18  # quiet for quiet_s after the last batch


async def test_a_lane_waits_no_longer_than_its_longest_wait_behind_an_endless_backlog() -> None:
    backlog = Backlog(quiet_s=0.5, longest_wait_s=0.3)
    with backlog.working(BACKLOG_BATCH):
        waited = await backlog.wait()
    assert 0.3 <= waited < 0.5
