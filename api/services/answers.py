"""Recent answers of a read service, shared by identical requests (``/v1/retrieve``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from cachetools import TTLCache

T = TypeVar("T")

MAX_RUNNING = 64
"""Answers computing at once per API process; more requests are shed."""


class Answers(Generic[T]):
    """Recent answers, shared by identical requests (the caller's key; for
    ``/v1/retrieve``: the tenant and the whole request) for ``ttl_s``. Requests that
    arrive while the same answer is being computed wait for that one computation
    rather than starting their own.

    An answer past half its ``ttl_s`` is refreshed in the background by the request
    that finds it (:meth:`stale`), so a busy answer never expires under load and every
    answer served is younger than ``ttl_s``.

    An answer that misses its caller's budget keeps computing in the background
    (cancelling it would make asyncpg open a connection per cancelled query, exactly
    when the database is busiest) and is kept for the next identical request. At most
    :data:`MAX_RUNNING` computations run at once: beyond that a request is shed
    (:meth:`start` returns None) and the caller answers its fallback.
    """

    def __init__(self, ttl_s: float, size: int = 4096) -> None:
        self.ttl_s = ttl_s
        self._done: TTLCache[Hashable, tuple[T, float]] = TTLCache(
            maxsize=size, ttl=max(ttl_s, 1e-9)
        )
        self._running: dict[Hashable, asyncio.Task[T]] = {}
        self.hits = 0
        self.shed = 0

    def get(self, key: Hashable) -> T | None:
        """The kept answer of ``key``, if younger than ``ttl_s``."""
        found = self._done.get(key) if self.ttl_s > 0 else None
        if found is None:
            return None
        self.hits += 1
        return found[0]

    def stale(self, key: Hashable) -> bool:
        """Whether the kept answer of ``key`` is past half its life (refresh it)."""
        found = self._done.get(key)
        return found is not None and time.monotonic() - found[1] > self.ttl_s / 2

    def start(self, key: Hashable, compute: Callable[[], Awaitable[T]]) -> asyncio.Task[T] | None:
        """The running computation of ``key``, started if needed; None when shed."""
        task = self._running.get(key)
        if task is not None:
            return task
        if len(self._running) >= MAX_RUNNING:
            self.shed += 1
            return None
        task = asyncio.ensure_future(compute())
        self._running[key] = task
        task.add_done_callback(lambda t: self._finished(key, t))
        return task

    def _finished(self, key: Hashable, task: asyncio.Task[T]) -> None:
        self._running.pop(key, None)
        if self.ttl_s > 0 and not task.cancelled() and task.exception() is None:
            self._done[key] = (task.result(), time.monotonic())
