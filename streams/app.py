"""The Faust app factory: one app, one agent per processor, raw bytes on the wire.

Values are decoded by :class:`streams.wiring.Handler` rather than by a Faust codec,
so an undecodable record becomes a dead letter instead of an exception inside Faust.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import faust

from events.base import Event
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.observability.metrics import (
    EVENTS_EMITTED,
    EVENTS_PROCESSED,
    PROCESSING_LATENCY,
    serve_metrics_if_configured,
)
from runtime.observability.progress import ROLES, role_group
from runtime.observability.tracing import configure_tracing, inject_headers, span
from runtime.settings import TribalSettings, get_settings
from runtime.topics import LANES, ensure_topics, topic
from streams.agents import agents_for
from streams.faust_compat import quiet_monitor, set_fetch_max_wait
from streams.spec import AgentSpec, Regroup
from streams.warm import warm_up
from streams.wiring import Emit, Handler, Incoming, Record

log = logging.getLogger(__name__)

TAIL_GAP_S = 0.5
"""A record produced within this long after the last one passed to a bulk lane belongs
to the same load."""


def default_agents(settings: TribalSettings, role: str = "all") -> list[AgentSpec]:
    """The processors a Tribal worker of ``role`` runs (``all``: every one)."""
    specs = agents_for(settings)
    if role == "all":
        return specs
    if role not in ROLES:
        raise ValueError(f"no worker role {role!r}: one of all, {', '.join(ROLES)}")
    return [spec for spec in specs if spec.source in ROLES[role]]


def create_app(
    settings: TribalSettings | None = None,
    agents: Sequence[AgentSpec] | None = None,
    app_id: str | None = None,
    **overrides: Any,
) -> faust.App:
    """A configured Faust app with one agent per :class:`AgentSpec`."""
    settings = settings or get_settings()
    if not settings.kafka_bootstrap:
        raise RuntimeError(
            "TRIBAL_KAFKA_BOOTSTRAP is not set: start the embedded stack with `tribal up` "
            "or point it at a Kafka broker (host:port)."
        )
    options: dict[str, Any] = {
        "broker": [f"kafka://{b}" for b in settings.kafka_bootstrap.split(",")],
        "store": "memory://",
        "web_enabled": False,
        "processing_guarantee": "at_least_once",
        "consumer_auto_offset_reset": "earliest",
        "topic_partitions": settings.default_partitions,
        "topic_replication_factor": settings.replication_factor,
        "broker_commit_interval": settings.commit_interval,
        "broker_rebalance_timeout": settings.rebalance_timeout,
        "broker_session_timeout": settings.session_timeout,
        "broker_heartbeat_interval": min(1.0, settings.session_timeout / 3),
        "datadir": str(settings.data_dir / "faust"),
        "producer_linger_ms": 0,
        "producer_max_request_size": settings.max_message_bytes,
    }
    options.update(overrides)
    set_fetch_max_wait(settings.fetch_max_wait_ms)
    options.setdefault("monitor", quiet_monitor())
    app = faust.App(app_id or settings.consumer_group, **options)
    serde = EventSerde(registry_from_settings(settings))
    for spec in agents if agents is not None else default_agents(settings):
        _wire(app, spec, serde, settings)
    return app


def _wire(app: faust.App, spec: AgentSpec, serde: EventSerde, settings: TribalSettings) -> None:
    """The agent of ``spec``, behind its router when it reads a lane topic of its own."""
    source = spec.source
    if spec.regroup is not None:
        route = _router(spec.regroup)
        router = Handler(f"{spec.name}_router", route, spec.accepts, serde, settings)
        _agent(app, router, source, settings)
        source = spec.regroup.topic
    handler = Handler(spec.name, spec.processor, spec.accepts, serde, settings)
    behind = _bulk_lane(app, spec, settings)
    _agent(app, handler, source, settings, spec.batch, behind, spec.concurrency)


def _router(regroup: Regroup) -> Callable[[Event], list[Emit]]:
    def route(event: Event) -> list[Emit]:
        return [Emit(regroup.topic, regroup.key(event), event)]

    return route


def _channel(app: faust.App, short: str, settings: TribalSettings) -> Any:
    """The Faust channel of ``short``, raw bytes in; a lane topic is the worker's to create."""
    lane = next((t for t in LANES if t.name == short), None)
    extra: dict[str, Any] = {}
    if lane is not None:
        extra = {
            "internal": True,
            "partitions": lane.partition_count(settings),
            "config": lane.config(settings),
        }
    return app.topic(
        topic(short, settings),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        **extra,
    )


def _agent(
    app: faust.App,
    handler: Handler,
    source: str,
    settings: TribalSettings,
    batch: tuple[int, float] | None = None,
    behind: Callable[[list[Any]], Awaitable[list[Any]]] | None = None,
    concurrency: int = 1,
) -> None:
    """A Faust agent that hands ``source``'s records to ``handler``, one at a time or in
    batches of ``batch`` (``behind`` first passes a bulk load's records on)."""
    name = handler.name
    processed = EVENTS_PROCESSED.labels(agent=name, topic=source)
    latency = PROCESSING_LATENCY.labels(agent=name)

    async def produce(records: list[Record]) -> None:
        headers = inject_headers()  # the derived records continue this trace
        for record in records:
            # Delivery is not awaited on purpose: Faust flushes the producer before it
            # commits an offset, which is what at-least-once needs, without a round
            # trip per record.
            await app.producer.send(
                record.topic, record.key, record.value, record.partition, None, headers
            )
            EVENTS_EMITTED.labels(topic=record.topic).inc()

    # Plain coroutines, not async generators: Faust "slurps" whatever an agent
    # yields, with a debug log formatted per value, which cost ~10% per message.
    async def agent(stream: Any) -> None:
        async for event in stream.events():
            msg = event.message
            t0 = time.perf_counter()
            with span(f"agent.{name}", _headers(msg), offset=msg.offset, topic=msg.topic):
                await produce(
                    await handler.handle(msg.topic, msg.partition, msg.offset, msg.key, msg.value)
                )
            processed.inc()
            latency.observe((time.perf_counter() - t0) * 1000)

    async def batch_agent(stream: Any) -> None:
        assert batch is not None
        size, within = batch
        async for events in stream.take_events(size, within=within):
            messages = [e.message for e in events]
            if behind is not None:
                messages = await behind(messages)
            if not messages:
                continue
            records = [Incoming(m.topic, m.partition, m.offset, m.key, m.value) for m in messages]
            t0 = time.perf_counter()
            # One span per batch, in the trace of its first record.
            first = _headers(messages[0]) if messages else None
            with span(f"agent.{name}", first, batch_size=len(records)):
                await produce(await handler.handle_batch(records))
            processed.inc(len(records))
            latency.observe((time.perf_counter() - t0) * 1000 / max(1, len(records)))

    chosen = batch_agent if batch else agent
    chosen.__name__ = chosen.__qualname__ = name
    app.agent(_channel(app, source, settings), name=name, concurrency=concurrency, sink=None)(
        chosen
    )


def _bulk_lane(
    app: faust.App, spec: AgentSpec, settings: TribalSettings
) -> Callable[[list[Any]], Awaitable[list[Any]]] | None:
    """What passes a bulk load's messages on to ``spec.bulk`` and returns the live rest
    (``None``: the agent has no bulk lane)."""
    backlog = settings.bulk_backlog
    if spec.bulk is None or backlog <= 0:
        return None
    lane = topic(spec.bulk, settings)
    passed = EVENTS_EMITTED.labels(topic=lane)
    # Per partition, the produce time of the last record passed on: a record produced
    # within TAIL_GAP_S of it continues the same load (its tail, read close to the end of
    # the log, goes to the bulk lane too); one produced after a pause is live.
    last_passed: dict[Any, float] = {}

    def lagging(message: Any) -> bool:
        try:
            end: int | None = app.consumer.highwater(message.tp)
        except Exception:  # not assigned any more, or not fetched yet: treat as live
            return False
        stamp = float(message.timestamp or 0.0)
        behind = end is not None and end - message.offset - 1 >= backlog
        previous = last_passed.get(message.tp)
        if behind or (previous is not None and stamp - previous <= TAIL_GAP_S):
            last_passed[message.tp] = max(stamp, previous or 0.0)
            return True
        return False

    async def pass_on(messages: list[Any]) -> list[Any]:
        live = []
        for message in messages:
            if not lagging(message):
                live.append(message)
                continue
            # The bytes as they came, headers and all: the bulk agent decodes them.
            await app.producer.send(lane, message.key, message.value, None, None, _headers(message))
            passed.inc()
        return live

    return pass_on


def _headers(message: Any) -> list[tuple[str, bytes]] | None:
    raw = getattr(message, "headers", None)
    if not raw:
        return None
    items = raw.items() if isinstance(raw, dict) else raw
    return [(k, v) for k, v in items if isinstance(v, bytes)]


def use_fast_event_loop() -> None:
    """uvloop for this process when it is installed (it is a core dependency)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def run_worker(
    settings: TribalSettings | None = None, loglevel: str = "warning", role: str = "all"
) -> None:
    """Run a Faust worker of ``role`` in this process until SIGTERM/SIGINT (blocking)."""
    settings = settings or get_settings()
    specs = default_agents(settings, role)
    app = create_app(settings, specs, app_id=role_group(settings, role))
    # Topics are created idempotently at start, with Tribal's partitions and retention,
    # before Faust could auto-create them with broker defaults.
    asyncio.run(ensure_topics(settings))
    warm_up(specs)
    use_fast_event_loop()
    asyncio.set_event_loop(asyncio.new_event_loop())  # asyncio.run closed the last one
    configure_tracing("tribal-worker")
    serve_metrics_if_configured()
    worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
    worker.execute_from_commandline()
