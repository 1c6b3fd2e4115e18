"""DDL → schema event latency of the PostgreSQL source with the DDL trigger installed.

    python -m bench.sources_ddl [--dsn postgresql://…] [--statements 100]

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
import os
import time
from typing import Any

import asyncpg

from bench.report import machine, print_table, save
from bench.run import Arguments, scratch
from bench.stats import summary
from devstack.postgres import postgres_node
from events.schema import TableDropped
from runtime.databases import drop_database, fresh_database
from sources.checkpoint import MemoryCheckpoint
from sources.postgres import PostgresSource
from sources.sink import MemorySink

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


def filler(tables: int) -> str:
    """``tables`` tables to make the database bigger: every pass introspects all of it."""
    if not tables:
        return ""
    return "CREATE TABLE filler_0 (id int PRIMARY KEY);" + "".join(
        f"CREATE TABLE filler_{i} (id int PRIMARY KEY, ref int REFERENCES filler_0, "
        f"note text); COMMENT ON TABLE filler_{i} IS 'filler';"
        for i in range(1, tables)
    )


async def measure(server_dsn: str, count: int, background: int = 0) -> dict[str, Any]:
    dsn = await fresh_database(server_dsn, "bench", filler(background))
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
        await drop_database(server_dsn, dsn)
    return {**summarise(samples, source.debounce), "background_tables": background}


def summarise(samples: list[tuple[str, float]], debounce: float) -> dict[str, Any]:
    def stats(values: list[float]) -> dict[str, float]:
        return {"n": len(values), **summary(values, unit="ms", digits=1)}

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
        "machine": machine("asyncpg"),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    dsn = args.dsn or os.environ.get("TRIBAL_TEST_POSTGRES_DSN")
    if dsn:
        return await measure(dsn, args.statements, args.background_tables)
    with scratch("pg") as where:
        server = postgres_node(where, durable=False).start()
        try:
            return await measure(server.dsn, args.statements, args.background_tables)
        finally:
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("sources_ddl", __doc__)
    parser.add_argument("--dsn", help="superuser postgresql:// URL (default: embedded server)")
    parser.add_argument("--statements", type=int, default=100)
    parser.add_argument("--background-tables", type=int, default=0, help="extra tables")
    args = parser.parse(argv)
    result = asyncio.run(main_async(args))
    save(result, args.out)
    columns = ("n", "p50_ms", "p95_ms", "p99_ms", "max_ms")
    print_table(
        f"DDL → TableObserved/TableDropped latency (trigger, target p95 < {TARGET_P95_MS:.0f} ms)",
        ("statement", *columns),
        [
            [kind, *(row[c] for c in columns)]
            for kind, row in [*result["by_statement"].items(), ("all", result["overall"])]
        ],
    )
    verdict = "met" if result["target_met"] else "MISSED"
    print(f"target p95 < {TARGET_P95_MS:.0f} ms: {verdict}; wrote {args.out}")
    return 0 if result["target_met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
