"""Helpers for end-to-end pipeline tests: isolated topics, a real worker, counting."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

from events.base import Event
from events.kb import KbArticleUpserted
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.kafka_log import LogRecord, read_range
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, ensure_topics, topic

REPO = Path(__file__).resolve().parents[1]
TRIBAL = (sys.executable, "-m", "cli")
"""``tribal`` as a command line: this interpreter, run from the checkout (:data:`REPO`)."""


def isolated_settings(bootstrap: str, data_dir: Path, **extra: Any) -> TribalSettings:
    """Settings with a topic prefix and consumer group no other test shares."""
    tag = uuid.uuid4().hex[:8]
    values: dict[str, Any] = {
        "kafka_bootstrap": bootstrap,
        "data_dir": data_dir,
        "topic_prefix": f"t{tag}.",
        "consumer_group": f"g{tag}",
        "default_partitions": 3,
        "commit_interval": 0.5,
    }
    values.update(extra)
    return TribalSettings(**values)


def settings_env(settings: TribalSettings) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "TRIBAL_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
            "TRIBAL_DATA_DIR": str(settings.data_dir),
            "TRIBAL_TOPIC_PREFIX": settings.topic_prefix,
            "TRIBAL_CONSUMER_GROUP": settings.consumer_group,
            "TRIBAL_DEFAULT_PARTITIONS": str(settings.default_partitions),
            "TRIBAL_COMMIT_INTERVAL": str(settings.commit_interval),
            "TRIBAL_BULK_BACKLOG": str(settings.bulk_backlog),
            "TRIBAL_LOG_LEVEL": "INFO",
            "HF_HUB_OFFLINE": "1",
        }
    )
    return env


def kb_article(n: int, content: str | None = None) -> KbArticleUpserted:
    return KbArticleUpserted(
        article_id=f"kb-{n}",
        title=f"Article {n}",
        url=f"https://help.example/kb-{n}",
        content=content or f"How to reset device {n}.\n\nHold the button for {n} seconds.",
        intent=("troubleshooting",),
        device=("apollo",),
        last_updated=datetime(2026, 1, 1, tzinfo=UTC),
    )


@dataclass
class Pipeline:
    """One isolated set of Tribal topics on a broker, with a serde to talk to them."""

    settings: TribalSettings
    serde: EventSerde = field(init=False)

    def __post_init__(self) -> None:
        self.serde = EventSerde(registry_from_settings(self.settings))

    def topic(self, short: str) -> str:
        return topic(short, self.settings)

    async def create_topics(self) -> None:
        await ensure_topics(self.settings)

    async def produce(self, short: str, items: Iterable[tuple[str, Event | bytes]]) -> None:
        """Produce (key, event-or-raw-bytes) pairs and wait for every ack."""
        name = self.topic(short)
        producer = AIOKafkaProducer(bootstrap_servers=self.settings.kafka_bootstrap, acks="all")
        await producer.start()
        try:
            for key, item in items:
                value = item if isinstance(item, bytes) else self.serde.encode(item, name)
                await producer.send_and_wait(name, value, key=key.encode())
        finally:
            await producer.stop()

    async def read_all(self, short: str, idle_ms: int = 400) -> list[LogRecord]:
        """Every record on a topic, in (partition, offset) order."""
        parts = TOPICS_BY_NAME[short].partition_count(self.settings)
        whole: dict[int, tuple[int, int | None]] = {p: (0, None) for p in range(parts)}
        return await read_range(self.settings.kafka_bootstrap, self.topic(short), whole, idle_ms)

    async def decoded(self, short: str) -> list[Event]:
        return [event for _, event in await self.keyed(short)]

    async def keyed(self, short: str) -> list[tuple[str, Event]]:
        """Every event on a topic with its key, in (partition, offset) order."""
        return [
            ((m.key or b"").decode(), self.serde.decode(m.value or b""))
            for m in await self.read_all(short)
        ]


async def eventually(
    check: Callable[[], Awaitable[bool]], timeout: float = 60.0, interval: float = 0.5
) -> None:
    """Await ``check`` until it is true, or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {timeout:.0f}s")


class WorkerProcess:
    """``tribal worker`` as a real child process, as production runs it."""

    def __init__(self, settings: TribalSettings, log_path: Path, role: str = "all") -> None:
        self.settings = settings
        self.log_path = log_path
        self.role = role
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> WorkerProcess:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [*TRIBAL, "worker", "--role", self.role],
            env=settings_env(self.settings),
            cwd=REPO,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
