"""Faust wiring of the documenter: a router onto the by-database lane, then the lane.

See :mod:`streams.documenter.lane` for why the lane exists and how its state survives
restarts. Both agents dead-letter what they cannot handle, as
:class:`streams.wiring.Handler` does, and never raise for bad input.
"""

from __future__ import annotations

import functools
import logging
from functools import partial
from typing import Any

import faust

from events.schema import TableDropped, TableObserved
from events.serde import DecodeError, EventSerde
from runtime.kafka_log import LogRecord, read_range
from runtime.settings import TribalSettings
from runtime.topics import topic
from streams.app import AgentSpec
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import LANE_TOPIC, DocumenterLane
from streams.documenter.state import lane_key
from streams.failures import classify, with_retries
from streams.llm import LLMProvider
from streams.wiring import Record, dead_letter_record

log = logging.getLogger(__name__)

DEFAULT_BATCH = (256, 0.5)


def lane_topic(settings: TribalSettings) -> str:
    """Full name of the lane topic (created by Faust at start, kept forever)."""
    return f"{settings.topic_prefix}{LANE_TOPIC}"


def documenter_spec(
    settings: TribalSettings,
    provider: LLMProvider | None = None,
    batch: tuple[int, float] = DEFAULT_BATCH,
) -> AgentSpec:
    """The documenter agent: ``schema.changes`` → ``tables.documented``."""
    lane = DocumenterLane(Documenter(provider or make_provider()))
    return AgentSpec(
        name="documenter",
        source="schema.changes",
        processor=lane.process,
        accepts=(TableObserved, TableDropped),
        batch=batch,
        wire=partial(wire_lane, lane),
    )


def _raw(app: faust.App, name: str, **extra: Any) -> Any:
    return app.topic(
        name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw",
        **extra,
    )  # fmt: skip


def wire_lane(
    lane: DocumenterLane,
    app: faust.App,
    spec: AgentSpec,
    serde: EventSerde,
    settings: TribalSettings,
) -> None:
    """Two Faust agents: ``{name}_router`` (re-key by database) and ``{name}`` (the lane)."""
    lane_name = lane_topic(settings)
    dead_topic = topic("deadletter", settings)
    documented = topic("tables.documented", settings)

    async def reader(partition: int, start: int, stop: int) -> list[LogRecord]:
        return await read_range(settings.kafka_bootstrap, lane_name, {partition: (start, stop)})

    lane.serde, lane.reader = serde, reader
    partitions = settings.topic_partitions.get(LANE_TOPIC, settings.default_partitions)
    lane_channel = _raw(
        app, lane_name, internal=True, partitions=partitions,
        config={"retention.ms": "-1", "cleanup.policy": "delete"},
    )  # fmt: skip

    async def send(record: Record) -> None:
        await app.producer.send(
            record.topic, record.key, record.value, record.partition, None, None
        )

    def dead(m: Any, code: str, message: str) -> Record:
        return dead_letter_record(
            serde, dead_topic, m.topic, m.partition, m.offset, m.key, m.value, code,
            f"[{spec.name}] {message}",
        )  # fmt: skip

    async def router(stream: Any) -> None:
        async for event in stream.events():
            m = event.message
            try:
                decoded = serde.decode(m.value or b"")
            except DecodeError as exc:
                await send(dead(m, exc.code, exc.message))
                continue
            if not isinstance(decoded, spec.accepts):
                await send(dead(m, "UNEXPECTED_EVENT_TYPE", f"{type(decoded).__name__}"))
                continue
            assert isinstance(decoded, TableObserved | TableDropped)
            await send(Record(lane_name, lane_key(decoded).encode(), m.value or b""))

    async def documenter(stream: Any) -> None:
        size, within = spec.batch or DEFAULT_BATCH
        async for events in stream.take_events(size, within=within):
            messages = [e.message for e in events]
            records = [LogRecord(m.partition, m.offset, m.key, m.value) for m in messages]
            partitions = sorted({r.partition for r in records})
            try:
                # A retry rebuilds the lane's state from the log (forget) first.
                emits, failures = await with_retries(
                    functools.partial(lane.handle, records),
                    unknown_attempts=settings.unknown_failure_attempts,
                    transient_budget_s=settings.transient_retry_s,
                    before_retry=functools.partial(lane.forget, partitions),
                )
            except Exception as exc:  # a bug must not stop the lane; the log keeps all
                lane.forget(partitions)
                failure = classify(exc)
                for m in messages:
                    await send(
                        dead(m, failure.code, f"{failure.kind.value} failure: {failure.message}")
                    )
                continue
            for emit in emits:
                await send(
                    Record(documented, emit.key.encode(), serde.encode(emit.event, documented))
                )
            by_offset = {(m.partition, m.offset): m for m in messages}
            for f in failures:
                origin = by_offset[(f.record.partition, f.record.offset)]
                await send(dead(origin, f.code, f.message))

    for fn, name, channel in (
        (router, f"{spec.name}_router", _raw(app, topic(spec.source, settings))),
        (documenter, spec.name, lane_channel),
    ):
        fn.__name__ = fn.__qualname__ = name
        app.agent(channel, name=name, concurrency=1, sink=None)(fn)
