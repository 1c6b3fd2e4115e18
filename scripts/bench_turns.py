"""Benchmark ``ingest_turn``: latency at 1, 10 and 50 concurrent callers.

In-process (``MemoryIngestor`` over a ``KafkaSink``) and over HTTP (``POST
/v1/memory/turns`` on a real ``tribal api`` process), on the embedded Tansu broker,
or on the broker named by ``TRIBAL_BENCH_KAFKA_BOOTSTRAP``. Every call returns only
after Kafka acknowledged the event. Target: p95 < 50 ms.

    python scripts/bench_turns.py [--calls 2000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from events.registry import registry_from_settings  # noqa: E402
from events.serde import EventSerde  # noqa: E402
from runtime.embedded.process import free_port, port_open, wait_until  # noqa: E402
from runtime.embedded.tansu import TansuBroker  # noqa: E402
from runtime.settings import TribalSettings  # noqa: E402
from runtime.topics import ensure_topics  # noqa: E402
from sources.sink import KafkaSink  # noqa: E402
from sources.turns import MemoryIngestor, Session, Turn  # noqa: E402

TARGET_P95_MS = 50.0
CONCURRENCY = (1, 10, 50)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def drive(
    calls: int, concurrency: int, call: Callable[[int, int], Awaitable[None]]
) -> dict[str, float]:
    latencies: list[float] = []
    per_worker = max(1, calls // concurrency)

    async def worker(w: int) -> None:
        for n in range(per_worker):
            t0 = time.perf_counter()
            await call(w, n)
            latencies.append((time.perf_counter() - t0) * 1000)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.perf_counter() - t0
    return {
        "calls": len(latencies),
        "seconds": round(elapsed, 3),
        "calls_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
    }


def turn(w: int, n: int) -> Turn:
    return Turn(user_message=f"my order #{n} from caller {w} has not arrived", agent_response="ok")


async def in_process(settings: TribalSettings, calls: int) -> list[dict[str, Any]]:
    rows = []
    serde = EventSerde(registry_from_settings(settings))
    async with KafkaSink(settings.kafka_bootstrap, serde, settings.topic_prefix) as sink:
        ingestor = MemoryIngestor(sink)

        async def call(w: int, n: int) -> None:
            await ingestor.ingest_turn(turn(w, n), Session(tenant_id="bench", id=f"s{w}"))

        await drive(50, 1, call)  # warm-up: connections, schema registration
        for c in CONCURRENCY:
            rows.append({"path": "in-process", "concurrency": c, **await drive(calls, c, call)})
    return rows


def start_api(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "cli", "api", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def over_http(settings: TribalSettings, calls: int, log: Path) -> list[dict[str, Any]]:
    port = free_port()
    env = dict(
        os.environ,
        TRIBAL_KAFKA_BOOTSTRAP=settings.kafka_bootstrap,
        TRIBAL_DATA_DIR=str(settings.data_dir),
        TRIBAL_TOPIC_PREFIX=settings.topic_prefix,
    )
    proc = start_api(port, env, log)
    try:
        wait_until(lambda: port_open("127.0.0.1", port), 30, "tribal api")
        rows = []
        # aiohttp as the load generator: at 50 callers httpx's pool was the bottleneck,
        # measuring the client instead of Tribal.
        connector = aiohttp.TCPConnector(limit=64)
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", connector=connector) as client:

            async def call(w: int, n: int) -> None:
                body = {"group_id": f"bench:h{w}", "user_message": turn(w, n).user_message}
                async with client.post("/v1/memory/turns", json=body) as r:
                    r.raise_for_status()
                    await r.read()

            await drive(50, 1, call)
            for c in CONCURRENCY:
                rows.append({"path": "http", "concurrency": c, **await drive(calls, c, call)})
        return rows
    finally:
        proc.terminate()
        proc.wait(15)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "turns.json")
    args = parser.parse_args(argv)
    calls = 100 if args.quick else args.calls
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-turns-"))
    external = os.environ.get("TRIBAL_BENCH_KAFKA_BOOTSTRAP")
    broker = None if external else TansuBroker(log_path=scratch / "tansu.log").start()
    try:
        bootstrap = external or (broker.bootstrap if broker else "")
        settings = TribalSettings(kafka_bootstrap=bootstrap, data_dir=scratch)
        await ensure_topics(settings)
        rows = await in_process(settings, calls) + await over_http(
            settings, calls, scratch / "api.log"
        )
    finally:
        if broker is not None:
            broker.stop()
    result = {
        "benchmark": "ingest_turn",
        "broker": "external" if external else "tansu",
        "target_p95_ms": TARGET_P95_MS,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "results": rows,
        "target_met": all(r["p95_ms"] < TARGET_P95_MS for r in rows),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    table = Table(
        title=f"ingest_turn latency ({result['broker']}); target p95 < {TARGET_P95_MS} ms"
    )
    for col in ("path", "concurrency", "calls", "calls_per_s", "p50_ms", "p95_ms", "p99_ms"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            *(
                str(r[c])
                for c in (
                    "path",
                    "concurrency",
                    "calls",
                    "calls_per_s",
                    "p50_ms",
                    "p95_ms",
                    "p99_ms",
                )
            )
        )
    Console().print(table)
    Console().print(f"target met: {result['target_met']}  →  {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
