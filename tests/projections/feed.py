"""Events handed to a projection the way the runner hands them, and a projection opened
the way the runner opens it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeVar

from events.base import Event
from projections.base import Applied, Projection

P = TypeVar("P", bound=Projection)


class RunnerFeed:
    """Applies events at consecutive offsets of their topic, as the runner would. A
    subclass says which topic each event comes from."""

    def __init__(self, projection: Projection) -> None:
        self.projection = projection
        self.next: dict[str, int] = {}

    def topic(self, event: Event) -> str:
        raise NotImplementedError

    def batch(self, *events: Event) -> list[Applied]:
        out = []
        for e in events:
            topic = self.topic(e)
            offset = self.next.get(topic, 0)
            self.next[topic] = offset + 1
            out.append(Applied(topic, 0, offset, None, e))
        return out

    async def __call__(self, *events: Event) -> int:
        return await self.projection.apply(self.batch(*events))


@asynccontextmanager
async def opened(projection: P) -> AsyncIterator[P]:
    """``projection`` with its store set up and its positions read, closed after."""
    await projection.setup()
    await projection.positions()
    try:
        yield projection
    finally:
        await projection.close()
