"""Sustained load on the embedded stack, and 1 worker vs 2 workers.

**Load** (``bench-results/load.json``): ``EmbeddedStack`` (Tansu, embedded PostgreSQL,
a Faust worker, ``tribal project``, ``tribal api``) on a temporary data dir, driven
for ``--duration`` seconds at the same time by

* 100 turns/s: ``POST /v1/memory/turns`` over HTTP across 20 ``group_id``s (open loop);
* 50 file changes/s: ``FileChanged`` of small Python files that keep changing, through
  a ``KafkaSink`` to ``files.changes`` (open loop, each send waits for its ack);
* 50 concurrent ``POST /v1/retrieve`` clients (closed loop).

Every 5 s it samples the lag of each projection (``projection_lags``), the worker's
consumer-group lag per source topic, and the RSS and CPU of each child. The verdict
compares the samples after the first minute with the value at the end of it.

**Scaling** (``bench-results/scaling.json``): a fixed backlog of file changes, then
of turns, drained by 1 and then by 2 ``tribal worker`` processes sharing one consumer
group on Tansu; the rate of each stage is what one or two workers sustain.

**Capacity** (``bench-results/capacity.json``; each phase merges into the file):

* ``--capacity``: each worker role (``tribal worker --role chunk|embed|memory``, 1 and 2
  processes) drains a backlog of its own inputs, which gives its rate per machine; then
  the mix above scaled by one factor (100:50:50 x f) is searched: a short calibration
  run, then up to ``--steps`` runs of ``--duration`` s on a fresh stack each, bisecting
  between the highest factor that held (flat lag, every input accepted, at most 5 % of
  retrievals answering the fallback) and the lowest that did not;
* ``--per-kind``: turns alone and file changes alone (a shorter search each) and
  retrieval alone;
* ``--overload``: ``--overload-multiple`` x the held factor for ``--overload-duration``
  s, a drain, and every accepted turn and file change looked for on its topics and in
  the index;
* the projection, always: machines like this one for the whole 100:50:50 load, per role
  from the role rates and for the API and the store from the cores they used.

    python -m scripts.bench_load [--quick | --duration 300] [--skip-load] [--skip-scaling]
    python -m scripts.bench_load --capacity [--per-kind] [--overload] [--duration 300]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import hashlib
import importlib
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import asyncpg  # noqa: E402
import psutil  # type: ignore[import-untyped]  # noqa: E402
from aiokafka import AIOKafkaConsumer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from events.chunks import ChunksEmbedded  # noqa: E402
from events.deadletter import DeadLettered  # noqa: E402
from events.files import FileChanged  # noqa: E402
from events.kb import KbArticleUpserted  # noqa: E402
from events.memory import EpisodeRecorded  # noqa: E402
from events.registry import registry_from_settings  # noqa: E402
from events.serde import EventSerde  # noqa: E402
from projections.base import Projection  # noqa: E402
from projections.index.pgvector import DEFAULT_SCHEMA as INDEX_SCHEMA  # noqa: E402
from projections.index.port import Kind  # noqa: E402
from projections.lag import projection_lags  # noqa: E402
from projections.registry import projections_for  # noqa: E402
from runtime.embedded.process import ChildProcess, free_port  # noqa: E402
from runtime.embedded.supervisor import EmbeddedStack  # noqa: E402
from runtime.embedded.tansu import TansuBroker  # noqa: E402
from runtime.observability.logs import configure_logging  # noqa: E402
from runtime.observability.progress import ROLES, log_ends, role_group  # noqa: E402
from runtime.settings import TribalSettings  # noqa: E402
from runtime.topics import TOPICS_BY_NAME, ensure_topics, topic  # noqa: E402
from sources.sink import KafkaSink  # noqa: E402
from sources.turns import MemoryIngestor, Session, Turn  # noqa: E402
from streams.chunker.defaults import default_registry  # noqa: E402
from streams.chunker.files import FileChunker, file_document_id  # noqa: E402

console = Console(width=150)
OUT = ROOT / "bench-results"
HELPDESK = ROOT / "tests" / "sources" / "kb_fixtures" / "helpdesk.json"
# The topics the worker's agents consume; their group lag is the worker's backlog.
WORKER_TOPICS = (
    "files.changes", "chunks", "chunks.bulk", "kb.articles", "memory.turns", "memory.episodes"
)  # fmt: skip
LAG_TOLERANCE = (100.0, 0.20)  # messages, fraction: lag may wobble this much
RSS_TOLERANCE = (30.0, 0.10)  # MB, fraction
T = TypeVar("T")


# ---------------------------------------------------------------- workload pieces


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass
class Stream:
    """What one load stream did: latencies of the calls that succeeded, and failures."""

    name: str
    target_per_s: float | None
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    skipped: int = 0
    """Calls not started because too many were already in flight (open loop only)."""
    degraded: int = 0
    last_error: str = ""

    @property
    def done(self) -> int:
        return len(self.latencies_ms)

    def summary(self, seconds: float) -> dict[str, Any]:
        return {
            "target_per_s": self.target_per_s,
            "calls": self.done,
            "achieved_per_s": round(self.done / seconds, 1),
            "p50_ms": round(percentile(self.latencies_ms, 50), 2),
            "p95_ms": round(percentile(self.latencies_ms, 95), 2),
            "p99_ms": round(percentile(self.latencies_ms, 99), 2),
            "errors": self.errors,
            "skipped_in_flight_cap": self.skipped,
            "degraded": self.degraded,
            "last_error": self.last_error,
        }


async def timed(stream: Stream, call: Callable[[], Awaitable[None]]) -> None:
    t0 = time.perf_counter()
    try:
        await call()
    except Exception as exc:  # a failed call is a result, not a crash of the bench
        stream.errors += 1
        stream.last_error = f"{type(exc).__name__}: {exc}"[:200]
        return
    stream.latencies_ms.append((time.perf_counter() - t0) * 1000)


async def open_loop(
    stream: Stream, rate: float, stop: asyncio.Event, call: Callable[[int], Awaitable[None]]
) -> None:
    """Start ``call(n)`` ``rate`` times a second whatever the answers take (capped)."""
    cap = int(rate * 10)  # 10 s worth in flight; beyond that the system is not keeping up
    tasks: set[asyncio.Task[None]] = set()
    start, n = time.perf_counter(), 0
    while not stop.is_set():
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            continue
        if len(tasks) >= cap:
            stream.skipped += 1
        else:
            task = asyncio.create_task(timed(stream, lambda n=n: call(n)))  # type: ignore[misc]
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        n += 1
    if tasks:
        await asyncio.wait(tasks, timeout=30)
    for task in tasks:
        task.cancel()


def file_change(n: int, paths: int = 500) -> FileChanged:
    """A small Python file; every call changes one of ``paths`` files."""
    k, version = n % paths, n // paths
    content = (
        f'"""Refund rules, module {k} (revision {version})."""\n\n\n'
        f"def refund_limit_{k}(order_total: float) -> float:\n"
        f'    """Largest refund for an order, revision {version}."""\n'
        f"    return min(order_total, {100 + version})\n\n\n"
        f"class Parcel{k}:\n"
        f'    """A parcel that may get lost."""\n\n'
        f"    def lost(self, days: int) -> bool:\n"
        f"        return days > {7 + version % 5}\n"
    )
    return FileChanged(
        repo="load",
        path=f"src/refunds/mod_{k}.py",
        content=content,
        sha256=hashlib.sha256(content.encode()).hexdigest(),
        language="python",
        size_bytes=len(content.encode()),
    )


def helpdesk() -> list[dict[str, Any]]:
    articles: list[dict[str, Any]] = json.loads(HELPDESK.read_text())
    return articles


def kb_events() -> list[KbArticleUpserted]:
    return [
        KbArticleUpserted(
            article_id=a["id"], title=a["title"], url=a["url"], content=a["content"],
            intent=tuple(a["metadata"]["intent"]), device=tuple(a["metadata"]["device"]),
            last_updated=datetime.fromisoformat(a["metadata"]["last_updated"]),
        )
        for a in helpdesk()
    ]  # fmt: skip


def retrieve_bodies() -> list[dict[str, Any]]:
    return [
        {"intent": a["metadata"]["intent"][0],
         "message": f"{a['title']}: my {a['metadata']['device'][0]} needs help",
         "metadata": {"product": a["metadata"]["device"][0]}}
        for a in helpdesk()
    ]  # fmt: skip


def turn_body(n: int, groups: int) -> dict[str, str]:
    return {
        "group_id": f"default:load-{n % groups}",
        "user_message": f"My order #{n} never arrived and Parcel{n % 97} shows lost.",
        "agent_response": f"I opened refund case R-{n} for order #{n}.",
    }


# ---------------------------------------------------------------- sampling


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


# ---------------------------------------------------------------- verdict


def trend(
    points: list[tuple[float, float]], warmup: float, tol: tuple[float, float]
) -> dict[str, Any]:
    """Did a series grow after ``warmup`` seconds? Least-squares slope and last vs base."""
    post = [(t, v) for t, v in points if t >= warmup]
    if len(post) < 3:
        return {"verdict": "too few samples", "samples_after_warmup": len(post)}
    base = post[0][1]
    last = sum(v for _, v in post[-3:]) / 3
    mt = sum(t for t, _ in post) / len(post)
    mv = sum(v for _, v in post) / len(post)
    var = sum((t - mt) ** 2 for t, _ in post)
    slope = sum((t - mt) * (v - mv) for t, v in post) / var if var else 0.0
    absolute, relative = tol
    allowed = base * (1 + relative) + absolute
    grew = last > allowed and slope * (post[-1][0] - post[0][0]) > absolute
    return {
        "at_end_of_warmup": round(base, 1),
        "first_minute_max": round(max((v for t, v in points if t < warmup), default=base), 1),
        "last": round(last, 1),
        "allowed": round(allowed, 1),
        "slope_per_min": round(slope * 60, 2),
        "grew": grew,
    }


def verdict(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    rows = [s for s in samples if s["phase"] == "load" and "error" not in s]
    lag_series: dict[str, list[tuple[float, float]]] = {}
    for s in rows:
        for name, n in s["projection_lag"].items():
            lag_series.setdefault(f"projection:{name}", []).append((s["t_s"], float(n)))
        for name, n in s["group_lag"].items():
            lag_series.setdefault(f"worker:{name}", []).append((s["t_s"], float(n)))
    rss_series: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        if s["phase"] != "load":
            continue
        for name, p in s["processes"].items():
            rss_series.setdefault(name, []).append((s["t_s"], p["rss_mb"]))
    lag = {k: trend(v, warmup, LAG_TOLERANCE) for k, v in lag_series.items()}
    rss = {k: trend(v, warmup, RSS_TOLERANCE) for k, v in rss_series.items()}
    grown = [f"lag {k}" for k, v in lag.items() if v.get("grew")] + [
        f"rss {k}" for k, v in rss.items() if v.get("grew")
    ]
    return {
        "warmup_s": warmup,
        "rule": f"after {warmup:.0f}s, a series grew if the mean of its last 3 samples exceeds "
        f"base*(1+rel)+abs (lag: rel {LAG_TOLERANCE[1]}, abs {LAG_TOLERANCE[0]:.0f} messages; "
        f"RSS: rel {RSS_TOLERANCE[1]}, abs {RSS_TOLERANCE[0]:.0f} MB) and its least-squares "
        "slope adds more than abs over the window",
        "lag": lag,
        "rss_mb": rss,
        "grew": grown,
        "no_growth_after_first_minute": not grown,
    }


# ---------------------------------------------------------------- the load run


async def wait_for(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        with contextlib.suppress(Exception):
            if await check():
                return time.monotonic() - t0
        await asyncio.sleep(1.0)
    raise TimeoutError(f"{what} not reached within {timeout:.0f}s")


async def run_load(
    args: argparse.Namespace, scratch: Path, ledger: Ledger | None = None
) -> dict[str, Any]:
    """``args.turns_rate`` turns/s, ``args.files_rate`` file changes/s and
    ``args.retrieve_clients`` retrieval clients (0 leaves a stream out) for
    ``args.duration`` s on a fresh embedded stack; with ``ledger``, what was accepted is
    recorded and looked for in the index once the backlog has drained."""
    settings = TribalSettings(
        data_dir=scratch / "data", kafka_bootstrap="", postgres_dsn="", api_port=free_port()
    )
    stack = EmbeddedStack(settings, say=lambda m: console.print(f"  [dim]{m}[/dim]"))
    info = await stack.start()
    live = settings.model_copy(
        update={"kafka_bootstrap": info.kafka_bootstrap, "postgres_dsn": info.postgres_dsn}
    )
    projections = projections_for(live)
    for p in projections:
        await p.setup()
    serde = EventSerde(registry_from_settings(live))
    turns = Stream("turns_http", args.turns_rate)
    files = Stream("file_changes_kafka", args.files_rate)
    retrieve = Stream("retrieve_http", None)
    streams = [turns, files, retrieve]
    connector = aiohttp.TCPConnector(limit=max(1, args.retrieve_clients + int(args.turns_rate * 2)))
    try:
        async with (
            KafkaSink(live.kafka_bootstrap, serde, live.topic_prefix) as sink,
            aiohttp.ClientSession(info.api_url, connector=connector) as http,
        ):
            # Warm-up: help-desk articles to retrieve, and one of each input, so that
            # model loads and group joins are not counted as load.
            for event in kb_events():
                await sink.emit("kb.articles", event.article_id, event)
            for n in range(3):
                change = file_change(10_000 + n)
                await sink.emit("files.changes", change.key, change)
                async with http.post("/v1/memory/turns", json=turn_body(n, 3)) as r:
                    r.raise_for_status()
            await sink.flush()
            sampler = Sampler(live, stack.children, projections, streams, time.monotonic())
            sampler.extra["bench"] = (os.getpid(), False)  # load generator and archive writer
            for name, service in (("tansu", stack.broker), ("postgres", stack.postgres)):
                if service is not None and service.pid is not None:
                    sampler.extra[name] = (service.pid, True)
            try:
                warm = await wait_for(
                    lambda: _caught_up(sampler), args.warmup_timeout, "warm-up caught up"
                )
            except TimeoutError as exc:
                last = sampler.samples[-1] if sampler.samples else {}
                stuck = {k: last.get(k) for k in ("projection_lag", "group_lag", "error")}
                raise WarmupStuckError(f"{exc}; last sample: {stuck}") from exc
            console.print(f"  warm-up caught up in {warm:.1f}s; load for {args.duration:.0f}s")
            # What the stack costs with nothing to do: CPU is measured between samples.
            await sampler.sample("idle")
            await asyncio.sleep(args.sample_every)
            await sampler.sample("idle")

            async def post_turn(n: int) -> None:
                async with http.post("/v1/memory/turns", json=turn_body(n, args.groups)) as r:
                    r.raise_for_status()
                    receipt = await r.json()
                if ledger is not None:
                    ledger.episodes[receipt["episode_id"]] = receipt["group_id"]

            async def send_file(n: int) -> None:
                change = file_change(n)
                await sink.emit_and_wait("files.changes", change.key, change)
                if ledger is not None:
                    ledger.sent_file(change)

            bodies = retrieve_bodies()

            async def retrieve_client(c: int, stop: asyncio.Event) -> None:
                n = c
                while not stop.is_set():
                    body = bodies[n % len(bodies)]
                    n += 1
                    result: dict[str, Any] = {}

                    async def call(
                        body: dict[str, Any] = body, out: dict[str, Any] = result
                    ) -> None:
                        async with http.post("/v1/retrieve", json=body) as r:
                            r.raise_for_status()
                            out.update(await r.json())

                    await timed(retrieve, call)
                    if result.get("gaps") == ["Knowledge retrieval unavailable"]:
                        retrieve.degraded += 1

            stop = asyncio.Event()
            sampler.t0 = time.monotonic()
            if ledger is not None:
                ledger.deadletters_before = await topic_size(live, "deadletter")
            load = [
                *(
                    asyncio.create_task(open_loop(stream, rate, stop, call))
                    for stream, rate, call in (
                        (turns, args.turns_rate, post_turn),
                        (files, args.files_rate, send_file),
                    )
                    if rate > 0
                ),
                *(
                    asyncio.create_task(retrieve_client(c, stop))
                    for c in range(args.retrieve_clients)
                ),
                asyncio.create_task(sampler.every(args.sample_every, stop, "load")),
            ]
            await asyncio.sleep(args.duration)
            stop.set()
            await asyncio.wait(load, timeout=60)
            elapsed = time.monotonic() - sampler.t0
            dead = stack.check_children()
            console.print(f"  load stopped after {elapsed:.0f}s; draining…")
            drain_t0 = time.monotonic()
            drained: float | None = None
            while time.monotonic() - drain_t0 < args.drain_timeout:
                row = await sampler.sample("drain")
                if "error" not in row and total_lag(row) == 0:
                    drained = round(time.monotonic() - drain_t0, 1)
                    break
                await asyncio.sleep(2.0)
            landed = None
            if ledger is not None:
                console.print("  looking for every accepted turn and file change…")
                landed = await verify_landed(live, ledger)
    finally:
        for p in projections:
            with contextlib.suppress(Exception):
                await p.close()
        await stack.stop()
    warmup = min(60.0, args.duration / 3)
    return {
        "rates": {
            "turns_per_s": args.turns_rate,
            "files_per_s": args.files_rate,
            "retrieval_clients": args.retrieve_clients,
        },
        "warmup_caught_up_s": round(warm, 1),
        "seconds": round(elapsed, 1),
        "streams": {s.name: s.summary(args.duration) for s in streams},
        "retrieve_clients": args.retrieve_clients,
        "groups": args.groups,
        "children_died": dead,
        "drained_after_s": drained,
        "lag_left_after_drain": None if drained is not None else total_lag(sampler.samples[-1]),
        "worker_topics": worker_rates(sampler.samples),
        "worker_topics_after_warmup": worker_rates(sampler.samples, warmup),
        "drain_timeout_s": args.drain_timeout,
        "cpu_cores": cpu_cores(sampler.samples, warmup),
        "landed": landed,
        "samples": sampler.samples,
        "verdict": verdict(sampler.samples, warmup),
    }


class WarmupStuckError(TimeoutError):
    """The stack never caught up with the warm-up inputs: no load was run."""


async def load_once_more(
    args: argparse.Namespace, scratch: Path, ledger: Ledger | None = None
) -> dict[str, Any]:
    """:func:`run_load`, on a second fresh stack if the first never caught up with its
    warm-up (seen on the shared machine); the failure is kept."""
    try:
        return await run_load(args, scratch, ledger)
    except WarmupStuckError as exc:
        console.print(f"  [yellow]{exc}: once more on a fresh stack")
        result = await run_load(args, scratch.with_name(scratch.name + "-again"), ledger)
        result["first_attempt"] = str(exc)
        return result


async def _caught_up(sampler: Sampler) -> bool:
    row = await sampler.sample("warmup")
    return "error" not in row and total_lag(row) == 0 and bool(row["projection_lag"])


def cpu_cores(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    """Mean cores each process used under load after ``warmup`` s, and the machine's."""
    rows = [s for s in samples if s["phase"] == "load" and s["t_s"] >= warmup]
    if not rows:
        return {}
    names = sorted({n for s in rows for n in s["processes"]})
    mean = {
        n: round(sum(s["processes"].get(n, {}).get("cpu_percent", 0.0) for s in rows)
                 / len(rows) / 100, 2)
        for n in names
    }  # fmt: skip
    machine = sum(s.get("machine_cpu_percent", 0.0) for s in rows) / len(rows)
    cores = machine / 100 * (os.cpu_count() or 1)
    idle = [s for s in samples if s["phase"] == "idle"][-1:]
    return {
        "processes": mean,
        "idle_processes": {
            n: round(p["cpu_percent"] / 100, 2) for s in idle for n, p in s["processes"].items()
        },
        "machine": round(cores, 2),
        "others": round(max(0.0, cores - sum(mean.values())), 2),
        "load_average_1m": {
            "min": min(s["load_average_1m"] for s in rows),
            "mean": round(sum(s["load_average_1m"] for s in rows) / len(rows), 2),
            "max": max(s["load_average_1m"] for s in rows),
        },
    }


# ---------------------------------------------------------------- what landed


@dataclass
class Ledger:
    """What a load had accepted (a 202, a broker ack), to look for once it has drained."""

    episodes: dict[str, str] = field(default_factory=dict)
    """The episode id of each accepted turn: its group id."""
    versions: set[tuple[str, str]] = field(default_factory=set)
    """(document id, sha256) of each acknowledged file change."""
    latest: dict[str, str] = field(default_factory=dict)
    """Document id: the sha256 of its last acknowledged change."""
    deadletters_before: int = 0

    def sent_file(self, change: FileChanged) -> None:
        doc = file_document_id(change.repo, change.path)
        self.versions.add((doc, change.sha256))
        self.latest[doc] = change.sha256  # acks of one key come in the order it was sent


async def scan_topic(
    settings: TribalSettings, short: str, item: Callable[[Any], T | None]
) -> list[T]:
    """``item`` of every decoded record of a topic, from its beginning to its end now."""
    serde = EventSerde(registry_from_settings(settings))
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap, enable_auto_commit=False
    )
    await consumer.start()
    out: list[T] = []
    try:
        tps = [
            TopicPartition(topic(short, settings), p)
            for p in range(TOPICS_BY_NAME[short].partition_count(settings))
        ]
        ends = await log_ends(consumer, tps)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        todo = {tp for tp in tps if ends[tp] > 0}
        deadline = time.monotonic() + 300
        while todo and time.monotonic() < deadline:
            batch = await consumer.getmany(*todo, timeout_ms=500, max_records=5000)
            for tp, records in batch.items():
                for record in records:
                    if record.offset < ends[tp]:
                        found = item(serde.decode(record.value))
                        if found is not None:
                            out.append(found)
                if records and records[-1].offset + 1 >= ends[tp]:
                    todo.discard(tp)
        if todo:
            raise TimeoutError(f"{short}: not read to its end within 300 s")
    finally:
        await consumer.stop()
    return out


async def topic_size(settings: TribalSettings, short: str) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka_bootstrap)
    await consumer.start()
    try:
        tps = [
            TopicPartition(topic(short, settings), p)
            for p in range(TOPICS_BY_NAME[short].partition_count(settings))
        ]
        return sum((await log_ends(consumer, tps)).values())
    finally:
        await consumer.stop()


async def verify_landed(live: TribalSettings, ledger: Ledger) -> dict[str, Any]:
    """Every accepted turn an episode (on its topic and in the index, in its group), every
    acknowledged file change embedded, each file's last change the version the index
    holds with all its vectors, and no new dead letters."""

    def episode(event: Any) -> str | None:
        return str(event.episode_id) if isinstance(event, EpisodeRecorded) else None

    def embedded(event: Any) -> tuple[str, str] | None:
        if not isinstance(event, ChunksEmbedded):
            return None
        return event.document_id, event.document_version

    def dead(event: Any) -> str:
        if not isinstance(event, DeadLettered):
            return "not a DeadLettered"
        return f"{event.origin_topic.removeprefix(live.topic_prefix)}: {event.error_code}"

    on_topic = set(await scan_topic(live, "memory.episodes", episode))
    versions = set(await scan_topic(live, "embeddings", embedded))
    letters = await scan_topic(live, "deadletter", dead)
    conn = await asyncpg.connect(live.postgres_dsn)
    try:
        episodes = await conn.fetch(
            f'SELECT document_id, group_id, embedding IS NOT NULL AS vector FROM "{INDEX_SCHEMA}"'
            ".objects WHERE kind = $1",
            Kind.EPISODE.value,
        )
        # kind IS NULL: a vector waiting for its chunk (not searchable), kept apart.
        files = await conn.fetch(
            "SELECT document_id, "
            "array_agg(DISTINCT document_version) FILTER (WHERE kind IS NOT NULL) AS versions, "
            "bool_and(embedding IS NOT NULL) FILTER (WHERE kind IS NOT NULL) AS vectors, "
            "count(*) FILTER (WHERE kind IS NULL) AS pending "
            f'FROM "{INDEX_SCHEMA}".objects WHERE document_id LIKE $1 GROUP BY document_id',
            "file:load:%",
        )
    finally:
        await conn.close()
    indexed = {r["document_id"]: (r["group_id"], r["vector"]) for r in episodes}
    accepted = ledger.episodes
    not_on_topic = [e for e in accepted if e not in on_topic]
    not_indexed = [e for e in accepted if e not in indexed]
    wrong_group = [e for e, g in accepted.items() if e in indexed and indexed[e][0] != g]
    no_vector = [e for e in accepted if e in indexed and not indexed[e][1]]
    held = {r["document_id"]: (set(r["versions"] or ()), bool(r["vectors"])) for r in files}
    pending = {r["document_id"]: r["pending"] for r in files if r["pending"]}
    not_embedded = sorted(ledger.versions - versions)
    stale = [d for d, sha in ledger.latest.items() if held.get(d, (set(), False))[0] != {sha}]
    vectorless = [d for d in ledger.latest if d in held and not held[d][1]]
    new_letters = letters[ledger.deadletters_before :]
    lost = not_on_topic or not_indexed or wrong_group or not_embedded or stale or vectorless
    return {
        "turns": {
            "accepted": len(accepted),
            "groups": len(set(accepted.values())),
            "episodes_on_topic": len(accepted) - len(not_on_topic),
            "episodes_in_index": len(accepted) - len(not_indexed),
            "in_another_group": len(wrong_group),
            "without_vector": len(no_vector),
            "missing_examples": (not_indexed or not_on_topic)[:5],
        },
        "files": {
            "acknowledged_changes": len(ledger.versions),
            "changes_embedded": len(ledger.versions) - len(not_embedded),
            "paths": len(ledger.latest),
            "paths_at_last_version": len(ledger.latest) - len(stale),
            "paths_without_all_vectors": len(vectorless),
            # Vectors of a version replaced before they came (a late bulk-lane batch):
            # not searchable and not lost, but left behind.
            "pending_vectors_left": sum(pending.values()),
            "paths_with_pending_vectors": len(pending),
            "missing_examples": [f"{d}@{v[:8]}" for d, v in not_embedded[:5]] + stale[:5],
        },
        "deadletters": {
            "before_load": ledger.deadletters_before,
            "new": len(new_letters),
            "by_origin": dict(Counter(new_letters)),
        },
        "nothing_lost": not lost and not new_letters,
    }


# ---------------------------------------------------------------- lag plot


def write_lag_plot(result: dict[str, Any], out: Path) -> Path:
    """The lag series as a PNG when matplotlib is importable, else as CSV."""
    rows = [s for s in result["samples"] if "error" not in s]
    names = sorted({f"projection:{k}" for s in rows for k in s["projection_lag"]})
    names += sorted({f"worker:{k}" for s in rows for k in s["group_lag"]})

    def value(s: dict[str, Any], name: str) -> int:
        kind, _, key = name.partition(":")
        found = (s["projection_lag"] if kind == "projection" else s["group_lag"]).get(key, 0)
        return int(found)

    try:
        # imported by name: matplotlib is optional and not a dependency of Tribal
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        path = out.with_suffix(".csv")
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["t_s", "phase", *names])
            for s in rows:
                writer.writerow([s["t_s"], s["phase"], *(value(s, n) for n in names)])
        return path
    fig, ax = plt.subplots(figsize=(10, 5))
    for name in names:
        ax.plot([s["t_s"] for s in rows], [value(s, name) for s in rows], label=name)
    ax.set_xlabel("seconds since load start")
    ax.set_ylabel("messages behind")
    ax.set_title("Tribal consumer lag under load")
    ax.legend(fontsize="small")
    path = out.with_suffix(".png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- 1 vs 2 workers


@dataclass
class TopicCounter:
    """Unique items seen on one topic, read from the beginning in the background."""

    bootstrap: str
    name: str
    partitions: int
    item: Callable[[bytes | None, bytes], tuple[str, int] | None]
    """(unique id, weight) of a record, e.g. (document id, number of chunks)."""
    seen: dict[str, int] = field(default_factory=dict)

    async def run(self, stop: asyncio.Event) -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tps = [TopicPartition(self.name, p) for p in range(self.partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while not stop.is_set():
                batch = await consumer.getmany(timeout_ms=200, max_records=5000)
                for msgs in batch.values():
                    for m in msgs:
                        found = self.item(m.key, m.value)
                        if found is not None:
                            self.seen[found[0]] = found[1]
        finally:
            await consumer.stop()


def worker_env(settings: TribalSettings, metrics_port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update(
        {
            "TRIBAL_KAFKA_BOOTSTRAP": settings.kafka_bootstrap,
            "TRIBAL_DATA_DIR": str(settings.data_dir),
            "TRIBAL_TOPIC_PREFIX": settings.topic_prefix,
            "TRIBAL_CONSUMER_GROUP": settings.consumer_group,
            "TRIBAL_DEFAULT_PARTITIONS": str(settings.default_partitions),
            "TRIBAL_COMMIT_INTERVAL": str(settings.commit_interval),
            "TRIBAL_METRICS_PORT": str(metrics_port),
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


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


async def drain(
    run: int, workers: int, bootstrap: str, scratch: Path, files: int, turns: int, partitions: int
) -> dict[str, Any]:
    tag = f"s{run}w{workers}p{os.getpid() % 10000}"
    settings = TribalSettings(
        kafka_bootstrap=bootstrap, data_dir=scratch / tag, topic_prefix=f"{tag}.",
        consumer_group=tag, default_partitions=partitions, commit_interval=0.5,
    )  # fmt: skip
    await ensure_topics(settings)
    serde = EventSerde(registry_from_settings(settings))

    def episode(key: bytes | None, value: bytes) -> tuple[str, int] | None:
        found = str(getattr(serde.decode(value), "source_event_id", ""))
        return (found, 1) if found else None

    def document(key: bytes | None, value: bytes) -> tuple[str, int] | None:
        return (key or b"").decode(), len(getattr(serde.decode(value), "vectors", ()))

    embedded = TopicCounter(bootstrap, topic("embeddings", settings), partitions, document)
    episodes = TopicCounter(bootstrap, topic("memory.episodes", settings), partitions, episode)
    stop = asyncio.Event()
    counting = [asyncio.create_task(c.run(stop)) for c in (embedded, episodes)]
    ports = [free_port() for _ in range(workers)]
    children = [
        ChildProcess(
            f"worker-{i}", [sys.executable, "-m", "cli", "worker"],
            env=worker_env(settings, ports[i]), log_path=scratch / f"{tag}-{i}.log", cwd=ROOT,
        )
        for i in range(workers)
    ]  # fmt: skip
    out: dict[str, Any] = {"workers": workers, "partitions": partitions}
    try:
        for child in children:
            child.start()
        async with (
            KafkaSink(bootstrap, serde, settings.topic_prefix) as sink,
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
        ):
            ingestor = MemoryIngestor(sink)
            # Warm-up on every partition until every worker has processed something:
            # both have loaded the model and own partitions before the clock starts.
            warm_files = [file_change(50_000 + n, paths=10**6) for n in range(4 * partitions)]
            t0 = time.monotonic()
            for change in warm_files:
                await sink.emit("files.changes", change.key, change)
            for n in range(4 * partitions):
                await ingestor.ingest_turn(
                    Turn(user_message=f"warm-up {n}"), Session(tenant_id="bench", id=f"warm{n}")
                )
            await sink.flush()

            async def warmed() -> bool:
                if any(not c.alive() for c in children):
                    raise RuntimeError(f"a worker died; logs in {scratch}")
                per = [await processed_by(http, p) for p in ports]
                return (
                    len(embedded.seen) >= len(warm_files)
                    and len(episodes.seen) >= 4 * partitions
                    and all(p.get("file_chunker", 0) > 0 for p in per)
                )

            out["warmup_s"] = round(await wait_for(warmed, 300, "workers warmed up"), 1)
            await asyncio.sleep(2 * settings.rebalance_timeout)  # let the group settle
            before = [await processed_by(http, p) for p in ports]

            # Files: FileChanged → file_chunker → chunks → embedder → embeddings.
            base = len(embedded.seen)
            chunks0 = sum(embedded.seen.values())
            t0 = time.monotonic()
            for n in range(files):
                change = file_change(100_000 + n, paths=10**6)
                await sink.emit("files.changes", change.key, change)
            await sink.flush()
            await wait_for(lambda: _count(embedded, base + files), 600, "file backlog drained")
            files_s = time.monotonic() - t0
            chunks = sum(embedded.seen.values()) - chunks0
            mid = [await processed_by(http, p) for p in ports]

            # Turns: TurnRecorded → episoder (embedding) → memory.episodes.
            base = len(episodes.seen)
            t0 = time.monotonic()
            sem = asyncio.Semaphore(50)

            async def one(n: int) -> None:
                async with sem:
                    await ingestor.ingest_turn(
                        Turn(user_message=f"order #{n} never arrived", agent_response="refunded"),
                        Session(tenant_id="bench", id=f"g{n % 20}"),
                    )

            await asyncio.gather(*(one(n) for n in range(turns)))
            await wait_for(lambda: _count(episodes, base + turns), 600, "turn backlog drained")
            turns_s = time.monotonic() - t0
            after = [await processed_by(http, p) for p in ports]
    finally:
        stop.set()
        await asyncio.gather(*counting, return_exceptions=True)
        for child in children:
            await asyncio.to_thread(child.stop, 20.0)

    def delta(a: list[dict[str, float]], b: list[dict[str, float]], agent: str) -> list[int]:
        return [int(y.get(agent, 0) - x.get(agent, 0)) for x, y in zip(a, b, strict=True)]

    out["files"] = {
        "backlog": files,
        "seconds": round(files_s, 2),
        "files_per_s": round(files / files_s, 1),
        "files_per_s_per_worker": round(files / files_s / workers, 1),
        "chunks_embedded": chunks,
        "chunks_per_s": round(chunks / files_s, 1),
        "chunker_events_per_worker": delta(before, mid, "file_chunker"),
        "embedder_events_per_worker": delta(before, mid, "embedder"),
    }
    out["turns"] = {
        "backlog": turns,
        "seconds": round(turns_s, 2),
        "episodes_per_s": round(turns / turns_s, 1),
        "episodes_per_s_per_worker": round(turns / turns_s / workers, 1),
        "episoder_events_per_worker": delta(mid, after, "episoder"),
    }
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out


async def _count(counter: TopicCounter, wanted: int) -> bool:
    return len(counter.seen) >= wanted


async def run_scaling(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    try:
        runs = []
        for run, workers in enumerate(args.scale_workers):
            console.print(f"  draining {args.scale_files} files + {args.scale_turns} turns "
                          f"with {workers} worker(s)…")  # fmt: skip
            runs.append(
                await drain(run, workers, broker.bootstrap, scratch, args.scale_files,
                            args.scale_turns, args.scale_partitions)
            )  # fmt: skip
    finally:
        broker.stop()

    def mean_rate(workers: int, stage: str, key: str) -> float:
        rates = [r[stage][key] for r in runs if r["workers"] == workers]
        return sum(rates) / len(rates) if rates else float("nan")

    return {
        "method": "a fixed backlog produced at once after warm-up (model loaded, every worker "
        "assigned partitions), timed from the first send until every item came out of the "
        "stage; files and turns one after the other; Tansu on loopback, no PostgreSQL",
        "runs": runs,
        "speedup_2_over_1": {
            "files": round(
                mean_rate(2, "files", "files_per_s") / mean_rate(1, "files", "files_per_s"), 2
            ),
            "turns": round(
                mean_rate(2, "turns", "episodes_per_s") / mean_rate(1, "turns", "episodes_per_s"), 2
            ),
        },
    }


# ---------------------------------------------------------------- per-role rates

ROLE_AGENT = {"chunk": "file_chunker", "embed": "embedder", "memory": "episoder"}
"""The agent of each measured role whose metric shows that a worker has started."""


async def role_drain(
    run: int, role: str, workers: int, bootstrap: str, scratch: Path, items: int, partitions: int
) -> dict[str, Any]:
    """How fast ``workers`` ``tribal worker --role role`` processes drain a backlog of
    ``items`` inputs of their own (file changes, chunked files, turns), from the first
    send until their group has committed every record of the role's topics."""
    tag = f"r{run}{role[:2]}{workers}p{os.getpid() % 10000}"
    settings = TribalSettings(
        kafka_bootstrap=bootstrap, data_dir=scratch / tag, topic_prefix=f"{tag}.",
        consumer_group=tag, default_partitions=partitions, commit_interval=0.5,
    )  # fmt: skip
    await ensure_topics(settings)
    serde = EventSerde(registry_from_settings(settings))
    group, topics = role_group(settings, role), ROLES[role]
    ports = [free_port() for _ in range(workers)]
    children = []
    for i in range(workers):
        env = worker_env(settings, ports[i])
        # The live lane at full batches: a machine at capacity is never 32 records behind.
        env["TRIBAL_BULK_BACKLOG"] = "0"
        children.append(
            ChildProcess(
                f"{role}-{i}", [sys.executable, "-m", "cli", "worker", "--role", role],
                env=env, log_path=scratch / f"{tag}-{i}.log", cwd=ROOT,
            )
        )  # fmt: skip
    chunker = FileChunker(default_registry())

    async def inputs(first: int, n: int) -> list[tuple[str, str, Any]]:
        """(topic, key, event) to send; files are chunked here for the embed role."""
        changes = [file_change(first + k, paths=10**6) for k in range(n)]
        if role == "chunk":
            return [("files.changes", c.key, c) for c in changes]
        if role == "embed":
            emits = [await chunker.chunked(c) for c in changes]
            return [(e.topic, e.key, e.event) for e in emits]
        return [("memory.turns", "", first + k) for k in range(n)]

    async def lag() -> int:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
        await admin.start()
        await consumer.start()
        try:
            behind, _ = await group_lag(admin, consumer, settings, group, topics)
        finally:
            await consumer.stop()
            await admin.close()
        return sum(behind.values())

    out: dict[str, Any] = {"role": role, "workers": workers, "partitions": partitions}
    try:
        for child in children:
            child.start()
        async with (
            KafkaSink(bootstrap, serde, settings.topic_prefix) as sink,
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http,
        ):
            ingestor = MemoryIngestor(sink)
            sem = asyncio.Semaphore(50)

            async def send(item: tuple[str, str, Any]) -> None:
                name, key, event = item
                if name != "memory.turns":
                    await sink.emit(name, key, event)
                    return
                async with sem:
                    await ingestor.ingest_turn(
                        Turn(user_message=f"order #{event} never arrived", agent_response="ok"),
                        Session(tenant_id="bench", id=f"g{event % 20}"),
                    )

            async def send_all(items: list[tuple[str, str, Any]]) -> None:
                await asyncio.gather(*(send(i) for i in items))
                await sink.flush()

            # Warm-up on every partition until every worker has processed something.
            await send_all(await inputs(500_000, 4 * partitions))

            async def warmed() -> bool:
                if any(not c.alive() for c in children):
                    raise RuntimeError(f"a {role} worker died; logs in {scratch}")
                per = [await processed_by(http, p) for p in ports]
                return await lag() == 0 and all(p.get(ROLE_AGENT[role], 0) > 0 for p in per)

            out["warmup_s"] = round(await wait_for(warmed, 300, f"{role} workers warmed up"), 1)
            await asyncio.sleep(2 * settings.rebalance_timeout)  # let the group settle
            backlog = await inputs(0, items)
            t0 = time.monotonic()
            await send_all(backlog)
            sent_s = time.monotonic() - t0
            while await lag() > 0:
                if time.monotonic() - t0 > 900:
                    raise TimeoutError(f"{role}: backlog not drained within 900 s")
                if any(not c.alive() for c in children):
                    raise RuntimeError(f"a {role} worker died; logs in {scratch}")
                await asyncio.sleep(0.25)
            seconds = time.monotonic() - t0
    finally:
        for child in children:
            await asyncio.to_thread(child.stop, 20.0)
    out.update(
        {
            "items": items,
            "sent_in_s": round(sent_s, 2),
            "seconds": round(seconds, 2),
            "per_s": round(items / seconds, 1),
            "load_average_1m": round(os.getloadavg()[0], 2),
        }
    )
    if role == "embed":
        chunks = sum(len(e.chunks) for _, _, e in backlog)
        out.update(chunks=chunks, chunks_per_s=round(chunks / seconds, 1))
    return out


ROLE_UNIT = {"chunk": "files/s", "embed": "chunks/s", "memory": "turns/s"}


async def run_roles(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """Each of the roles the load needs, 1 then 2 workers (``--role-workers``), on Tansu."""
    items = {"chunk": args.role_files, "embed": args.role_chunked, "memory": args.role_turns}
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    runs: list[dict[str, Any]] = []
    try:
        for role in ("chunk", "embed", "memory"):
            for workers in args.role_workers:
                console.print(f"  {role}: {items[role]} inputs, {workers} worker(s)…")
                run = await role_drain(len(runs), role, workers, broker.bootstrap, scratch,
                                       items[role], args.scale_partitions)  # fmt: skip
                runs.append(run)
                rate = run.get("chunks_per_s", run["per_s"])
                console.print(f"    {rate} {ROLE_UNIT[role]} (load {run['load_average_1m']})")
    finally:
        broker.stop()
    per_machine: dict[str, dict[str, Any]] = {}
    for role in ("chunk", "embed", "memory"):
        mine = [r for r in runs if r["role"] == role]
        best = max(mine, key=lambda r: r.get("chunks_per_s", r["per_s"]))
        per_machine[role] = {
            "rate": best.get("chunks_per_s", best["per_s"]),
            "unit": ROLE_UNIT[role],
            "workers": best["workers"],
        }
    embed = [r for r in runs if r["role"] == "embed"]
    return {
        "method": "one role's backlog produced at once after warm-up (model loaded, every "
        "worker assigned partitions), timed from the first send until the role's consumer "
        "group has committed every record of its topics; `tribal worker --role <role>` "
        "processes only, on Tansu on loopback, no PostgreSQL; the embed role with the bulk "
        "lane off (TRIBAL_BULK_BACKLOG=0), as a machine at capacity is never 32 behind; "
        "per machine: the better of the worker counts tried",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": runs,
        "per_machine": per_machine,
        "chunks_per_file": round(embed[0]["chunks"] / embed[0]["items"], 2),
    }


# ---------------------------------------------------------------- capacity search

BASE_MIX = {"turns": 100.0, "files": 50.0, "retrieval": 50.0}
"""The load the README once set for one machine: turns/s, file changes/s and closed-loop
retrieval clients. The capacity search scales all three by one factor."""
MIXED = ("turns", "files", "retrieval")
DEGRADED_MAX = 0.05
"""A load is not held when more than this share of retrievals answer the fallback."""


def scaled(
    args: argparse.Namespace, factor: float, kinds: tuple[str, ...], duration: float, drain: float
) -> argparse.Namespace:
    """The arguments of :func:`run_load` for ``BASE_MIX`` x ``factor`` of ``kinds``."""
    out = argparse.Namespace(**vars(args))
    out.turns_rate = round(BASE_MIX["turns"] * factor, 2) if "turns" in kinds else 0.0
    out.files_rate = round(BASE_MIX["files"] * factor, 2) if "files" in kinds else 0.0
    clients = max(1, round(BASE_MIX["retrieval"] * factor))
    out.retrieve_clients = clients if "retrieval" in kinds else 0
    out.duration, out.drain_timeout = duration, drain
    return out


def kept_up(result: dict[str, Any]) -> dict[str, float]:
    """Per input kind, the share of what was written after the first minute that the
    worker got through."""
    rates = result["worker_topics_after_warmup"]

    def r(name: str, key: str) -> float:
        return float(rates.get(name, {}).get(key, 0.0))

    out: dict[str, float] = {}
    if r("files.changes", "written_per_s") > 0:
        # read from chunks minus passed on to the bulk lane, plus read from the bulk lane
        embedded = (
            r("chunks", "worker_read_per_s")
            - r("chunks.bulk", "written_per_s")
            + r("chunks.bulk", "worker_read_per_s")
        )
        done = min(r("files.changes", "worker_read_per_s"), embedded)
        out["files"] = round(done / r("files.changes", "written_per_s"), 3)
    shares = [
        r(t, "worker_read_per_s") / r(t, "written_per_s")
        for t in ("memory.turns", "memory.episodes")
        if r(t, "written_per_s") > 0
    ]
    if shares:
        out["turns"] = round(min(shares), 3)
    return out


def judge(result: dict[str, Any]) -> dict[str, Any]:
    """Held: lag flat after the first minute, every input accepted, no process died and
    no more than ``DEGRADED_MAX`` of retrievals answered the fallback."""
    v = result["verdict"]
    why = []
    if not v["lag"] or any("verdict" in t for t in v["lag"].values()):
        why.append("too few lag samples")
    grew = [g.removeprefix("lag ") for g in v["grew"] if g.startswith("lag ")]
    if grew:
        why.append("lag grew: " + ", ".join(grew))
    if result["children_died"]:
        why.append("died: " + ", ".join(result["children_died"]))
    for name, s in result["streams"].items():
        if s["errors"] or s["skipped_in_flight_cap"]:
            why.append(f"{name}: {s['errors']} errors, {s['skipped_in_flight_cap']} not sent")
    retrieve = result["streams"]["retrieve_http"]
    degraded = retrieve["degraded"] / retrieve["calls"] if retrieve["calls"] else 0.0
    if degraded > DEGRADED_MAX:
        why.append(f"{degraded:.0%} of retrievals answered the fallback")
    return {
        "held": not why,
        "why": why,
        "rss_grew": [g.removeprefix("rss ") for g in v["grew"] if g.startswith("rss ")],
        "retrieval_degraded_share": round(degraded, 3),
        "kept_up": kept_up(result),
    }


def brief(result: dict[str, Any], factor: float) -> dict[str, Any]:
    """One candidate for the JSON: its figures and its lag series, not every sample."""
    rows = [s for s in result["samples"] if "error" not in s]
    return {
        "factor": factor,
        **result["rates"],
        "judged": judge(result),
        "seconds": result["seconds"],
        "streams": result["streams"],
        "worker_topics": result["worker_topics"],
        "worker_topics_after_warmup": result["worker_topics_after_warmup"],
        "cpu_cores": result["cpu_cores"],
        "warmup_caught_up_s": result["warmup_caught_up_s"],
        "drained_after_s": result["drained_after_s"],
        "lag_left_after_drain": result["lag_left_after_drain"],
        "max_lag": max((total_lag(s) for s in rows if s["phase"] == "load"), default=None),
        "verdict": {k: result["verdict"][k] for k in ("rule", "lag", "rss_mb", "grew")},
        "lag_series": [[s["t_s"], s["phase"], total_lag(s), s["load_average_1m"]] for s in rows],
        "landed": result.get("landed"),
        "first_attempt": result.get("first_attempt"),
    }


def next_factor(lo: float | None, hi: float | None, last: dict[str, Any]) -> float | None:
    """Bisection between the highest held and the lowest failed factor (geometric, to
    10 %); up by half when nothing failed yet; down to what the worker got through of
    the failed load when nothing held yet."""
    if lo is not None and hi is not None:
        return None if hi / lo <= 1.1 else math.sqrt(lo * hi)
    if lo is not None:
        return lo * 1.5
    assert hi is not None
    share = min(last["judged"]["kept_up"].values(), default=0.5)
    return hi * min(0.9, max(0.25, share * 0.95))


async def search(
    args: argparse.Namespace,
    scratch: Path,
    kinds: tuple[str, ...],
    start: float,
    steps: int,
    duration: float,
) -> dict[str, Any]:
    """Up to ``steps`` runs of ``kinds`` scaled by a factor, from ``start``; each for
    ``duration`` s on a fresh embedded stack, judged by :func:`judge`."""
    runs: list[dict[str, Any]] = []
    lo: float | None = None
    hi: float | None = None
    factor: float | None = start
    label = "+".join(kinds)
    for step in range(steps):
        if factor is None:
            break
        factor = round(factor, 3)
        load = scaled(args, factor, kinds, duration, args.candidate_drain)
        console.print(
            f"[bold]{label}[/bold] {step + 1}/{steps}: x{factor} = {load.turns_rate} turns/s, "
            f"{load.files_rate} files/s, {load.retrieve_clients} clients for {duration:.0f}s"
        )
        run = brief(await load_once_more(load, scratch / f"{label}-{step}"), factor)
        runs.append(run)
        j = run["judged"]
        said = "HELD" if j["held"] else "not held: " + "; ".join(j["why"])
        load_1m = run["cpu_cores"].get("load_average_1m")
        console.print(f"  → {said} (kept up {j['kept_up']}, load {load_1m})")
        if j["held"]:
            lo = max(lo or 0.0, factor)
        else:
            hi = min(hi or math.inf, factor)
        factor = next_factor(lo, hi, run)
    held = next((r for r in runs if r["factor"] == lo), None)
    return {
        "kinds": list(kinds),
        "duration_s": duration,
        "held_factor": lo,
        "failed_factor": hi,
        "capacity": None
        if held is None
        else {k: held[k] for k in ("turns_per_s", "files_per_s", "retrieval_clients")},
        "runs": runs,
    }


def predicted_factor(roles: dict[str, Any]) -> float:
    """The factor of ``BASE_MIX`` one machine would hold if the worker roles were all
    there is (no API, projections, broker or load generator): a first guess."""
    per = roles["per_machine"]
    need = {
        "chunk": BASE_MIX["files"],
        "embed": BASE_MIX["files"] * float(roles["chunks_per_file"]),
        "memory": BASE_MIX["turns"],
    }
    return 1 / sum(need[r] / float(per[r]["rate"]) for r in need)


async def calibrate(
    args: argparse.Namespace, scratch: Path, kinds: tuple[str, ...], start: float
) -> tuple[float, dict[str, Any] | None]:
    """``--calibrate`` s of ``kinds`` at ``start``: a quarter higher if that held, else
    down to what the worker got through of it. Returns where to start the search."""
    if args.calibrate <= 0:
        return start, None
    label = "+".join(kinds)
    console.print(f"[bold]calibration {label}[/bold]: x{start:.3f} for {args.calibrate:.0f}s")
    load = scaled(args, start, kinds, args.calibrate, 30.0)
    cal = brief(await load_once_more(load, scratch / f"calibration-{label}"), round(start, 3))
    j = cal["judged"]
    share = min(j["kept_up"].values(), default=0.5)
    estimate = start * 1.25 if j["held"] else start * min(0.95, max(0.2, share * 0.95))
    console.print(f"  → held {j['held']}, kept up {j['kept_up']}: start at x{estimate:.3f}")
    return estimate, {"estimate": round(estimate, 3), **cal}


async def run_mixed(args: argparse.Namespace, scratch: Path, doc: dict[str, Any]) -> None:
    """A short calibration, then the search over the whole mix (the headline figure)."""
    start = args.start_factor
    if start is None and doc.get("roles"):
        start = predicted_factor(doc["roles"])
        console.print(f"  worker roles alone would hold x{start:.3f} of the mix")
    start, doc["calibration"] = await calibrate(args, scratch, MIXED, start or 0.2)
    doc["mixed"] = await search(args, scratch, MIXED, start, args.steps, args.duration)


async def run_per_kind(args: argparse.Namespace, scratch: Path, doc: dict[str, Any]) -> None:
    """Turns alone and file changes alone (a calibration and a shorter search each),
    retrieval alone (one run at ``--retrieve-clients``)."""
    roles = doc.get("roles")
    check = (project(doc) or {}).get("check") or {}
    # Alone, a kind has the machine to itself: start from its worker role's rate,
    # derated as much as the whole mix was against its prediction.
    derate = check.get("measured_over_predicted") or 0.5
    starts = {"turns": 0.2, "files": 0.2}
    if roles:
        per, cpf = roles["per_machine"], roles["chunks_per_file"]
        starts["turns"] = derate * per["memory"]["rate"] / BASE_MIX["turns"]
        files = min(per["chunk"]["rate"], per["embed"]["rate"] / cpf)
        starts["files"] = derate * files / BASE_MIX["files"]
    kinds: dict[str, Any] = doc.setdefault("per_kind", {})
    for kind in ("turns", "files"):
        start, cal = await calibrate(args, scratch, (kind,), starts[kind])
        found = await search(args, scratch, (kind,), start, args.kind_steps, args.kind_duration)
        kinds[kind] = {"calibration": cal, **found}
        save(args, doc)
    clients = args.retrieve_clients
    console.print(f"[bold]retrieval alone[/bold]: {clients} clients")
    factor = clients / BASE_MIX["retrieval"]
    alone = scaled(args, factor, ("retrieval",), args.retrieval_duration, 10.0)
    kinds["retrieval"] = brief(await load_once_more(alone, scratch / "retrieval"), factor)


# ---------------------------------------------------------------- overload


async def run_overload(args: argparse.Namespace, scratch: Path, capacity: float) -> dict[str, Any]:
    """``--overload-multiple`` x the held mix for ``--overload-duration`` s, then a drain,
    then every accepted input looked for (:func:`verify_landed`)."""
    factor = round(capacity * args.overload_multiple, 3)
    load = scaled(args, factor, MIXED, args.overload_duration, args.overload_drain)
    console.print(
        f"[bold]overload[/bold]: x{factor} ({args.overload_multiple} times x{capacity}) = "
        f"{load.turns_rate} turns/s, {load.files_rate} files/s, "
        f"{load.retrieve_clients} clients for {args.overload_duration:.0f}s"
    )
    ledger = Ledger()
    result = await load_once_more(load, scratch / "overload", ledger)
    rows = [s for s in result["samples"] if "error" not in s]
    during = [s for s in rows if s["phase"] == "load"]
    after = [s for s in rows if s["phase"] == "drain"]
    at_end = total_lag(during[-1]) if during else 0
    peak_after = max((total_lag(s) for s in after), default=0)
    series = [(s["t_s"], float(total_lag(s))) for s in during]
    growth = trend(series, 0.0, LAG_TOLERANCE) if len(series) >= 3 else {}
    peak_rss = {
        name: max(s["processes"][name]["rss_mb"] for s in rows if name in s["processes"])
        for name in sorted({n for s in rows for n in s["processes"]})
    }
    bounded = (
        result["drained_after_s"] is not None
        and not result["children_died"]
        and peak_after <= at_end * (1 + LAG_TOLERANCE[1]) + LAG_TOLERANCE[0]
    )
    landed = result["landed"] or {}
    return {
        "capacity_factor": capacity,
        "multiple": args.overload_multiple,
        **brief(result, factor),
        "lag": {
            "max_during_load": max((total_lag(s) for s in during), default=0),
            "at_end_of_load": at_end,
            "max_while_draining": peak_after,
            "growth_per_min_during_load": growth.get("slope_per_min"),
            "per_series_growth_per_min": {
                k: t.get("slope_per_min") for k, t in result["verdict"]["lag"].items()
            },
        },
        "peak_rss_mb": peak_rss,
        "bounded_rule": "drained to 0 within the drain timeout, no process died, and after the "
        "load stopped the lag never rose above its value at the end of the load "
        f"(+{LAG_TOLERANCE[1]:.0%} + {LAG_TOLERANCE[0]:.0f} messages)",
        "bounded": bounded,
        "nothing_lost": bool(landed.get("nothing_lost")),
    }


# ---------------------------------------------------------------- projection


def project(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Machines like this one for ``BASE_MIX`` at 1x: each worker role from its measured
    rate per machine; the API (scaled by retrieval clients) and the store (projections,
    PostgreSQL, the broker; scaled by the factor) from the cores they used in the highest
    held mixed run above what they used idle. The worker roles' rates are drain rates, at
    100 % CPU."""
    roles = doc.get("roles")
    if not roles:
        return None
    cpus = os.cpu_count() or 1
    per = roles["per_machine"]
    cpf = roles["chunks_per_file"]
    need = {
        "chunk": (BASE_MIX["files"], f"{BASE_MIX['files']:.0f} files/s"),
        "embed": (
            BASE_MIX["files"] * cpf,
            f"{BASE_MIX['files']:.0f} files/s x {cpf} chunks per file",
        ),
        "memory": (BASE_MIX["turns"], f"{BASE_MIX['turns']:.0f} turns/s"),
    }
    rows: dict[str, dict[str, Any]] = {}
    for role, (demand, why) in need.items():
        rate, unit = per[role]["rate"], per[role]["unit"]
        machines = demand / rate
        rows[role] = {
            "demand": round(demand, 1),
            "unit": unit,
            "per_machine": rate,
            "workers_per_machine": per[role]["workers"],
            "machines": round(machines, 2),
            "arithmetic": f"{why} = {demand:.0f} {unit} / {rate} {unit} per machine "
            f"= {machines:.2f}",
        }
    rows["document"] = {"demand": 0, "machines": 0.0, "arithmetic": "no schema changes in it"}
    held = next(
        (r for r in (doc.get("mixed") or {}).get("runs", [])
         if r["factor"] == doc["mixed"]["held_factor"]),
        None,
    )  # fmt: skip
    if held is not None:
        cores, idle = held["cpu_cores"]["processes"], held["cpu_cores"].get("idle_processes", {})
        scale = {
            "api": (BASE_MIX["retrieval"] / held["retrieval_clients"], ("api",)),
            "store": (1 / held["factor"], ("projections", "postgres", "tansu")),
        }
        for name, (times, procs) in scale.items():
            used = sum(cores.get(p, 0.0) for p in procs)
            base = min(used, sum(idle.get(p, 0.0) for p in procs))
            demand = base + (used - base) * times
            machines = demand / cpus
            rows[name] = {
                "processes": list(procs),
                "cores_under_load": round(used, 2),
                "cores_idle": round(base, 2),
                "scale": round(times, 2),
                "demand": round(demand, 2),
                "unit": "cores",
                "per_machine": cpus,
                "machines": round(machines, 2),
                "arithmetic": f"{base:.2f} idle + ({used:.2f} - {base:.2f}) cores at "
                f"x{held['factor']} x {times:.2f} = {demand:.2f} cores / {cpus} cores per "
                f"machine = {machines:.2f}",
            }
        retrieved = held["streams"]["retrieve_http"]["achieved_per_s"]
        rows["api"]["retrievals_per_s"] = round(retrieved * scale["api"][0])
        rows["api"]["assumes"] = (
            f"each of 50 closed-loop clients gets what each of {held['retrieval_clients']} got "
            f"at x{held['factor']}: {retrieved} x {scale['api'][0]:.2f} = "
            f"{rows['api']['retrievals_per_s']} retrievals/s"
        )
    fractional = sum(r["machines"] for r in rows.values())
    out: dict[str, Any] = {
        "load": {
            "turns_per_s": BASE_MIX["turns"],
            "files_per_s": BASE_MIX["files"],
            "retrieval_clients": BASE_MIX["retrieval"],
        },
        "method": project.__doc__ and " ".join(project.__doc__.split()),
        "roles": rows,
        "machines_fractional": round(fractional, 2),
        "arithmetic": " + ".join(f"{r['machines']:.2f}" for r in rows.values())
        + f" = {fractional:.2f}",
        "machines_each_role_its_own": sum(math.ceil(r["machines"]) for r in rows.values()),
        "machines_packed": math.ceil(fractional),
    }
    if held is not None:
        # One machine ran everything at the held factor; the parts above say it would
        # hold 1/fractional. The gap is what sharing cores (and the load generator) costs.
        alone = 1 / fractional
        out["check"] = {
            "one_machine_predicted_factor": round(alone, 3),
            "one_machine_measured_factor": held["factor"],
            "measured_over_predicted": round(held["factor"] / alone, 2),
            "machines_at_measured_efficiency": math.ceil(fractional * alone / held["factor"]),
            "load_generator_cores": held["cpu_cores"]["processes"].get("bench"),
        }
    return out


# ---------------------------------------------------------------- capacity report


def save(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    """Written after every phase: a crash later keeps what was measured."""
    (args.out / "capacity.json").write_text(json.dumps(doc, indent=2))


def print_capacity(doc: dict[str, Any]) -> None:
    runs = [("calibration", doc["calibration"])] if doc.get("calibration") else []
    for name, search_ in (("mixed", doc.get("mixed")), *(doc.get("per_kind") or {}).items()):
        if search_ and "runs" in search_:
            if search_.get("calibration"):
                runs.append((f"{name} calibration", search_["calibration"]))
            runs += [(name, r) for r in search_["runs"]]
        elif search_:
            runs.append((name, search_))
    if runs:
        table = Table(title="Capacity candidates (each on a fresh embedded stack)")
        cols = (
            *("load", "x", "turns/s", "files/s", "clients", "s", "held", "kept up"),
            *("max lag", "retrieve/s", "p95 ms", "fallback", "load 1m", "others' cores"),
        )
        for col in cols:
            table.add_column(col, justify="right")
        for name, r in runs:
            j, ret, cpu = r["judged"], r["streams"]["retrieve_http"], r["cpu_cores"]
            table.add_row(*map(str, (
                name, r["factor"], r["turns_per_s"], r["files_per_s"], r["retrieval_clients"],
                round(r["seconds"]), "yes" if j["held"] else "no", j["kept_up"], r["max_lag"],
                ret["achieved_per_s"], ret["p95_ms"], f"{j['retrieval_degraded_share']:.0%}",
                (cpu.get("load_average_1m") or {}).get("mean"), cpu.get("others"),
            )))  # fmt: skip
        console.print(table)
        for name, r in runs:
            if not r["judged"]["held"]:
                console.print(f"  {name} x{r['factor']}: {'; '.join(r['judged']['why'])}")
    if doc.get("mixed"):
        m = doc["mixed"]
        console.print(
            f"mixed capacity: {m['capacity']} "
            f"(held x{m['held_factor']}, failed x{m['failed_factor']})"
        )
    if doc.get("roles"):
        table = Table(title="Worker roles draining a backlog (per machine: the better count)")
        for col in ("role", "workers", "items", "seconds", "rate", "unit", "load 1m"):
            table.add_column(col, justify="right")
        for r in doc["roles"]["runs"]:
            rate = r.get("chunks_per_s", r["per_s"])
            table.add_row(*map(str, (r["role"], r["workers"], r["items"], r["seconds"], rate,
                                     ROLE_UNIT[r["role"]], r["load_average_1m"])))  # fmt: skip
        console.print(table)
    if doc.get("overload"):
        o = doc["overload"]
        lost = o.get("landed") or {}
        lag = o["lag"]
        console.print(
            f"overload x{o['factor']} for {o['seconds']:.0f}s: lag max {lag['max_during_load']}, "
            f"growth {lag['growth_per_min_during_load']}/min, drained after "
            f"{o['drained_after_s']}s; bounded {o['bounded']}; nothing lost {o['nothing_lost']}"
        )
        for part in ("turns", "files", "deadletters"):
            console.print(f"  {part}: {lost.get(part)}")
    p = doc.get("projection")
    if p:
        table = Table(title="Machines like this one for 100 turns/s, 50 files/s, 50 clients")
        for col in ("part", "machines", "arithmetic"):
            table.add_column(col, justify="right" if col == "machines" else "left")
        for name, r in p["roles"].items():
            table.add_row(name, str(r["machines"]), r["arithmetic"])
        table.add_row("total", str(p["machines_fractional"]), p["arithmetic"])
        console.print(table)
        console.print(f"  packed: {p['machines_packed']}, each part its own: "
                      f"{p['machines_each_role_its_own']}; check: {p.get('check')}")  # fmt: skip


async def capacity_main(args: argparse.Namespace, scratch: Path) -> None:
    path = args.out / "capacity.json"
    doc: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    doc.update(
        benchmark="capacity on one machine, embedded stack",
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=machine(),
        base_mix=BASE_MIX,
    )
    # Phases run at different times, maybe on different code: each keeps its own start.
    phases = doc.setdefault("phases", {})
    if args.capacity:
        if not args.skip_roles:
            console.print("[bold]worker roles[/bold] draining backlogs")
            phases["roles"] = machine()
            doc["roles"] = await run_roles(args, scratch / "roles")
            save(args, doc)
        phases["mixed"] = machine()
        await run_mixed(args, scratch, doc)
        save(args, doc)
    if args.per_kind:
        phases["per_kind"] = machine()
        await run_per_kind(args, scratch, doc)
        save(args, doc)
    if args.overload:
        base = args.overload_base or (doc.get("mixed") or {}).get("held_factor")
        if base is None:
            raise SystemExit("no held capacity to overload: run --capacity or give --overload-base")
        phases["overload"] = machine()
        doc["overload"] = await run_overload(args, scratch, base)
        save(args, doc)
    doc["projection"] = project(doc)
    doc["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    save(args, doc)
    print_capacity(doc)
    console.print(f"→ {path}")


# ---------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    def git(*argv: str) -> str:
        try:
            done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)
        except OSError:
            return ""
        return done.stdout.strip()

    return {
        # The checkout is shared: what ran is the commit plus whatever was edited.
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_files": len(git("status", "--porcelain").splitlines()),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def print_load(result: dict[str, Any]) -> None:
    table = Table(title=f"Load for {result['seconds']:.0f}s on the embedded stack")
    for col in ("stream", "target/s", "achieved/s", "p50 ms", "p95 ms", "p99 ms", "errors"):
        table.add_column(col, justify="right")
    for name, s in result["streams"].items():
        target = "closed loop" if s["target_per_s"] is None else s["target_per_s"]
        failed = s["errors"] + s["skipped_in_flight_cap"]
        row = [name, target, s["achieved_per_s"], s["p50_ms"], s["p95_ms"], s["p99_ms"], failed]
        table.add_row(*map(str, row))
    console.print(table)
    v = result["verdict"]
    series = Table(title=f"After the first {v['warmup_s']:.0f}s")
    for col in ("series", "end of warm-up", "last", "allowed", "slope/min", "grew"):
        series.add_column(col, justify="right")
    for kind in ("lag", "rss_mb"):
        for name, t in v[kind].items():
            keys = ("at_end_of_warmup", "last", "allowed", "slope_per_min")
            grew = t.get("grew", t.get("verdict"))
            series.add_row(f"{kind} {name}", *(str(t.get(k, "-")) for k in keys), str(grew))
    console.print(series)
    for name, r in result["worker_topics"].items():
        console.print(f"  {name}: written {r['written_per_s']}/s, "
                      f"worker read {r['worker_read_per_s']}/s")  # fmt: skip
    said = "GREW: " + ", ".join(v["grew"]) if v["grew"] else "no growth in lag or memory"
    drained = (
        f"drained {result['drained_after_s']}s after the load"
        if result["drained_after_s"] is not None
        else f"{result['lag_left_after_drain']} messages still behind "
        f"{result['drain_timeout_s']:.0f}s after the load"
    )
    console.print(f"verdict after the first {v['warmup_s']:.0f}s: {said}; {drained}")


def print_scaling(result: dict[str, Any]) -> None:
    table = Table(title="1 vs 2 workers (one consumer group)")
    for col in (
        "workers",
        "files/s",
        "chunks/s",
        "per worker",
        "episodes/s",
        "per worker",
        "load 1m",
    ):
        table.add_column(col, justify="right")
    for r in result["runs"]:
        f, t = r["files"], r["turns"]
        row = [
            *(r["workers"], f["files_per_s"], f["chunks_per_s"], f["files_per_s_per_worker"]),
            *(t["episodes_per_s"], t["episodes_per_s_per_worker"], r["load_average_1m"]),
        ]
        table.add_row(*map(str, row))
    console.print(table)
    console.print(f"speed-up, 2 workers over 1 (mean of runs): {result['speedup_2_over_1']}")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--quick", action="store_true", help="30 s of load, a small backlog")
    parser.add_argument("--turns-rate", type=float, default=100.0)
    parser.add_argument("--files-rate", type=float, default=50.0)
    parser.add_argument("--retrieve-clients", type=int, default=50)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--sample-every", type=float, default=5.0)
    parser.add_argument("--warmup-timeout", type=float, default=300.0)
    parser.add_argument("--drain-timeout", type=float, default=120.0)
    parser.add_argument("--scale-files", type=int, default=400)
    parser.add_argument("--scale-turns", type=int, default=2000)
    parser.add_argument(
        "--scale-workers",
        type=lambda v: [int(x) for x in v.split(",")],
        default=[1, 2, 1],
        help="worker counts to run in order (1 again at the end: the machine is shared)",
    )
    parser.add_argument("--scale-partitions", type=int, default=6)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    cap = parser.add_argument_group("capacity (bench-results/capacity.json)")
    cap.add_argument("--capacity", action="store_true", help="role rates, then the search")
    cap.add_argument("--overload", action="store_true", help="2x the held mix, then drain")
    cap.add_argument("--skip-roles", action="store_true", help="keep capacity.json's roles")
    cap.add_argument("--start-factor", type=float, help="first factor (else from the roles)")
    cap.add_argument("--calibrate", type=float, default=60.0, help="seconds; 0: none")
    cap.add_argument("--steps", type=int, default=4, help="runs of the mixed search")
    cap.add_argument("--candidate-drain", type=float, default=60.0)
    cap.add_argument("--per-kind", action="store_true", help="turns, files, retrieval alone")
    cap.add_argument("--kind-steps", type=int, default=2)
    cap.add_argument("--kind-duration", type=float, help="default: --duration")
    cap.add_argument("--retrieval-duration", type=float, default=60.0)
    cap.add_argument("--overload-base", type=float, help="factor (else capacity.json's held)")
    cap.add_argument("--overload-multiple", type=float, default=2.0)
    cap.add_argument("--overload-duration", type=float, default=120.0)
    cap.add_argument("--overload-drain", type=float, default=900.0)
    cap.add_argument("--role-files", type=int, default=5000)
    cap.add_argument("--role-chunked", type=int, default=600)
    cap.add_argument("--role-turns", type=int, default=3000)
    cap.add_argument(
        "--role-workers", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2]
    )
    args = parser.parse_args(argv)
    args.kind_duration = args.kind_duration or args.duration
    configure_logging("WARNING", "console")  # the ingestor logs every turn at INFO
    if args.quick:
        args.duration, args.drain_timeout = 30.0, 60.0
        args.scale_files, args.scale_turns, args.scale_workers = 150, 600, [1, 2]
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-load-"))
    os.chmod(scratch, 0o755)  # the embedded PostgreSQL may run as another user
    try:
        if args.capacity or args.overload or args.per_kind:
            await capacity_main(args, scratch)
            args.skip_load = args.skip_scaling = True  # the capacity bench replaces both
        if not args.skip_load:
            console.print("[bold]load[/bold] on the embedded stack")
            started = machine()
            result = await run_load(args, scratch / "load")
            doc = {"benchmark": "sustained load, embedded stack", "quick": args.quick,
                   "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                   "machine": started, "load_average_at_end": list(os.getloadavg()),
                   **result}  # fmt: skip
            plot = write_lag_plot(result, args.out / "load_lag")
            doc["lag_plot"] = str(plot.relative_to(ROOT) if plot.is_relative_to(ROOT) else plot)
            (args.out / "load.json").write_text(json.dumps(doc, indent=2))
            print_load(result)
            note = "" if plot.suffix == ".png" else " (matplotlib is not installed: CSV instead)"
            console.print(f"→ {args.out / 'load.json'}, lag series {plot}{note}")
        if not args.skip_scaling:
            console.print("[bold]scaling[/bold]: 1 vs 2 workers")
            started = machine()
            scaling = await run_scaling(args, scratch / "scaling")
            doc = {"benchmark": "1 vs 2 tribal workers draining a backlog", "quick": args.quick,
                   "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                   "machine": started, **scaling}  # fmt: skip
            (args.out / "scaling.json").write_text(json.dumps(doc, indent=2))
            print_scaling(scaling)
            console.print(f"→ {args.out / 'scaling.json'}")
    except BaseException:
        console.print(f"[red]failed: the children's logs are kept in {scratch}")
        raise
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
