"""Episodes before extraction.

A history import (or a replay) sends the episoder thousands of turns at once. Its work
is what makes them searchable; extraction and summaries can follow. In one process they
share the cores and the interpreter's lock, and the extractor's parses slow every
episode batch down (measured: a 2,400-turn import took 5.6 ms of extraction per turn
beside 5.4 ms of embedding). So while the episoder of this process works through a
backlog, the memory lanes of this process wait, up to :data:`LONGEST_WAIT_S` per batch
so that extraction never stops for good. A live turn (a batch smaller than
:data:`BACKLOG_BATCH`) never makes them wait. Across processes (worker roles) the
extraction's lower scheduling priority does the same job.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

BACKLOG_BATCH = 64
"""An episoder batch of this many events or more means turns are waiting behind it."""

QUIET_S = 0.5
"""How long the episoder must go without a backlog batch before the lanes go on."""

LONGEST_WAIT_S = 30.0
"""The longest one lane batch waits for the episoder."""


class Backlog:
    """When this process's episoder last worked on a backlog."""

    def __init__(self, quiet_s: float = QUIET_S, longest_wait_s: float = LONGEST_WAIT_S) -> None:
        self.quiet_s = quiet_s
        self.longest_wait_s = longest_wait_s
        self._last = float("-inf")
        self._working = 0

    @contextlib.contextmanager
    def working(self, batch: int) -> Iterator[None]:
        """Around the episoder's work on a batch of ``batch`` events."""
        backlog = batch >= BACKLOG_BATCH
        self._working += backlog
        try:
            yield
        finally:
            self._working -= backlog
            if backlog:
                self._last = time.monotonic()

    def busy(self) -> bool:
        return self._quiet_in() > 0

    def _quiet_in(self) -> float:
        """Seconds until the episoder has been quiet for :attr:`quiet_s` (≤ 0: it has)."""
        if self._working:
            return self.quiet_s
        return self._last + self.quiet_s - time.monotonic()

    async def wait(self) -> float:
        """Until the episoder has been quiet for :attr:`quiet_s` (at most
        :attr:`longest_wait_s`); the seconds waited."""
        started = time.monotonic()
        deadline = started + self.longest_wait_s
        # Sleeps to the moment the episoder would be quiet, then looks again: a backlog
        # batch since then moves that moment on.
        for _ in range(int(self.longest_wait_s / self.quiet_s) + 1):
            pause = min(self._quiet_in(), deadline - time.monotonic())
            if pause <= 0:
                break
            await asyncio.sleep(pause)
        return time.monotonic() - started


EPISODES_FIRST = Backlog()
"""The process's one gate: the episoder marks it, the memory lanes wait on it."""
