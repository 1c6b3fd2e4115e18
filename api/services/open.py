"""What both front ends (HTTP and MCP) open at start: the read stores and the memory ingestor."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from api.services.context import ServiceContext, close_context, open_context
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.settings import TribalSettings
from sources.sink import KafkaSink
from sources.turns import MemoryIngestor

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_services(
    settings: TribalSettings, *, load_model: bool = True, log_required: bool = True
) -> AsyncIterator[ServiceContext]:
    """The stores the settings name (see :func:`open_context`) and, with a broker, an
    ingestor writing turns to it; all closed on exit.

    ``log_required``: a broker that does not answer at start fails the start; otherwise
    the services open without an ingestor and memory writes answer EVENT_LOG_UNAVAILABLE.
    """
    ctx = await open_context(settings, load_model=load_model)
    sink: KafkaSink | None = None
    try:
        if settings.kafka_bootstrap:
            # linger 0: a caller waits for its ack; concurrent calls still share batches
            serde = EventSerde(registry_from_settings(settings))
            sink = KafkaSink(settings.kafka_bootstrap, serde, settings.topic_prefix, linger_ms=0)
            try:
                await sink.start()
            except Exception as exc:
                if log_required:
                    raise
                log.warning("event log unavailable, memory writes refused: %s", exc)
                sink = None
            else:
                ctx.ingestor = MemoryIngestor(sink)
        yield ctx
    finally:
        ctx.ingestor = None
        if sink is not None:
            await sink.stop()
        await close_context(ctx)
