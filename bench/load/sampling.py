"""What a running load is sampled for every few seconds: each projection's lag, the
worker group's lag per source topic, and the RSS and CPU of every process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any

import psutil  # type: ignore[import-untyped]
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from bench.load.workload import Stream
from bench.report import console
from projections.base import Projection
from projections.lag import projection_lags
from runtime.embedded.process import ChildProcess
from runtime.observability.progress import log_ends
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic

WORKER_TOPICS = (
    "files.changes", "chunks", "chunks.bulk", "kb.articles", "memory.turns", "memory.episodes"
)  # fmt: skip


async def group_lag(
    admin: AIOKafkaAdminClient,
    consumer: AIOKafkaConsumer,
    settings: TribalSettings,
    group: str | None = None,
    topics: tuple[str, ...] = WORKER_TOPICS,
) -> tuple[dict[str, int], dict[str, int]]:
    """Per source topic: messages the worker's group still has to read, and has committed."""
    tps = [
        TopicPartition(topic(short, settings), p)
        for short in topics
        for p in range(TOPICS_BY_NAME[short].partition_count(settings))
    ]
    ends = await log_ends(consumer, tps)  # Tansu's own high watermark can be a batch short
    committed = await admin.list_consumer_group_offsets(
        group or settings.consumer_group, partitions=tps
    )
    lag: dict[str, int] = {}
    read: dict[str, int] = {}
    for tp in tps:
        meta = committed.get(tp)
        done = meta.offset if meta is not None and meta.offset >= 0 else 0
        short = tp.topic.removeprefix(settings.topic_prefix)
        lag[short] = lag.get(short, 0) + max(0, ends[tp] - done)
        read[short] = read.get(short, 0) + done
    return lag, read


_PROCESSES: dict[int, Any] = {}
"""One ``psutil.Process`` per pid: ``cpu_percent`` measures since the previous call on
the same object (a fresh object always answers 0.0)."""


def _process(pid: int) -> Any:
    proc = _PROCESSES.get(pid)
    if proc is None:
        proc = _PROCESSES[pid] = psutil.Process(pid)
    return proc


def process_stats(
    children: list[ChildProcess], extra: dict[str, tuple[int, bool]] | None = None
) -> dict[str, dict[str, float]]:
    """RSS and CPU of each child with its descendants, and of ``extra`` processes
    (name: (pid, with descendants)): the broker, PostgreSQL, the bench itself."""
    pids = {c.name: (c.pid, True) for c in children if c.pid is not None and c.alive()}
    pids.update(extra or {})
    out: dict[str, dict[str, float]] = {}
    for name, (pid, descendants) in pids.items():
        try:
            proc = _process(pid)
            family = proc.children(recursive=True) if descendants else []
            procs = [proc, *(_process(c.pid) for c in family)]
            rss = sum(p.memory_info().rss for p in procs)
            cpu = sum(p.cpu_percent(None) for p in procs)
        except psutil.Error:
            continue
        out[name] = {"rss_mb": round(rss / 2**20, 1), "cpu_percent": round(cpu, 1)}
    return out


@dataclass
class Sampler:
    settings: TribalSettings
    children: list[ChildProcess]
    projections: list[Projection]
    streams: list[Stream]
    t0: float
    samples: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Processes outside ``children`` to measure, as in :func:`process_stats`."""

    async def sample(self, phase: str) -> dict[str, Any]:
        admin = AIOKafkaAdminClient(bootstrap_servers=self.settings.kafka_bootstrap)
        consumer = AIOKafkaConsumer(bootstrap_servers=self.settings.kafka_bootstrap)
        row: dict[str, Any] = {"t_s": round(time.monotonic() - self.t0, 1), "phase": phase}
        try:
            await admin.start()
            await consumer.start()
            lags = await asyncio.wait_for(projection_lags(self.settings, self.projections), 15)
            row["projection_lag"] = {lag.name: lag.messages for lag in lags}
            lag, read = await asyncio.wait_for(group_lag(admin, consumer, self.settings), 15)
            row["group_lag"], row["group_committed"] = lag, read
        except Exception as exc:  # a missed sample is recorded, the run goes on
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        finally:
            await consumer.stop()
            await admin.close()
        row["processes"] = process_stats(self.children, self.extra)
        row["calls"] = {s.name: s.done for s in self.streams}
        row["load_average_1m"] = round(os.getloadavg()[0], 2)
        # The whole machine, other people's work included (0-100 over all CPUs).
        row["machine_cpu_percent"] = psutil.cpu_percent(None)
        self.samples.append(row)
        return row

    async def every(self, interval: float, stop: asyncio.Event, phase: str) -> None:
        while not stop.is_set():
            row = await self.sample(phase)
            console.print(
                f"  t={row['t_s']:>5}s  projection lag {row.get('projection_lag')}  "
                f"group lag {sum((row.get('group_lag') or {}).values())}  "
                f"rss {_rss(row)}  "
                f"load {row['load_average_1m']}"
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)


def _rss(row: dict[str, Any]) -> dict[str, float]:
    return {name: p["rss_mb"] for name, p in row["processes"].items()}


def total_lag(row: dict[str, Any]) -> int:
    lags: list[int] = [
        *(row.get("projection_lag") or {}).values(),
        *(row.get("group_lag") or {}).values(),
    ]
    return sum(lags)


def worker_rates(samples: list[dict[str, Any]], since: float = 0.0) -> dict[str, dict[str, float]]:
    """Per source topic over the load (from ``since`` s): records written and records the
    worker committed."""
    rows = [s for s in samples if s["phase"] == "load" and "error" not in s and s["t_s"] >= since]
    if len(rows) < 2:
        return {}
    first, last = rows[0], rows[-1]
    dt = last["t_s"] - first["t_s"]
    out: dict[str, dict[str, float]] = {}
    for name, read in last["group_committed"].items():
        written = read + last["group_lag"][name]
        written0 = first["group_committed"][name] + first["group_lag"][name]
        out[name] = {
            "written_per_s": round((written - written0) / dt, 1),
            "worker_read_per_s": round((read - first["group_committed"][name]) / dt, 1),
        }
    return out
