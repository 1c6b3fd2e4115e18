"""``tribal worker`` processes draining a backlog in one consumer group: topics no other
run shares, the processes (each with a ``/metrics`` port), and the sink and ingestor that
send them their work."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from devstack.pipeline import REPO, TRIBAL, settings_env
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.embedded.process import ChildProcess, free_port
from runtime.settings import TribalSettings
from runtime.topics import ensure_topics
from sources.sink import KafkaSink
from sources.turns import MemoryIngestor, Session, Turn

TURNS_IN_FLIGHT = 50


def worker_env(settings: TribalSettings, metrics_port: int) -> dict[str, str]:
    """A worker's environment: its settings, and a ``/metrics`` port of its own instead
    of a multiprocess directory shared with other processes."""
    env = settings_env(settings)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return env | {"TRIBAL_METRICS_PORT": str(metrics_port), "PYTHONUNBUFFERED": "1"}


async def processed_by(http: aiohttp.ClientSession, port: int) -> dict[str, float]:
    """``tribal_events_processed_total`` per agent, from one worker's /metrics."""
    out: dict[str, float] = {}
    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
        async with http.get(f"http://127.0.0.1:{port}/metrics") as r:
            for line in (await r.text()).splitlines():
                if line.startswith("tribal_events_processed_total{"):
                    labels, _, number = line.rpartition(" ")
                    agent = labels.split('agent="', 1)[1].split('"', 1)[0]
                    out[agent] = out.get(agent, 0.0) + float(number)
    return out


def backlog_turn(n: int, conversations: int = 20, name: str = "g") -> tuple[Turn, Session]:
    """Turn ``n`` of a backlog, in one of ``conversations`` (``<name><k>``)."""
    turn = Turn(user_message=f"order #{n} never arrived", agent_response="refunded")
    return turn, Session(tenant_id="bench", id=f"{name}{n % conversations}")


@dataclass
class Backlog:
    """A running drain: its settings, worker processes, sink, ingestor and HTTP client."""

    settings: TribalSettings
    children: list[ChildProcess]
    ports: list[int]
    sink: KafkaSink
    ingestor: MemoryIngestor
    http: aiohttp.ClientSession
    logs: Path

    def check(self) -> None:
        """Raise if a worker died (its log is in ``logs``)."""
        dead = [c.name for c in self.children if not c.alive()]
        if dead:
            raise RuntimeError(f"{', '.join(dead)} died; logs in {self.logs}")

    async def processed(self) -> list[dict[str, float]]:
        """Events processed per agent, one mapping per worker."""
        return [await processed_by(self.http, port) for port in self.ports]

    async def turns(self, numbers: Iterable[int], conversations: int = 20, name: str = "g") -> None:
        """Ingest :func:`backlog_turn` ``n`` for each of ``numbers``, 50 in flight."""
        gate = asyncio.Semaphore(TURNS_IN_FLIGHT)

        async def one(n: int) -> None:
            async with gate:
                await self.ingestor.ingest_turn(*backlog_turn(n, conversations, name))

        await asyncio.gather(*(one(n) for n in numbers))

    async def settle(self) -> None:
        """Let the consumer group settle after the warm-up."""
        await asyncio.sleep(2 * self.settings.rebalance_timeout)


@contextlib.asynccontextmanager
async def backlog(
    tag: str,
    bootstrap: str,
    where: Path,
    *,
    workers: int,
    partitions: int,
    role: str | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Backlog]:
    """``workers`` ``tribal worker`` processes (``--role role``) on topics and a group of
    their own (``tag``), while the block runs."""
    tag = f"{tag}p{os.getpid() % 10000}"
    settings = TribalSettings(
        kafka_bootstrap=bootstrap, data_dir=where / tag, topic_prefix=f"{tag}.",
        consumer_group=tag, default_partitions=partitions, commit_interval=0.5,
    )  # fmt: skip
    await ensure_topics(settings)
    serde = EventSerde(registry_from_settings(settings))
    ports = [free_port() for _ in range(workers)]
    argv = [*TRIBAL, "worker", *(["--role", role] if role else [])]
    children = [
        ChildProcess(
            f"{role or 'worker'}-{i}", argv, env={**worker_env(settings, port), **(env or {})},
            log_path=where / f"{tag}-{i}.log", cwd=REPO,
        )
        for i, port in enumerate(ports)
    ]  # fmt: skip
    try:
        for child in children:
            child.start()
        async with (
            KafkaSink(bootstrap, serde, settings.topic_prefix) as sink,
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
        ):
            yield Backlog(settings, children, ports, sink, MemoryIngestor(sink), http, where)
    finally:
        for child in children:
            await asyncio.to_thread(child.stop, 20.0)
