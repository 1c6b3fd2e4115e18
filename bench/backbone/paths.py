"""The three paths from a producer to a consumer, each measured on one broker.

* ``aiokafka``: producer → topic → consumer, raw bytes. The baseline.
* ``relay``: producer → ``kb.articles`` → aiokafka relay running the production
  Handler → ``chunks`` → consumer. The same hop as Faust, without Faust.
* ``faust``: the same, with the relay replaced by a Faust worker built by
  :func:`streams.app.create_app`.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.backbone.measure import Collector, Load, Result, new_producer, run_load
from bench.backbone.worker import DERIVED, SOURCE
from bench.run import scratch
from devstack.endpoints import Broker
from devstack.pipeline import REPO
from events.kb import KbArticleUpserted
from events.registry import FileSchemaRegistry
from events.serde import EventSerde
from runtime.embedded.process import ChildProcess
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, ensure_topics, topic

PARTITIONS = 6  # the production default (TribalSettings.default_partitions)


def _settings(broker: Broker, data_dir: Path) -> TribalSettings:
    run = uuid.uuid4().hex[:8]
    return TribalSettings(
        kafka_bootstrap=broker.bootstrap,
        topic_prefix=f"bench.{run}.",
        consumer_group=f"bench-{run}",
        data_dir=data_dir,
        default_partitions=PARTITIONS,
        schema_registry_url="",
    )


def _row(broker: Broker, path: str, size: int, measured: dict[str, Any], **extra: Any) -> Result:
    seconds = measured["seconds"]
    messages = measured["messages"]
    return Result(
        broker=broker.name,
        broker_version=broker.version,
        path=path,
        size=size,
        messages=messages,
        seconds=round(seconds, 4),
        msgs_per_s=round(messages / seconds, 1),
        mb_per_s=round(messages * measured["value_bytes"] / seconds / 1e6, 2),
        p50_ms=round(measured["p50_ms"], 2),
        p99_ms=round(measured["p99_ms"], 2),
        loaded_p50_ms=round(measured["loaded_p50_ms"], 1),
        loaded_p99_ms=round(measured["loaded_p99_ms"], 1),
        value_bytes=measured["value_bytes"],
        latency_messages=measured["latency_messages"],
        duplicates=extra.pop("duplicates", 0),
        settings=extra,
    )


async def bare(broker: Broker, size: int, load: Load) -> Result:
    """Producer → topic → consumer with aiokafka alone, opaque values of ``size`` bytes."""
    with scratch("bare") as data_dir:
        settings = _settings(broker, data_dir)
        await ensure_topics(settings, [TOPICS_BY_NAME[SOURCE]])
        source = topic(SOURCE, settings)
        value = os.urandom(size)
        collector = Collector(broker.bootstrap, source, PARTITIONS)
        producer = new_producer(broker.bootstrap)
        await producer.start()
        await collector.start()
        try:
            measured = await run_load(
                producer, collector, source, lambda phase, i: (f"{phase}{i}".encode(), value), load
            )
        finally:
            await collector.stop()
            await producer.stop()
        return _row(broker, "aiokafka", size, measured, duplicates=collector.duplicates)


def _article_maker(
    settings: TribalSettings, size: int
) -> Callable[[str, int], tuple[bytes, bytes]]:
    """Avro ``KbArticleUpserted`` records whose encoded value is about ``size`` bytes."""
    serde = EventSerde(FileSchemaRegistry(settings.schema_dir))
    source = topic(SOURCE, settings)
    now = datetime.now(UTC)

    def article(article_id: str, content: str) -> KbArticleUpserted:
        return KbArticleUpserted(
            article_id=article_id,
            title="How to reset a router",
            url=f"https://help.example.com/{article_id}",
            content=content,
            intent=("troubleshooting",),
            device=("router",),
            last_updated=now,
            author="bench",
        )

    overhead = len(serde.encode(article("t0", ""), source))
    body = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[: max(size - overhead - 4, 0)]

    def make(phase: str, i: int) -> tuple[bytes, bytes]:
        key = f"{phase}{i}"
        return key.encode(), serde.encode(article(key, body), source)

    return make


async def through_worker(
    broker: Broker, size: int, load: Load, mode: str, overrides: dict[str, Any]
) -> Result:
    """Producer → ``kb.articles`` → a worker process (``mode``) → ``chunks`` → consumer."""
    with scratch(mode) as data_dir:
        return await _through_worker(broker, size, load, mode, overrides, data_dir)


async def _through_worker(
    broker: Broker, size: int, load: Load, mode: str, overrides: dict[str, Any], data_dir: Path
) -> Result:
    worker: ChildProcess | None = None
    try:
        settings = _settings(broker, data_dir)
        await ensure_topics(settings, [TOPICS_BY_NAME[n] for n in (SOURCE, DERIVED, "deadletter")])
        make = _article_maker(settings, size)  # registers the schema before the worker reads
        env = dict(os.environ)
        env.update(
            {
                "TRIBAL_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
                "TRIBAL_TOPIC_PREFIX": settings.topic_prefix,
                "TRIBAL_CONSUMER_GROUP": settings.consumer_group,
                "TRIBAL_DATA_DIR": str(data_dir),
                "TRIBAL_DEFAULT_PARTITIONS": str(PARTITIONS),
                "TRIBAL_SCHEMA_REGISTRY_URL": "",
                "PYTHONUNBUFFERED": "1",
            }
        )
        argv = [sys.executable, "-m", "bench.backbone.worker", mode, json.dumps(overrides)]
        worker = ChildProcess(mode, argv, env=env, log_path=data_dir / "worker.log", cwd=REPO)
        worker.start()
        collector = Collector(broker.bootstrap, topic(DERIVED, settings), PARTITIONS)
        producer = new_producer(broker.bootstrap)
        await producer.start()
        await collector.start()
        running = worker

        def check() -> None:
            if not running.alive():
                raise TimeoutError(f"the {mode} worker exited")

        try:
            measured = await run_load(
                producer, collector, topic(SOURCE, settings), make, load, check=check
            )
        except TimeoutError as exc:
            log = (data_dir / "worker.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{mode} worker: {exc}\n--- worker log tail ---\n{log}") from exc
        finally:
            await collector.stop()
            await producer.stop()
        if not worker.alive():
            raise RuntimeError(f"the {mode} worker died during the run")
        return _row(broker, mode, size, measured, duplicates=collector.duplicates, **overrides)
    finally:
        if worker is not None:
            worker.stop(30.0)
