"""``tribal rebuild``: replay topics into a shadow store, then swap it in atomically.

The live store keeps serving (and the live projection keeps applying) while the
shadow catches up from the log. Only the log is read: embeddings and extracted facts
are events, so neither the embedding model nor the LLM is called.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from events.registry import registry_from_settings
from events.serde import EventSerde
from projections.base import Projection
from projections.registry import projections_for
from projections.runner import ProjectionRunner
from runtime.settings import TribalSettings


class Rebuildable(Projection, Protocol):
    async def make_shadow(self) -> Any:
        """An empty store of the same kind beside the live one."""
        ...

    async def swap_in(self, shadow: Any) -> None:
        """Atomically make ``shadow`` the live store and drop the previous one."""
        ...


@dataclass
class RebuildReport:
    projection: str
    applied: int
    seconds: float


Progress = Callable[[int, int], None]
"""``progress(done, total)``: records read so far out of those to read."""


async def rebuild(
    settings: TribalSettings,
    name: str,
    from_timestamp_ms: int | None = None,
    progress: Progress | None = None,
) -> RebuildReport:
    """Rebuild projection ``name`` into a shadow and swap it in once caught up."""
    [live] = projections_for(settings, [name])
    if not hasattr(live, "make_shadow"):
        raise TypeError(f"projection {name} cannot be rebuilt in a shadow store")
    rebuildable: Rebuildable = live  # type: ignore[assignment]
    shadow = await rebuildable.make_shadow()
    serde = EventSerde(registry_from_settings(settings))
    runner = ProjectionRunner(shadow, settings, serde, batch_size=2000)
    t0 = time.monotonic()
    await runner.start(from_timestamp_ms)
    try:
        total = (await runner.measure_lag()).messages
        done = 0
        idle = 0
        while idle < 3:
            n = await runner.step()
            done += n
            idle = idle + 1 if n == 0 else 0
            if progress is not None:
                progress(min(done, max(total, done)), max(total, done))
        await rebuildable.setup()
        await rebuildable.swap_in(shadow)
    finally:
        await runner.stop()
        await rebuildable.close()
    return RebuildReport(name, runner.applied, time.monotonic() - t0)
