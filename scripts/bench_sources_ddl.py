"""DDL → schema event latency of the PostgreSQL source with the DDL trigger installed.

    python -m scripts.bench_sources_ddl [--dsn postgresql://…] [--statements 100]

Runs ``PostgresSource.run`` (trigger + LISTEN, polling pushed out to 60 s so only the
trigger can be measured) against a scratch database, issues DDL statements one at a
time (CREATE TABLE, ALTER TABLE ADD COLUMN, COMMENT ON, DROP TABLE, in turn) and
times each from the statement's commit to the event reaching the sink. Without
``--dsn`` (or ``TRIBAL_TEST_POSTGRES_DSN``) it starts an embedded PostgreSQL.
Writes ``bench-results/sources_ddl.json`` and prints a table. Target: p95 < 300 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from events.schema import TableDropped  # noqa: E402
from sources.checkpoint import MemoryCheckpoint  # noqa: E402
from sources.postgres import PostgresSource  # noqa: E402
from sources.sink import MemorySink  # noqa: E402

TARGET_P95_MS = 300.0


def statements(count: int) -> list[tuple[str, str, str]]:
    """(kind, sql, key of the expected event) for ``count`` statements."""
    out: list[tuple[str, str, str]] = []
    n = 0
    while len(out) < count:
        t = f"bench_{n}"
        key = f"bench.public.{t}"
        out += [
            ("create", f"CREATE TABLE {t} (id int PRIMARY KEY, name text)", key),
            ("alter", f"ALTER TABLE {t} ADD COLUMN extra_{n} int", key),
            ("comment", f"COMMENT ON TABLE {t} IS 'bench table {n}'", key),
            ("drop", f"DROP TABLE {t}", key),
        ]
        n += 1
    return out[:count]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


async def measure(server_dsn: str, count: int, background: int = 0) -> dict[str, Any]:
    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(server_dsn)
    await admin.execute(f"CREATE DATABASE {name}")
    dsn = server_dsn.rsplit("/", 1)[0] + "/" + name
    if background:  # every pass introspects the whole database: make it bigger
        filler = await asyncpg.connect(dsn)
        await filler.execute("CREATE TABLE filler_0 (id int PRIMARY KEY)")
        await filler.execute(
            "".join(
                f"CREATE TABLE filler_{i} (id int PRIMARY KEY, ref int REFERENCES filler_0, "
                f"note text); COMMENT ON TABLE filler_{i} IS 'filler';"
                for i in range(1, background)
            )
        )
        await filler.close()
    source = PostgresSource("bench", dsn, install_trigger=True, interval=60.0)
    sink, stop = MemorySink(), asyncio.Event()
    task = asyncio.create_task(source.run(sink, MemoryCheckpoint(), stop))
    ddl = await asyncpg.connect(dsn)
    samples: list[tuple[str, float]] = []
    try:
        for _ in range(500):
            if source.trigger_installed:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        for kind, sql, key in statements(count):
            since = len(sink.emitted)
            start = time.perf_counter()
            await ddl.execute(sql)
            while not any(
                e.key == key and (kind != "drop" or isinstance(e.event, TableDropped))
                for e in sink.emitted[since:]
            ):
                if time.perf_counter() - start > 5:
                    raise RuntimeError(f"no event for {sql!r} within 5 s")
                await asyncio.sleep(0.001)
            samples.append((kind, (time.perf_counter() - start) * 1000))
    finally:
        stop.set()
        await task
        await ddl.close()
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()
    return {**summarise(samples, source.debounce), "background_tables": background}


def summarise(samples: list[tuple[str, float]], debounce: float) -> dict[str, Any]:
    def stats(values: list[float]) -> dict[str, float]:
        return {
            "n": len(values),
            "p50_ms": round(pct(values, 50), 1),
            "p95_ms": round(pct(values, 95), 1),
            "p99_ms": round(pct(values, 99), 1),
            "mean_ms": round(statistics.fmean(values), 1),
            "max_ms": round(max(values), 1),
        }

    everything = [ms for _, ms in samples]
    kinds = sorted({k for k, _ in samples})
    overall = stats(everything)
    return {
        "benchmark": "sources_ddl",
        "debounce_ms": debounce * 1000,
        "overall": overall,
        "by_statement": {k: stats([ms for kk, ms in samples if kk == k]) for k in kinds},
        "target_p95_ms": TARGET_P95_MS,
        "target_met": overall["p95_ms"] < TARGET_P95_MS,
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
            "asyncpg": asyncpg.__version__,
        },
    }


def table(result: dict[str, Any]) -> Table:
    out = Table(title=f"DDL → TableObserved/TableDropped latency (trigger, target p95 < "
                f"{TARGET_P95_MS:.0f} ms)")  # fmt: skip
    for column in ("statement", "n", "p50 ms", "p95 ms", "p99 ms", "max ms"):
        out.add_column(column, justify="left" if column == "statement" else "right")
    rows = [*result["by_statement"].items(), ("all", result["overall"])]
    for kind, s in rows:
        out.add_row(kind, *(str(s[k]) for k in ("n", "p50_ms", "p95_ms", "p99_ms", "max_ms")))
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    dsn = args.dsn or os.environ.get("TRIBAL_TEST_POSTGRES_DSN")
    if dsn:
        return await measure(dsn, args.statements, args.background_tables)
    from devstack.postgres import postgres_node

    with tempfile.TemporaryDirectory(prefix="tribal-bench-pg-") as scratch:
        server = postgres_node(Path(scratch), durable=False).start()
        try:
            return await measure(server.dsn, args.statements, args.background_tables)
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dsn", help="superuser postgresql:// URL (default: embedded server)")
    parser.add_argument("--statements", type=int, default=100)
    parser.add_argument("--background-tables", type=int, default=0, help="extra tables")
    parser.add_argument("--out", type=Path, default=Path("bench-results/sources_ddl.json"))
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    Console().print(table(result))
    verdict = "met" if result["target_met"] else "MISSED"
    Console().print(f"target p95 < {TARGET_P95_MS:.0f} ms: {verdict}; wrote {args.out}")
    return 0 if result["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
