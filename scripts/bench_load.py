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

    python -m scripts.bench_load [--quick | --duration 300] [--skip-load] [--skip-scaling]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import hashlib
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import psutil  # type: ignore[import-untyped]  # noqa: E402
from aiokafka import AIOKafkaConsumer, TopicPartition  # noqa: E402
from aiokafka.admin import AIOKafkaAdminClient  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from events.files import FileChanged  # noqa: E402
from events.kb import KbArticleUpserted  # noqa: E402
from events.registry import registry_from_settings  # noqa: E402
from events.serde import EventSerde  # noqa: E402
from events.sources.sink import KafkaSink  # noqa: E402
from events.sources.turns import MemoryIngestor, Session, Turn  # noqa: E402
from projections.base import Projection  # noqa: E402
from projections.lag import projection_lags  # noqa: E402
from projections.registry import projections_for  # noqa: E402
from streams.embedded.process import ChildProcess, free_port  # noqa: E402
from streams.embedded.supervisor import EmbeddedStack  # noqa: E402
from streams.embedded.tansu import TansuBroker  # noqa: E402
from streams.observability.logs import configure_logging  # noqa: E402
from streams.settings import TribalSettings  # noqa: E402
from streams.topics import TOPICS_BY_NAME, ensure_topics, topic  # noqa: E402

console = Console(width=150)
OUT = ROOT / "bench-results"
HELPDESK = ROOT / "tests" / "sources" / "kb_fixtures" / "helpdesk.json"
# The topics the worker's agents consume; their group lag is the worker's backlog.
WORKER_TOPICS = ("files.changes", "chunks", "kb.articles", "memory.turns", "memory.episodes")
LAG_TOLERANCE = (100.0, 0.20)  # messages, fraction: lag may wobble this much
RSS_TOLERANCE = (30.0, 0.10)  # MB, fraction


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
    admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer, settings: TribalSettings
) -> tuple[dict[str, int], dict[str, int]]:
    """Per source topic: messages the worker's group still has to read, and has committed."""
    tps = [
        TopicPartition(topic(short, settings), p)
        for short in WORKER_TOPICS
        for p in range(TOPICS_BY_NAME[short].partition_count(settings))
    ]
    ends = await consumer.end_offsets(tps)
    committed = await admin.list_consumer_group_offsets(settings.consumer_group, partitions=tps)
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


def process_stats(children: list[ChildProcess]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for child in children:
        if child.pid is None or not child.alive():
            continue
        try:
            proc = _process(child.pid)
            procs = [proc, *(_process(c.pid) for c in proc.children(recursive=True))]
            rss = sum(p.memory_info().rss for p in procs)
            cpu = sum(p.cpu_percent(None) for p in procs)
        except psutil.Error:
            continue
        out[child.name] = {"rss_mb": round(rss / 2**20, 1), "cpu_percent": round(cpu, 1)}
    return out


@dataclass
class Sampler:
    settings: TribalSettings
    children: list[ChildProcess]
    projections: list[Projection]
    streams: list[Stream]
    t0: float
    samples: list[dict[str, Any]] = field(default_factory=list)

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
        row["processes"] = process_stats(self.children)
        row["calls"] = {s.name: s.done for s in self.streams}
        row["load_average_1m"] = round(os.getloadavg()[0], 2)
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


def worker_rates(samples: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per source topic over the load: records written and records the worker committed."""
    rows = [s for s in samples if s["phase"] == "load" and "error" not in s]
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


async def run_load(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
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
    connector = aiohttp.TCPConnector(limit=args.retrieve_clients + int(args.turns_rate * 2))
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
            warm = await wait_for(
                lambda: _caught_up(sampler), args.warmup_timeout, "warm-up caught up"
            )
            console.print(f"  warm-up caught up in {warm:.1f}s; load for {args.duration:.0f}s")

            async def post_turn(n: int) -> None:
                async with http.post("/v1/memory/turns", json=turn_body(n, args.groups)) as r:
                    r.raise_for_status()
                    await r.read()

            async def send_file(n: int) -> None:
                change = file_change(n)
                await sink.emit_and_wait("files.changes", change.key, change)

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
            load = [
                asyncio.create_task(open_loop(turns, args.turns_rate, stop, post_turn)),
                asyncio.create_task(open_loop(files, args.files_rate, stop, send_file)),
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
    finally:
        for p in projections:
            with contextlib.suppress(Exception):
                await p.close()
        await stack.stop()
    warmup = min(60.0, args.duration / 3)
    return {
        "seconds": round(elapsed, 1),
        "streams": {s.name: s.summary(args.duration) for s in streams},
        "retrieve_clients": args.retrieve_clients,
        "groups": args.groups,
        "children_died": dead,
        "drained_after_s": drained,
        "lag_left_after_drain": None if drained is not None else total_lag(sampler.samples[-1]),
        "worker_topics": worker_rates(sampler.samples),
        "drain_timeout_s": args.drain_timeout,
        "samples": sampler.samples,
        "verdict": verdict(sampler.samples, warmup),
    }


async def _caught_up(sampler: Sampler) -> bool:
    row = await sampler.sample("warmup")
    return "error" not in row and total_lag(row) == 0 and bool(row["projection_lag"])


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
            f"worker-{i}", [sys.executable, "-m", "api.cli", "worker"],
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


# ---------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    return {
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
    args = parser.parse_args(argv)
    configure_logging("WARNING", "console")  # the ingestor logs every turn at INFO
    if args.quick:
        args.duration, args.drain_timeout = 30.0, 60.0
        args.scale_files, args.scale_turns, args.scale_workers = 150, 600, [1, 2]
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-load-"))
    os.chmod(scratch, 0o755)  # the embedded PostgreSQL may run as another user
    try:
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
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
