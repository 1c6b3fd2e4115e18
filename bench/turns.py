"""Benchmark ``ingest_turn``: latency at 1, 10 and 50 concurrent callers.

In-process (``MemoryIngestor`` over a ``KafkaSink``) and over HTTP (``POST
/v1/memory/turns`` on a real ``tribal api`` process), on the embedded Tansu broker,
or on the broker named by ``TRIBAL_BENCH_KAFKA_BOOTSTRAP``. Every call returns only
after Kafka acknowledged the event. Target: p95 < 50 ms.

    python -m bench.turns [--calls 2000] [--quick]
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from bench.report import machine, print_table, save
from bench.run import Arguments, scratch
from bench.stack import KAFKA_ENV, kafka_bootstrap
from bench.stats import summary
from devstack.pipeline import REPO, TRIBAL
from events.registry import registry_from_settings
from events.serde import EventSerde
from runtime.embedded.process import ChildProcess, free_port, port_open, wait_until
from runtime.settings import TribalSettings
from runtime.topics import ensure_topics
from sources.sink import KafkaSink
from sources.turns import MemoryIngestor, Session, Turn

TARGET_P95_MS = 50.0
CONCURRENCY = (1, 10, 50)


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
        **summary(latencies, 50, 95, 99, unit="ms", digits=2),
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


async def over_http(settings: TribalSettings, calls: int, log: Path) -> list[dict[str, Any]]:
    port = free_port()
    env = dict(
        os.environ,
        TRIBAL_KAFKA_BOOTSTRAP=settings.kafka_bootstrap,
        TRIBAL_DATA_DIR=str(settings.data_dir),
        TRIBAL_TOPIC_PREFIX=settings.topic_prefix,
    )
    api = ChildProcess(
        "api", [*TRIBAL, "api", "--port", str(port)], env=env, log_path=log, cwd=REPO
    )
    api.start()
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
        api.stop(15)


async def measure(calls: int, where: Path) -> list[dict[str, Any]]:
    with kafka_bootstrap(where) as bootstrap:
        settings = TribalSettings(kafka_bootstrap=bootstrap, data_dir=where)
        await ensure_topics(settings)
        return await in_process(settings, calls) + await over_http(
            settings, calls, where / "api.log"
        )


def main(argv: list[str] | None = None) -> int:
    args = Arguments("turns", __doc__, calls=(2000, 100)).parse(argv)
    with scratch("turns") as where:
        rows = asyncio.run(measure(args.calls, where))
    broker = "external" if os.environ.get(KAFKA_ENV) else "tansu"
    result = {
        "benchmark": "ingest_turn",
        "broker": broker,
        "target_p95_ms": TARGET_P95_MS,
        "machine": machine(),
        "results": rows,
        "target_met": all(r["p95_ms"] < TARGET_P95_MS for r in rows),
    }
    save(result, args.out)
    columns = ("path", "concurrency", "calls", "calls_per_s", "p50_ms", "p95_ms", "p99_ms")
    print_table(
        f"ingest_turn latency ({broker}); target p95 < {TARGET_P95_MS} ms",
        columns,
        [[r[c] for c in columns] for r in rows],
    )
    print(f"target met: {result['target_met']}  →  {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
