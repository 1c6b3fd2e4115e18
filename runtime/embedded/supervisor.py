"""``tribal up``: the whole embedded stack on one machine, under one supervisor.

Start order: PostgreSQL, Tansu, topics, restore from the archive, archive writer,
Faust worker, API. Stop order is the reverse, and the archive catches up after the
worker's last commit, so a clean stop loses nothing and re-processes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from runtime.archive import ArchiveWriter, restore_archive
from runtime.embedded.postgres import EmbeddedPostgres
from runtime.embedded.process import ChildProcess, free_port
from runtime.embedded.tansu import TansuBroker
from runtime.settings import TribalSettings
from runtime.topics import ensure_topics

log = logging.getLogger(__name__)

Say = Callable[[str], None]
HEALTH_ANSWER_S = 10.0
"""Longest ``tribal up`` waits for one ``/healthz`` answer while the stack starts."""


@dataclass
class StackInfo:
    """What a running stack exposes; written to ``<data_dir>/stack.json``."""

    kafka_bootstrap: str
    postgres_dsn: str
    api_url: str
    pid: int
    started_at: float
    timings: dict[str, float] = field(default_factory=dict)
    mode: str = "embedded"
    """``embedded`` when the stack runs its own broker, database and index; else
    ``distributed`` (any of them given by ``TRIBAL_*``)."""
    broker: str = "tansu"
    """``tansu`` (embedded, archived) or ``external``."""
    index: str = "pgvector"

    def env(self) -> dict[str, str]:
        return {
            "TRIBAL_KAFKA_BOOTSTRAP": self.kafka_bootstrap,
            "TRIBAL_POSTGRES_DSN": self.postgres_dsn,
        }


def read_stack_info(data_dir: Path) -> StackInfo | None:
    """The running stack's endpoints, if ``tribal up`` is running on ``data_dir``."""
    path = data_dir / "stack.json"
    if not path.exists():
        return None
    info = StackInfo(**json.loads(path.read_text()))
    try:
        os.kill(info.pid, 0)
    except ProcessLookupError:
        return None
    return info


class EmbeddedStack:
    """Owns every embedded service and child process of one ``tribal up``."""

    def __init__(
        self, settings: TribalSettings, say: Say | None = None, config: Path | None = None
    ) -> None:
        self.settings = settings
        self.config = config
        self.data_dir = settings.data_dir.absolute()
        self.say: Say = say or (lambda msg: log.info(msg))
        self.logs = self.data_dir / "logs"
        self.metrics_dir = self.data_dir / "metrics"
        self.postgres: EmbeddedPostgres | None = None
        self.broker: TansuBroker | None = None
        self.writer: ArchiveWriter | None = None
        self.children: list[ChildProcess] = []
        self._writer_stop = asyncio.Event()
        self._writer_task: asyncio.Task[None] | None = None
        self.info: StackInfo | None = None

    @property
    def mode(self) -> str:
        """``embedded`` only when this stack owns the broker and the database and the
        index is pgvector in it; any external service makes it ``distributed``."""
        own_all = self.broker is not None and self.postgres is not None
        return "embedded" if own_all and not self.settings.weaviate_url else "distributed"

    def _child_env(self, bootstrap: str, dsn: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                "TRIBAL_KAFKA_BOOTSTRAP": bootstrap,
                "TRIBAL_POSTGRES_DSN": dsn,
                "TRIBAL_DATA_DIR": str(self.data_dir),
                "TRIBAL_MODE": self.mode,
                "HF_HUB_OFFLINE": "1",
                "PYTHONUNBUFFERED": "1",
                "TRIBAL_LOG_FORMAT": "json",
                # every child writes its metrics here; the API's /metrics shows them all
                "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir),
            }
        )
        return env

    async def start(self) -> StackInfo:
        t0 = time.monotonic()
        timings: dict[str, float] = {}
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # A stack.json left by a killed run names endpoints that no longer exist.
        (self.data_dir / "stack.json").unlink(missing_ok=True)
        shutil.rmtree(self.metrics_dir, ignore_errors=True)  # counters restart with the stack
        self.metrics_dir.mkdir()

        dsn = self.settings.postgres_dsn
        if not dsn:
            self.postgres = EmbeddedPostgres(
                self.data_dir / "postgres", log_path=self.logs / "postgres.log"
            )
            await asyncio.to_thread(self.postgres.start)
            dsn = self.postgres.dsn
            timings["postgres"] = time.monotonic() - t0
            self.say(
                f"PostgreSQL {self.postgres.version} on {self.postgres.host}:{self.postgres.port}"
            )

        bootstrap = self.settings.kafka_bootstrap
        if not bootstrap:
            self.broker = TansuBroker(log_path=self.logs / "tansu.log")
            await asyncio.to_thread(self.broker.start)
            bootstrap = self.broker.bootstrap
            timings["broker"] = time.monotonic() - t0
            self.say(f"Tansu broker on {bootstrap}")
        settings = self.settings.model_copy(update={"kafka_bootstrap": bootstrap})

        created = await ensure_topics(settings)
        if created:
            self.say(f"created {len(created)} topics")
        if self.broker is not None:
            # Tansu starts empty: put back every record and committed offset.
            report = await restore_archive(bootstrap, settings.archive_path)
            timings["restore"] = time.monotonic() - t0
            if report.records or report.groups:
                self.say(
                    f"restored {report.records} records in {report.topics} topics and the "
                    f"offsets of {len(report.groups)} consumer group(s) from the archive"
                )
            # Tribal's topics, plus the Faust app's own (table changelogs), so that
            # stateful agents also resume where they stopped.
            owned = (settings.topic_prefix, f"{settings.consumer_group}-")
            self.writer = ArchiveWriter(
                bootstrap,
                settings.archive_path,
                topic_filter=lambda t: t.startswith(owned),
                flush_ms=settings.archive_flush_ms,
            )
            await self.writer.start()
            self._writer_task = asyncio.create_task(self.writer.run(self._writer_stop))

        env = self._child_env(bootstrap, dsn)
        cli = [sys.executable, "-m", "cli"]
        worker = ChildProcess(
            "worker", [*cli, "worker"], env=env, log_path=self.logs / "worker.log"
        )
        api_port = self.settings.api_port or free_port()
        api_url = f"http://{self.settings.api_host}:{api_port}"
        api = ChildProcess(
            "api",
            [*cli, "api", "--host", self.settings.api_host, "--port", str(api_port)],
            env=env,
            log_path=self.logs / "api.log",
        )
        projections = ChildProcess(
            "projections", [*cli, "project"], env=env, log_path=self.logs / "projections.log"
        )
        starting = [worker, projections, api]
        if self.config is not None:
            # Sources from tribal.yaml run in their own child: a slow database or host
            # never stalls the worker or the API.
            starting.append(
                ChildProcess(
                    "sources",
                    [*cli, "source", "run", "--config", str(self.config.absolute())],
                    env=env,
                    log_path=self.logs / "sources.log",
                )
            )
            self.say(f"sources from {self.config}")
        for child in starting:
            child.start()
            self.children.append(child)
        await self._wait_healthy(api_url, api)
        timings["healthy"] = time.monotonic() - t0
        self.info = StackInfo(
            bootstrap, dsn, api_url, os.getpid(), time.time(), timings, mode=self.mode,
            broker="tansu" if self.broker is not None else "external",
            index="weaviate" if self.settings.weaviate_url else "pgvector",
        )  # fmt: skip
        (self.data_dir / "stack.json").write_text(json.dumps(self.info.__dict__, indent=2))
        return self.info

    async def _wait_healthy(self, api_url: str, api: ChildProcess, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        # /healthz may take seconds (its lag, stage and agent probes each wait up to 2 s):
        # with a 1 s read timeout, a stack on Apache Kafka never saw an answer.
        async with httpx.AsyncClient(timeout=HEALTH_ANSWER_S) as client:
            while time.monotonic() < deadline:
                if not api.alive():
                    raise RuntimeError(f"the API exited early; see {self.logs / 'api.log'}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{api_url}/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise TimeoutError(f"the API did not become healthy in {timeout:.0f}s")

    def check_children(self) -> list[str]:
        """Names of children that have died."""
        return [c.name for c in self.children if not c.alive()]

    async def stop(self) -> None:
        # API first (no new writes), then the worker (its last commit), then archive.
        for child in reversed(self.children):
            await asyncio.to_thread(child.stop, 30.0)
        if self.writer is not None:
            self._writer_stop.set()
            if self._writer_task is not None:
                await self._writer_task
            with contextlib.suppress(Exception):
                await self.writer.catch_up()
            await self.writer.stop()
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)
        if self.postgres is not None:
            await asyncio.to_thread(self.postgres.stop)
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / "stack.json").unlink()


async def run_stack(
    settings: TribalSettings,
    say: Say,
    ready: Callable[[StackInfo], None],
    config: Path | None = None,
) -> None:
    """Start the stack, call ``ready``, and run until SIGINT/SIGTERM or a child dies."""
    stack = EmbeddedStack(settings, say, config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        info = await stack.start()
        ready(info)
        while not stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
            dead = stack.check_children()
            if dead:
                say(f"child process exited: {', '.join(dead)}; stopping (logs in {stack.logs})")
                break
    finally:
        say("stopping…")
        await stack.stop()
        say("stopped cleanly")
