"""Where sources put events: the port and its adapters (Kafka, in-memory)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

from events.base import Event
from events.serde import EventSerde
from runtime.observability.tracing import inject_headers, span


@dataclass(frozen=True)
class Emitted:
    """One event as a sink received it."""

    topic: str
    key: str
    event: Event


class EventSink(Protocol):
    """The port a source writes to."""

    async def emit(self, topic: str, key: str, event: Event) -> None:
        """Queue ``event`` for the source topic ``topic`` (short name) under ``key``."""
        ...

    async def flush(self) -> None:
        """Return once everything emitted so far is acknowledged (durable)."""
        ...


@dataclass
class MemorySink:
    """Keeps events in a list: for pure tests and dry runs."""

    emitted: list[Emitted] = field(default_factory=list)
    flushes: int = 0

    async def emit(self, topic: str, key: str, event: Event) -> None:
        self.emitted.append(Emitted(topic, key, event))

    async def flush(self) -> None:
        self.flushes += 1

    def events(self, topic: str | None = None) -> list[Event]:
        return [e.event for e in self.emitted if topic is None or e.topic == topic]


@dataclass(eq=False, repr=False)
class KafkaSink:
    """Produces Avro events to Kafka with ``acks=all``; ``flush`` waits for the acks."""

    bootstrap: str
    serde: EventSerde
    topic_prefix: str = "tribal."
    linger_ms: int = 5
    _producer: Any = field(default=None, init=False)
    _pending: list[asyncio.Future[Any]] = field(default_factory=list, init=False)

    async def start(self) -> KafkaSink:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            acks="all",
            linger_ms=self.linger_ms,
            max_request_size=64 * 1024 * 1024,
        )
        await producer.start()
        self._producer = producer
        return self

    async def stop(self) -> None:
        if self._producer is not None:
            await self.flush()
            await self._producer.stop()
            self._producer = None

    async def __aenter__(self) -> KafkaSink:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _send(self, topic: str, key: str, event: Event) -> asyncio.Future[Any]:
        if self._producer is None:
            raise RuntimeError("KafkaSink.start() first")
        full = f"{self.topic_prefix}{topic}"
        value = self.serde.encode(event, full)
        # The record carries the trace it was produced in, so agents and projections
        # downstream continue it.
        with span(f"produce.{topic}", event=type(event).__name__, key=key):
            headers = inject_headers()
            fut: asyncio.Future[Any] = await self._producer.send(
                full, value, key=key.encode(), headers=headers
            )
        return fut

    async def emit(self, topic: str, key: str, event: Event) -> None:
        self._pending.append(await self._send(topic, key, event))

    async def emit_and_wait(self, topic: str, key: str, event: Event) -> tuple[int, int]:
        """Emit one event and wait for its ack; returns (partition, offset)."""
        meta = await (await self._send(topic, key, event))
        return int(meta.partition), int(meta.offset)

    async def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            await asyncio.gather(*pending)
