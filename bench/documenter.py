"""Benchmark the documenter with the local provider: tables per second, in process.

A synthetic database of ``--tables`` tables in modules of ten (each module a small
star of foreign keys plus a shared name prefix, every module also referencing one
``users`` hub), documented three ways: the first full pass (plan + every table and
domain), one renamed column (one table re-documented) and a full replay of the log
into a fresh state (what a restarted worker does before it resumes; no LLM calls).

    python -m bench.documenter [--tables 1000] [--quick]
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.report import machine, print_table, save
from bench.run import Arguments
from devstack.synthetic import referencing_table
from events.documents import DomainDocumented, TableDocumented
from events.schema import Column, TableObserved
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.documenter.state import SchemaState, advance

MODULE = ["core", "line", "item", "event", "note", "tag", "link", "rate", "log_entry", "flag"]


def _table(name: str, refs: list[str], extra: int = 6) -> TableObserved:
    attrs = [
        Column(name=f"attr_{i}", type="text", comment="A value" if i == 0 else None)
        for i in range(extra)
    ]
    columns = 1 + len(refs) + extra
    return referencing_table(
        "bench", name, refs, *attrs, metadata_hash=f"{name}:{columns}", row_count_approx=1000
    )


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
    parser = Arguments("documenter", __doc__, quick="only 100 tables")
    parser.add_argument("--tables", type=int, nargs="*", default=[100, 1000])
    args = parser.parse(argv)
    rows = [asyncio.run(run(n)) for n in ([100] if args.quick else args.tables)]
    save({"benchmark": "documenter", "provider": "local", "machine": machine(), "runs": rows},
         args.out)  # fmt: skip
    print_table(
        "documenter (local provider, in process)",
        ("tables", "domains", "tables/s", "1 rename ms", "emits", "replay ev/s"),
        [
            [
                r["tables"],
                r["domains"],
                f"{r['tables_per_s']:.0f}",
                f"{r['one_column_renamed_ms']:.1f}",
                r["one_column_renamed_emits"],
                f"{r['replay_events_per_s']:.0f}",
            ]
            for r in rows
        ],
        left=0,
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
