"""Adjustments to faust-streaming that its settings do not reach.

faust-streaming 0.15's aiokafka driver hard-codes ``fetch_max_wait_ms=1500`` for the
worker consumer. Apache Kafka answers a fetch as soon as data arrives, so there it
hardly matters; Tansu holds every fetch for the whole wait, which cost each Faust hop
about half a second (measured by ``make bench``: p50 386 ms → 19 ms at 20 ms).
"""

from __future__ import annotations

from typing import Any

_state: dict[str, Any] = {"fetch_max_wait_ms": None}


def set_fetch_max_wait(milliseconds: int) -> None:
    """Make every Faust worker consumer in this process wait at most ``milliseconds``."""
    from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

    if _state["fetch_max_wait_ms"] is None:
        original = AIOKafkaConsumerThread._create_worker_consumer

        def create_worker_consumer(self: Any, transport: Any) -> Any:
            consumer = original(self, transport)
            # read by AIOKafkaConsumer.start() when it builds its fetcher
            consumer._fetch_max_wait_ms = _state["fetch_max_wait_ms"]
            return consumer

        AIOKafkaConsumerThread._create_worker_consumer = create_worker_consumer  # type: ignore[method-assign]
    _state["fetch_max_wait_ms"] = int(milliseconds)


def quiet_monitor() -> Any:
    """A Faust ``Monitor`` without the per-message bookkeeping.

    Faust's default monitor keeps statistics for every message and stream event (its
    web UI shows them; Tribal serves Prometheus metrics instead). Those hooks ran on
    every record and were a large share of the per-message cost in ``make bench``.
    """
    from faust.sensors.monitor import Monitor

    class QuietMonitor(Monitor):
        def on_message_in(self, tp: Any, offset: int, message: Any) -> None:
            return None

        def on_stream_event_in(self, tp: Any, offset: int, stream: Any, event: Any) -> None:
            return None

        def on_stream_event_out(
            self, tp: Any, offset: int, stream: Any, event: Any, state: Any = None
        ) -> None:
            return None

        def on_message_out(self, tp: Any, offset: int, message: Any) -> None:
            return None

        def on_send_initiated(
            self, producer: Any, topic: str, message: Any, keysize: int, valsize: int
        ) -> Any:
            return None

        def on_send_completed(self, producer: Any, state: Any, metadata: Any) -> None:
            return None

    return QuietMonitor()
