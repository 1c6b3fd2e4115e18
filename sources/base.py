"""The source port, the registry of kinds, and the loop that runs sources."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Sequence
from typing import Protocol

from sources.checkpoint import CheckpointStore
from sources.config import ConfigError, SourceConfig
from sources.sink import EventSink

log = logging.getLogger(__name__)

# kind → "module:factory"; imported lazily so a missing optional backend only
# matters to the source that needs it.
SOURCE_KINDS: dict[str, str] = {
    "postgres": "sources.postgres:from_config",
    "snowflake": "sources.snowflake:from_config",
    "files": "sources.files:from_config",
    "kb": "sources.kb:from_config",
}


class Source(Protocol):
    """Something outside Tribal that changes, observed as events."""

    name: str

    async def sync_once(self, sink: EventSink, checkpoint: CheckpointStore) -> int:
        """Observe once (scan, poll, page through), emit what changed, flush, then
        checkpoint. Returns how many events were emitted."""
        ...

    async def run(self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event) -> None:
        """Observe continuously (watch, listen or poll) until ``stop`` is set."""
        ...


def build_source(config: SourceConfig) -> Source:
    """The source for one ``tribal.yaml`` entry, or a ConfigError naming what is wrong."""
    target = SOURCE_KINDS.get(config.kind)
    if target is None:
        raise ConfigError(
            f"source {config.name!r}: unknown kind {config.kind!r}; "
            f"known kinds: {', '.join(sorted(SOURCE_KINDS))}"
        )
    module_name, _, factory = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"source {config.name!r} ({config.kind}) cannot be loaded: {exc}"
        ) from exc
    source: Source = getattr(module, factory)(config)
    return source


async def run_sources(
    sources: Sequence[tuple[Source, CheckpointStore]], sink: EventSink, stop: asyncio.Event
) -> None:
    """Run every source until ``stop``; one failing source is restarted, not fatal."""

    async def supervise(source: Source, checkpoint: CheckpointStore) -> None:
        delay = 1.0
        while not stop.is_set():
            try:
                await source.run(sink, checkpoint, stop)
                return
            except Exception:
                log.exception("source %s failed; restarting in %.0fs", source.name, delay)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
                delay = min(delay * 2, 60.0)

    await asyncio.gather(*(supervise(s, c) for s, c in sources))
