"""The brokers under test: Tansu and Apache Kafka, started here and stopped here."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from runtime.embedded.tansu import TansuBroker, tansu_binary

KAFKA_BOOTSTRAP_ENV = "TRIBAL_BENCH_KAFKA_BOOTSTRAP"


@dataclass(frozen=True)
class Broker:
    """A running broker: what to call it in the results and where to reach it."""

    name: str
    version: str
    bootstrap: str


def tansu_version() -> str:
    out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True)
    words = out.stdout.split()
    return words[-1] if words else "unknown"


@contextlib.contextmanager
def tansu() -> Iterator[Broker]:
    """An in-memory Tansu broker on a loopback port, for the duration of the block."""
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-tansu-"))
    node = TansuBroker(log_path=scratch / "tansu.log").start()
    try:
        yield Broker("tansu", tansu_version(), node.bootstrap)
    finally:
        node.stop()
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def kafka() -> Iterator[Broker]:
    """Apache Kafka: ``$TRIBAL_BENCH_KAFKA_BOOTSTRAP`` if set, else a fresh KRaft node."""
    from devstack.kafka import KAFKA_VERSION, KafkaNode

    external = os.environ.get(KAFKA_BOOTSTRAP_ENV)
    if external:
        yield Broker("kafka", f"{KAFKA_VERSION} (external)", external)
        return
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-kafka-"))
    node = KafkaNode(scratch)
    try:
        node.start()
        yield Broker("kafka", node.version, node.bootstrap)
    finally:
        node.stop()
        shutil.rmtree(scratch, ignore_errors=True)


BROKERS = {"tansu": tansu, "kafka": kafka}
