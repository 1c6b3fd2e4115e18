"""Benchmark live changes under a backfill: each kind of change → searchable with its vector,
while thousands of files are still waiting for theirs.

The real path, each stage a real process, as ``tribal up`` runs them: Tansu → a Faust
worker (chunkers, the documenter, the embedders, the memory agents) → ``tribal project``
(every projection, the index on an embedded PostgreSQL with pgvector). A backfill of
installed Python source files (read at run time) is produced first; once it is chunked,
and while its vectors are still being computed, live changes are sent one at a time:
a help-desk article, a schema change, a single edited file and a memory turn. Each is
timed from produce to "its vector is in the index". Target: p95 < 2 s for each kind.

    python -m scripts.bench_live [--files 2000] [--rounds 8] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
from rich.console import Console
from rich.table import Table

from devstack.pipeline import Pipeline, isolated_settings, kb_article, settings_env
from devstack.postgres import postgres_node
from events.documents import table_document_id
from events.files import FileChanged
from events.memory import TurnRecorded
from events.schema import Column, TableObserved
from runtime.embedded.process import ChildProcess
from runtime.embedded.tansu import TansuBroker

ROOT = Path(__file__).resolve().parent.parent
TARGET_P95_S = 2.0
RESERVED = {"requests"}  # kept for the independent check
KINDS = ("turn", "article", "schema", "file")


def backfill_files(limit: int) -> list[FileChanged]:
    """Python files of the installed packages, smallest packages' files first (stable)."""
    site = Path(sysconfig.get_paths()["purelib"])
    out: list[FileChanged] = []
    for package in sorted(p for p in site.iterdir() if p.is_dir()):
        if package.name in RESERVED or package.name.endswith((".dist-info", ".libs")):
            continue
        for path in sorted(package.rglob("*.py")):
            try:
                content = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if not 200 <= len(content) <= 40_000:
                continue
            out.append(
                FileChanged(
                    repo="backfill",
                    path=str(path.relative_to(site)),
                    content=content,
                    sha256=hashlib.sha256(content.encode()).hexdigest(),
                    language="python",
                    size_bytes=len(content.encode()),
                )
            )
            if len(out) == limit:
                return out
    return out


def live_file(n: int) -> FileChanged:
    content = (
        f'"""Refunds, round {n}."""\n\n\ndef refund_parcel_{n}(order_id: int) -> bool:\n'
        f'    """Refund order {n} when the parcel never arrived."""\n    return order_id > {n}\n'
    )
    return FileChanged(
        repo="live",
        path=f"src/refunds_{n}.py",
        content=content,
        sha256=hashlib.sha256(content.encode()).hexdigest(),
        language="python",
        size_bytes=len(content),
    )


def live_table(n: int) -> TableObserved:
    return TableObserved(
        database="shop",
        schema_name="public",
        table_name=f"parcel_refunds_{n}",
        database_type="postgres",
        columns=[
            Column(name="id", type="bigint", nullable=False),
            Column(name="order_id", type="bigint"),
            Column(name="refunded_at", type="timestamptz"),
        ],
        primary_key=["id"],
        comment=f"Refunds paid for lost parcels, round {n}",
        metadata_hash=hashlib.sha256(f"parcel_refunds_{n}".encode()).hexdigest(),
    )


class Probe:
    """Counts in the index: rows of a document (or group) with a vector, pending vectors."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def _count(self, sql: str, *args: object) -> int:
        try:
            return int(await self.pool.fetchval(sql, *args) or 0)
        except asyncpg.UndefinedTableError:  # the projection has not created it yet
            return 0

    async def document(self, doc_id: str) -> bool:
        return bool(
            await self._count(
                "SELECT count(*) FROM tribal_index.objects WHERE document_id = $1 "
                "AND kind IS NOT NULL AND embedding IS NOT NULL",
                doc_id,
            )
        )

    async def group(self, group_id: str) -> bool:
        return bool(
            await self._count(
                "SELECT count(*) FROM tribal_index.objects WHERE group_id = $1 "
                "AND kind IS NOT NULL AND embedding IS NOT NULL",
                group_id,
            )
        )

    async def backfill(self) -> tuple[int, int]:
        """(backfill documents indexed, their chunks still without a vector)."""
        docs = await self._count(
            "SELECT count(DISTINCT document_id) FROM tribal_index.objects "
            "WHERE document_id LIKE 'file:backfill:%' AND kind IS NOT NULL"
        )
        pending = await self._count(
            "SELECT count(*) FROM tribal_index.objects "
            "WHERE document_id LIKE 'file:backfill:%' AND kind IS NOT NULL AND embedding IS NULL"
        )
        return docs, pending


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not await check():
        if time.perf_counter() > deadline:
            raise TimeoutError("never became searchable")
        await asyncio.sleep(0.01)


async def send_live(pipe: Pipeline, probe: Probe, kind: str, n: int, timeout: float) -> float:
    """Seconds from producing one live change of ``kind`` to its vector in the index."""
    t0 = time.perf_counter()
    if kind == "article":
        article = kb_article(10_000 + n, f"Lost parcel refunds, round {n}: refund the order.")
        await pipe.produce("kb.articles", [(article.article_id, article)])
        await until(lambda: probe.document(f"kb:{article.article_id}"), timeout)
    elif kind == "schema":
        table = live_table(n)
        await pipe.produce("schema.changes", [(table.fully_qualified_name, table)])
        await until(lambda: probe.document(table_document_id(table.fully_qualified_name)), timeout)
    elif kind == "file":
        edit = live_file(n)
        await pipe.produce("files.changes", [(edit.key, edit)])
        await until(lambda: probe.document(f"file:{edit.key}"), timeout)
    else:
        group = f"bench:{uuid.uuid4().hex[:8]}"
        turn = TurnRecorded(
            group_id=group,
            user_message=f"My parcel {n} never arrived, can I get a refund?",
            agent_response="Yes: the refund is on its way.",
        )
        await pipe.produce("memory.turns", [(group, turn)])
        await until(lambda: probe.group(group), timeout)
    return time.perf_counter() - t0


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def run(files: int, rounds: int, scratch: Path) -> dict[str, object]:
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    pg = postgres_node(scratch / "pg", durable=False).start()
    children: list[ChildProcess] = []
    try:
        settings = isolated_settings(broker.bootstrap, scratch / "data", postgres_dsn=pg.dsn)
        pipe = Pipeline(settings)
        await pipe.create_topics()
        env = settings_env(settings)
        env["TRIBAL_POSTGRES_DSN"] = pg.dsn
        for name, args in (("worker", ["worker"]), ("project", ["project"])):
            child = ChildProcess(
                name,
                [sys.executable, "-m", "cli", *args],
                env=env,
                log_path=scratch / f"{name}.log",
                cwd=ROOT,
            )
            child.start()
            children.append(child)
        pool = await asyncpg.create_pool(pg.dsn, min_size=1, max_size=2)
        probe = Probe(pool)
        try:
            for kind in KINDS:  # warm-up: model loads, group joins, first documents
                await send_live(pipe, probe, kind, -1, timeout=300)
            load = backfill_files(files)
            t_load = time.perf_counter()
            await pipe.produce("files.changes", [(f.key, f) for f in load])
            # Chunked: the backfill's documents are in the index (their vectors need not
            # be), and no more are coming.
            indexed, last_change = 0, time.perf_counter()
            deadline = time.perf_counter() + 600
            while time.perf_counter() < deadline:
                await asyncio.sleep(0.5)
                now, _ = await probe.backfill()
                if now != indexed:
                    indexed, last_change = now, time.perf_counter()
                elif indexed >= len(load) * 0.9 and time.perf_counter() - last_change > 2:
                    break
            chunked_s = last_change - t_load
            _, pending_start = await probe.backfill()
            samples: dict[str, list[float]] = {k: [] for k in KINDS}
            pending_seen: list[int] = []
            for n in range(rounds):
                for kind in KINDS:
                    took = await send_live(pipe, probe, kind, n, timeout=120)
                    samples[kind].append(took)
                    print(f"  round {n} {kind}: {took:.3f} s", flush=True)
                    pending_seen.append((await probe.backfill())[1])
                    await asyncio.sleep(0.5)
            _, pending_end = await probe.backfill()
        finally:
            await pool.close()
    finally:
        for child in children:
            child.stop()
        pg.stop()
        broker.stop()
    everything = [s for values in samples.values() for s in values]
    return {
        "backfill_files": len(load),
        "backfill_chunked_s": round(chunked_s, 1),
        "pending_vectors_at_start": pending_start,
        "pending_vectors_at_end": pending_end,
        "every_change_under_backfill": min(pending_seen) > 0,
        "by_kind": {
            kind: {
                "changes": len(values),
                "p50_s": round(statistics.median(values), 3),
                "p95_s": round(p95(values), 3),
                "max_s": round(max(values), 3),
            }
            for kind, values in samples.items()
        },
        "p95_s": round(p95(everything), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--keep", action="store_true", help="Keep the scratch directory.")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "live.json")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="tribal-bench-live-"))
    scratch.chmod(0o755)
    files, rounds = (300, 2) if args.quick else (args.files, args.rounds)
    try:
        result = asyncio.run(run(files, rounds, scratch))
    finally:
        if args.keep:
            print(f"scratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    by_kind = result["by_kind"]
    assert isinstance(by_kind, dict)
    met = bool(result["every_change_under_backfill"]) and all(
        row["p95_s"] < TARGET_P95_S for row in by_kind.values()
    )
    doc = {
        "benchmark": "live changes → searchable with their vector, during a file backfill",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        **result,
        "target_p95_s": TARGET_P95_S,
        "target_met": met,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2))
    table = Table(
        title=f"Live changes during a {result['backfill_files']}-file backfill "
        f"(target p95 < {TARGET_P95_S} s)"
    )
    for col in ("kind", "changes", "p50_s", "p95_s", "max_s"):
        table.add_column(col, justify="right")
    for kind, row in by_kind.items():
        table.add_row(kind, *(str(row[c]) for c in ("changes", "p50_s", "p95_s", "max_s")))
    console = Console()
    console.print(table)
    console.print(
        f"backfill chunked in {result['backfill_chunked_s']} s; vectors pending "
        f"{result['pending_vectors_at_start']} → {result['pending_vectors_at_end']}; "
        f"p95 {result['p95_s']} s; target met: {met}  →  {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
