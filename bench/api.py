"""Benchmark the API: ``POST /v1/retrieve`` latency under 1, 10 and 50 concurrent clients
for each index adapter (pgvector, Weaviate), and MCP tool-call latency over streamable HTTP.

Targets (seed 002): p95 < 15 ms with one client, p95 < 35 ms with 50 concurrent clients.
The demo deployment (tests/api/demo.py: 24 documented tables, 20 help-desk articles
embedded with all-MiniLM-L6-v2) is built on Tansu + PostgreSQL and served by uvicorn in
its own process, as ``tribal api`` runs it. Two workloads:

* ``c1``/``c10``/``c50``: agents asking the same questions again (queries rotate over
  a fixed set of 20). After a warm-up pass every query vector comes from the API's
  embedding cache (seed 002: > 80 % hit rate for repeated queries) and most answers
  from its answer cache (``api_answer_cache_s``, 1 s).
* ``c1_unique``/``c50_unique``: every question new, so every request embeds its
  message on the CPU and searches the index: the API's uncached capacity.

    python -m bench.api [--requests 2000] [--only pgvector weaviate]

Services come from the test harness: ``TRIBAL_*`` endpoints if set, else started here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import time
from typing import Any

import aiohttp

from bench.report import print_table, save
from bench.run import Arguments, scratch
from bench.stats import mean, summary
from devstack import ServiceHub
from devstack.deployment import AUTH, HELPDESK, KEYS, MODEL, build_demo
from runtime.embedded.process import free_port
from runtime.settings import TribalSettings
from streams.embedder.model import SentenceTransformerEmbedder

CONCURRENCY = (1, 10, 50)
TARGET_P95_MS = {1: 15.0, 50: 35.0}


def queries() -> list[dict[str, Any]]:
    out = []
    for a in json.loads(HELPDESK.read_text()):
        device = a["metadata"]["device"][0]
        out.append({"intent": a["metadata"]["intent"][0],
                    "message": f"{a['title']}: my {device} needs help",
                    "metadata": {"product": device}})  # fmt: skip
    return out


def unique_queries(n: int) -> list[dict[str, Any]]:
    base = queries()
    return [dict(b, message=f"{b['message']} (case {i})") for i in range(n // len(base) + 1)
            for b in base][:n]  # fmt: skip


def percentiles(samples: list[float]) -> dict[str, float]:
    return {**summary(samples, digits=2), "mean": mean(samples), "n": len(samples)}


async def retrieve_load(
    url: str, clients: int, total: int, bodies: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    repeated = bodies is None
    bodies = bodies or queries()
    latencies: list[float] = []
    degraded = 0
    counter = iter(range(total))

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal degraded
        for n in counter:
            t0 = time.perf_counter()
            async with session.post(f"{url}/v1/retrieve", json=bodies[n % len(bodies)]) as r:
                body = await r.json()
            latencies.append((time.perf_counter() - t0) * 1000)
            degraded += body["gaps"] == ["Knowledge retrieval unavailable"]

    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(headers=AUTH, connector=connector) as session:
        for body in bodies if repeated else ():  # warm-up: fill the embedding cache
            async with session.post(f"{url}/v1/retrieve", json=body) as r:
                await r.read()
        t0 = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(clients)))
        elapsed = time.perf_counter() - t0
    return {**percentiles(latencies), "rps": round(total / elapsed, 1), "degraded": degraded}


async def mcp_latency(url: str, calls: int) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    out: dict[str, Any] = {}
    tools: dict[str, dict[str, Any]] = {
        "retrieve_knowledge": {"intent": "not_hashing", "message": "Apollo II shows 0 H/s",
                               "metadata": {"product": "Apollo II"}},
        "search_tables": {"query": "customer orders and payments"},
        "get_join_path": {"source_table": "shop.public.product_images",
                          "target_table": "shop.public.customers"},
    }  # fmt: skip
    async with (
        create_mcp_http_client(headers=AUTH) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for name, args in tools.items():
            await session.call_tool(name, args)
            samples = []
            for _ in range(calls):
                t0 = time.perf_counter()
                await session.call_tool(name, args)
                samples.append((time.perf_counter() - t0) * 1000)
            out[name] = percentiles(samples)
    return out


def _serve(settings: TribalSettings, port: int) -> None:
    import uvicorn

    from api.app import create_app

    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning")


class ProcessServer:
    """``create_app(settings)`` served by uvicorn in a child process (spawned, so it
    shares nothing with the load generator: no GIL, no event loop, no model)."""

    def __init__(self, settings: TribalSettings) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        ctx = multiprocessing.get_context("spawn")
        self.process = ctx.Process(target=_serve, args=(settings, self.port), daemon=True)

    def __enter__(self) -> ProcessServer:
        self.process.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.is_alive():
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.2)
        self.process.kill()
        raise RuntimeError("the API server did not start")

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.join(timeout=30)


async def bench_adapter(
    adapter: str, hub: ServiceHub, embedder: SentenceTransformerEmbedder, args: argparse.Namespace
) -> dict[str, Any]:
    extra: dict[str, Any] = {"api_keys": KEYS}
    if adapter == "weaviate":
        w = hub.get("weaviate").value
        extra |= {"weaviate_url": w.url, "weaviate_grpc_port": w.grpc_port}  # type: ignore[attr-defined]
    tansu = hub.get("tansu").value.bootstrap  # type: ignore[attr-defined]
    pg = hub.get("postgres").value
    assert isinstance(pg, str)
    result: dict[str, Any] = {}
    with (
        scratch("api") as where,
        ProcessServer((await build_demo(tansu, pg, where, embedder, **extra)).settings) as server,
    ):
        async with aiohttp.ClientSession(headers=AUTH) as s:  # wait for the query embedder
            for _ in range(180):
                async with s.post(f"{server.url}/v1/retrieve", json=queries()[0]) as r:
                    if (await r.json())["sources_consulted"]:
                        break
                await asyncio.sleep(0.5)
        for clients in CONCURRENCY:
            result[f"c{clients}"] = await retrieve_load(server.url, clients, args.requests)
        fresh = unique_queries(args.requests // 4 + 100)
        result["c1_unique"] = await retrieve_load(server.url, 1, 100, fresh[:100])
        result["c50_unique"] = await retrieve_load(server.url, 50, args.requests // 4, fresh[100:])
        if adapter == args.only[0]:
            result["mcp"] = await mcp_latency(server.url, args.mcp_calls)
    return result


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    hub = ServiceHub()
    embedder = SentenceTransformerEmbedder(MODEL)
    results: dict[str, Any] = {"requests": args.requests, "targets_p95_ms": TARGET_P95_MS}
    try:
        for adapter in args.only:
            results[adapter] = await bench_adapter(adapter, hub, embedder, args)
    finally:
        hub.close()
    return results


def report(results: dict[str, Any]) -> None:
    rows = []
    for adapter in ("pgvector", "weaviate"):
        for level in [*(f"c{c}" for c in CONCURRENCY), "c1_unique", "c50_unique"]:
            row = results.get(adapter, {}).get(level)
            if row is None:
                continue
            clients = int(level[1:].split("_")[0])
            target = TARGET_P95_MS.get(clients) if "_" not in level else None
            verdict = "" if target is None else ("ok" if row["p95"] < target else "MISSED")
            held = f"{verdict} <{target}" if target else ""
            rows.append([adapter, level[1:].replace("_", " "), row["p50"], row["p95"], row["p99"],
                         row["rps"], row["degraded"], held])  # fmt: skip
    print_table(
        f"POST /v1/retrieve ({results['requests']} requests per level)",
        ("adapter", "clients", "p50 ms", "p95 ms", "p99 ms", "req/s", "degraded", "target p95"),
        rows,
    )
    mcp: dict[str, Any] = next(
        (r["mcp"] for a, r in results.items() if isinstance(r, dict) and "mcp" in r), {}
    )
    if mcp:
        print_table(
            "MCP tool calls over streamable HTTP (one session, sequential)",
            ("tool", "p50 ms", "p95 ms", "n"),
            [[name, row["p50"], row["p95"], row["n"]] for name, row in mcp.items()],
        )


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("api", __doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--mcp-calls", type=int, default=200)
    parser.add_argument("--only", nargs="+", default=["pgvector", "weaviate"],
                        choices=["pgvector", "weaviate"])  # fmt: skip
    args = parser.parse(argv)
    found = asyncio.run(measure(args))
    save(found, args.out)
    report(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
