"""Benchmark the documenter with the local provider: tables per second, in process.

A synthetic database of ``--tables`` tables in modules of ten (each module a small
star of foreign keys plus a shared name prefix, every module also referencing one
``users`` hub), documented three ways: the first full pass (plan + every table and
domain), one renamed column (one table re-documented) and a full replay of the log
into a fresh state (what a restarted worker does before it resumes; no LLM calls).

    python scripts/bench_documenter.py [--tables 1000] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from events.documents import DomainDocumented, TableDocumented  # noqa: E402
from events.schema import Column, ForeignKey, TableObserved  # noqa: E402
from streams.documenter.documenter import Documenter, make_provider  # noqa: E402
from streams.documenter.lane import DocumenterLane  # noqa: E402
from streams.documenter.state import SchemaState, advance  # noqa: E402

MODULE = ["core", "line", "item", "event", "note", "tag", "link", "rate", "log_entry", "flag"]


def _table(name: str, refs: list[str], extra: int = 6) -> TableObserved:
    cols = [Column(name="id", type="bigint", nullable=False)]
    cols += [Column(name=f"{r}_id", type="bigint", nullable=False) for r in refs]
    cols += [Column(name=f"attr_{i}", type="text", comment="A value" if i == 0 else None)
             for i in range(extra)]  # fmt: skip
    return TableObserved(
        database="bench", schema_name="public", table_name=name, database_type="postgres",
        columns=tuple(cols), primary_key=("id",), row_count_approx=1000,
        foreign_keys=tuple(
            ForeignKey(name=f"{name}_{r}_fk", columns=(f"{r}_id",),
                       references_table=f"bench.public.{r}", references_columns=("id",))
            for r in refs
        ),
        metadata_hash=f"{name}:{len(cols)}",
    )  # fmt: skip


def synthetic(n: int) -> list[TableObserved]:
    tables = [_table("users", [])]
    for m in range((n - 1 + len(MODULE) - 1) // len(MODULE)):
        head = f"mod{m}_{MODULE[0]}"
        tables.append(_table(head, ["users"]))
        tables += [_table(f"mod{m}_{s}", [head]) for s in MODULE[1:]]
    return tables[:n]


async def run(n: int) -> dict[str, Any]:
    tables = synthetic(n)
    lane = DocumenterLane(Documenter(make_provider(env={})))
    t0 = time.perf_counter()
    emits = await lane.process(tables)
    full_s = time.perf_counter() - t0
    docs = sum(isinstance(e.event, TableDocumented) for e in emits)
    domains = sum(isinstance(e.event, DomainDocumented) for e in emits)
    renamed = tables[5].model_copy(
        update={"columns": (*tables[5].columns[:-1], Column(name="renamed", type="text")),
                "metadata_hash": "renamed"}
    )  # fmt: skip
    t0 = time.perf_counter()
    again = await lane.process([renamed])
    one_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    state, _ = advance(SchemaState("bench"), [*tables, renamed])
    replay_s = time.perf_counter() - t0
    assert state.plan is not None
    return {
        "tables": n,
        "domains": domains,
        "tables_documented": docs,
        "full_pass_s": round(full_s, 4),
        "tables_per_s": round(docs / full_s, 1),
        "one_column_renamed_ms": round(one_s * 1000, 2),
        "one_column_renamed_emits": len(again),
        "replay_fold_s": round(replay_s, 4),
        "replay_events_per_s": round((n + 1) / replay_s, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--quick", action="store_true", help="only 100 tables")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "documenter.json")
    args = parser.parse_args(argv)
    sizes = [100] if args.quick else args.tables
    rows = [asyncio.run(run(n)) for n in sizes]
    result = {
        "benchmark": "documenter",
        "provider": "local",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    table = Table(title="documenter (local provider, in process)")
    for col in ("tables", "domains", "tables/s", "1 rename ms", "emits", "replay ev/s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r["tables"]), str(r["domains"]), f"{r['tables_per_s']:.0f}",
            f"{r['one_column_renamed_ms']:.1f}", str(r["one_column_renamed_emits"]),
            f"{r['replay_events_per_s']:.0f}",
        )  # fmt: skip
    Console().print(table)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
