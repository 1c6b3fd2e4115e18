"""The pass-through processor under test, run as its own process like a real worker.

    python -m bench.backbone.worker faust '{"producer_linger_ms": 0}'
    python -m bench.backbone.worker relay

Both read ``kb.articles`` and re-emit every ``KbArticleUpserted`` unchanged to
``chunks`` through the production :class:`streams.wiring.Handler` (Avro decode,
processor, Avro encode). ``faust`` wires it with :func:`streams.app.create_app`
exactly as a Tribal worker does; ``relay`` is the same Handler between a bare
aiokafka consumer and producer, so the gap between the two is Faust itself.
Configuration comes from the ``TRIBAL_*`` environment, as for ``tribal worker``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from bench.backbone.measure import FETCH_MAX_WAIT_MS
from events.base import Event
from events.kb import KbArticleUpserted
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic
from streams.wiring import Emit, Handler

SOURCE = "kb.articles"
DERIVED = "chunks"
AGENT = "bench_passthrough"
BATCH_KEY = "tribal_batch"
"""Not a Faust setting: run the agent over batches of this many events."""


def passthrough(event: Event) -> Iterable[Emit]:
    """The identity processor: the same event, under its article id, downstream."""
    assert isinstance(event, KbArticleUpserted)
    return [Emit(DERIVED, event.article_id, event)]


def passthrough_batch(events: Sequence[Event]) -> Iterable[Emit]:
    """The identity processor over a batch (Faust ``take_events``)."""
    return [e for event in events for e in passthrough(event)]


def run_faust(settings: TribalSettings, overrides: dict[str, Any]) -> None:
    import faust

    from streams.app import use_fast_event_loop

    use_fast_event_loop()

    from streams.app import create_app
    from streams.spec import AgentSpec

    overrides = dict(overrides)
    batch = overrides.pop(BATCH_KEY, None)
    if batch:
        spec = AgentSpec(
            AGENT, SOURCE, passthrough_batch, (KbArticleUpserted,), batch=(int(batch), 0.01)
        )
    else:
        spec = AgentSpec(AGENT, SOURCE, passthrough, (KbArticleUpserted,))
    app = create_app(settings, agents=[spec], **overrides)
    worker = faust.Worker(app, loglevel="warning", quiet=True, redirect_stdouts=False)
    worker.execute_from_commandline()


async def run_relay(settings: TribalSettings) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition

    handler = Handler(
        AGENT,
        passthrough,
        (KbArticleUpserted,),
        EventSerde(registry_from_settings(settings)),
        settings,
    )
    source = topic(SOURCE, settings)
    partitions = TOPICS_BY_NAME[SOURCE].partition_count(settings)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=4 * 1024 * 1024,
        fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap, max_request_size=4 * 1024 * 1024, linger_ms=0
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await consumer.start()
    await producer.start()
    try:
        tps = [TopicPartition(source, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        seen: set[tuple[int, int]] = set()
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=100)
            for tp, msgs in batches.items():
                for msg in msgs:
                    if (tp.partition, msg.offset) in seen:
                        continue  # Tansu may hand a record out twice
                    seen.add((tp.partition, msg.offset))
                    for record in await handler.handle(
                        msg.topic, msg.partition, msg.offset, msg.key, msg.value
                    ):
                        await producer.send(record.topic, record.value, key=record.key)
    finally:
        with contextlib.suppress(Exception):
            await producer.stop()
        await consumer.stop()


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else "faust"
    overrides: dict[str, Any] = json.loads(argv[1]) if len(argv) > 1 else {}
    settings = TribalSettings()
    if mode == "faust":
        run_faust(settings, overrides)
    elif mode == "relay":
        asyncio.run(run_relay(settings))
    else:
        raise SystemExit(f"unknown mode {mode!r}: faust or relay")


if __name__ == "__main__":
    main(sys.argv[1:])
