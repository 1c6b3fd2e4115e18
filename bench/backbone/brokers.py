"""The brokers under test: Tansu and Apache Kafka, started here and stopped here."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

from bench.stack import KAFKA_ENV
from devstack.endpoints import Broker
from devstack.kafka import KAFKA_VERSION
from devstack.native import start_native


@contextlib.contextmanager
def tansu() -> Iterator[Broker]:
    """An in-memory Tansu broker on a loopback port, for the duration of the block."""
    with _native("tansu") as broker:
        yield broker


@contextlib.contextmanager
def kafka() -> Iterator[Broker]:
    """Apache Kafka: ``$TRIBAL_BENCH_KAFKA_BOOTSTRAP`` if set, else a fresh KRaft node."""
    external = os.environ.get(KAFKA_ENV)
    if external:
        yield Broker("kafka", external, f"{KAFKA_VERSION} (external)")
        return
    with _native("kafka") as broker:
        yield broker


@contextlib.contextmanager
def _native(service: str) -> Iterator[Broker]:
    started = start_native(service)
    try:
        assert isinstance(started.value, Broker)
        yield started.value
    finally:
        started.close()


BROKERS: dict[str, Callable[[], contextlib.AbstractContextManager[Broker]]] = {
    "tansu": tansu,
    "kafka": kafka,
}
