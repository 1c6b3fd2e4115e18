"""``tribal project``: run every projection until stopped."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from events.registry import registry_from_settings
from events.serde import EventSerde
from projections.health import HealthBoard
from projections.registry import projections_for
from projections.runner import ProjectionRunner
from runtime.observability.metrics import serve_metrics_if_configured
from runtime.observability.tracing import configure_tracing
from runtime.settings import TribalSettings

log = logging.getLogger(__name__)


async def run_projections(
    settings: TribalSettings, names: list[str] | None = None, stop: asyncio.Event | None = None
) -> None:
    """Start one runner per projection and run them until ``stop`` (or SIGTERM)."""
    configure_tracing("tribal-projections")
    serve_metrics_if_configured()
    serde = EventSerde(registry_from_settings(settings))
    runners = [
        ProjectionRunner(p, settings, serde, health=HealthBoard(settings.postgres_dsn))
        for p in projections_for(settings, names)
    ]
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    started: list[ProjectionRunner] = []
    try:
        for runner in runners:
            await _start_with_retry(runner, stop)
            started.append(runner)
            log.info("projection %s started", runner.projection.name)
        await asyncio.gather(*(r.run(stop) for r in started))
    finally:
        for runner in started:
            await runner.stop()


async def _start_with_retry(runner: ProjectionRunner, stop: asyncio.Event) -> None:
    delay = 0.5
    while not stop.is_set():
        try:
            await runner.start()
            return
        except Exception as exc:  # the store or broker may still be starting
            log.warning(
                "projection %s cannot start yet (%s); retrying", runner.projection.name, exc
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 10.0)
