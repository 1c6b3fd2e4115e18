"""The real path as ``tribal up`` runs it, each stage a process of its own: a Tansu
broker, an embedded PostgreSQL with pgvector, ``tribal worker`` and ``tribal project``,
on topics and a consumer group no other run shares. What a benchmark then asks of it
is counted in the search index's table."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from devstack.pipeline import REPO, TRIBAL, Pipeline, isolated_settings, settings_env
from devstack.postgres import postgres_node
from runtime.embedded.process import ChildProcess
from runtime.embedded.tansu import TansuBroker

OBJECTS = "tribal_index.objects"
KAFKA_ENV = "TRIBAL_BENCH_KAFKA_BOOTSTRAP"
"""A Kafka-API broker to measure instead of a Tansu started here."""
POSTGRES_ENV = "TRIBAL_POSTGRES_DSN"
"""A PostgreSQL to measure instead of an embedded one started here."""


@contextlib.contextmanager
def kafka_bootstrap(where: Path) -> Iterator[str]:
    """``$TRIBAL_BENCH_KAFKA_BOOTSTRAP`` when set, else a Tansu broker in ``where``."""
    with contextlib.ExitStack() as started:
        yield (
            os.environ.get(KAFKA_ENV)
            or started.enter_context(TansuBroker(log_path=where / "tansu.log")).bootstrap
        )


@contextlib.contextmanager
def postgres_dsn(where: Path) -> Iterator[str]:
    """``$TRIBAL_POSTGRES_DSN`` when set, else an embedded PostgreSQL in ``where/pg``."""
    with contextlib.ExitStack() as started:
        yield (
            os.environ.get(POSTGRES_ENV)
            or started.enter_context(postgres_node(where / "pg", durable=False)).dsn
        )


@dataclass
class Stack:
    """A running stack: its topics (``pipe``), a pool on its PostgreSQL and its
    ``tribal`` processes by name (``worker``, ``project``)."""

    pipe: Pipeline
    pool: asyncpg.Pool
    processes: dict[str, ChildProcess] = field(default_factory=dict)

    async def quiet(self, window: float = 3.0, share: float = 0.35, timeout: float = 600) -> bool:
        """Wait until the worker and the projection together have used less than
        ``share`` of a core for ``window`` seconds: everything produced is processed,
        extraction and summaries too (idle, their consumers' polling costs about 15 %
        of a core). False when they are still busy after ``timeout`` seconds; without
        ``/proc``, waits ``window`` and says True."""
        started = time.perf_counter()
        pids = [p.pid for p in self.processes.values() if p.pid is not None]
        if not pids or not _has_procfs(pids[0]):
            await asyncio.sleep(window)
            return True
        while time.perf_counter() - started < timeout:
            before = sum(_cpu_seconds(pid) for pid in pids)
            await asyncio.sleep(window)
            if sum(_cpu_seconds(pid) for pid in pids) - before < share * window:
                return True
        return False

    async def count(self, sql: str, *args: object) -> int:
        """``sql``'s single number; 0 while the projection has not made its tables yet."""
        try:
            return int(await self.pool.fetchval(sql, *args) or 0)
        except asyncpg.UndefinedTableError:
            return 0

    async def searchable(self, value: str, by: str = "document_id") -> bool:
        """Is a row of ``value`` (a document id, or a ``group_id`` with ``by``) in the index
        with its chunk and its vector?"""
        assert by in ("document_id", "group_id")
        return bool(
            await self.count(
                f"SELECT count(*) FROM {OBJECTS} WHERE {by} = $1 "
                "AND kind IS NOT NULL AND embedding IS NOT NULL",
                value,
            )
        )


@contextlib.asynccontextmanager
async def running_stack(
    scratch: Path,
    *,
    projections: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    **settings: object,
) -> AsyncIterator[Stack]:
    """The stack in ``scratch`` while the block runs: ``projections`` limits ``tribal
    project`` (``--only``; all when empty), ``env`` adds to the processes' environment,
    ``settings`` override the isolated settings (partitions, commit interval, ...)."""
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    pg = postgres_node(scratch / "pg", durable=False).start()
    children: list[ChildProcess] = []
    try:
        isolated = isolated_settings(
            broker.bootstrap, scratch / "data", postgres_dsn=pg.dsn, **settings
        )
        pipe = Pipeline(isolated)
        await pipe.create_topics()
        environment = {**settings_env(isolated), "TRIBAL_POSTGRES_DSN": pg.dsn, **(env or {})}
        only = [arg for name in projections for arg in ("--only", name)]
        for name, args in (("worker", ["worker"]), ("project", ["project", *only])):
            child = ChildProcess(
                name, [*TRIBAL, *args], env=environment, log_path=scratch / f"{name}.log", cwd=REPO
            )
            child.start()
            children.append(child)
        pool = await asyncpg.create_pool(pg.dsn, min_size=1, max_size=2)
        try:
            yield Stack(pipe, pool, {c.name: c for c in children})
        finally:
            await pool.close()
    finally:
        for child in children:
            child.stop()
        pg.stop()
        broker.stop()


def _has_procfs(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").exists()


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of ``pid`` and of the children it waited for."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except OSError:
        return 0.0
    # utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name.
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def until(
    check: Callable[[], Awaitable[bool]], timeout: float, what: str, every: float = 0.01
) -> None:
    """Poll ``check`` every ``every`` seconds until it holds, or ``TimeoutError`` naming
    ``what``."""
    deadline = time.perf_counter() + timeout
    while not await check():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{what}: not searchable within {timeout:.0f} s")
        await asyncio.sleep(every)
