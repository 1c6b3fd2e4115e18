"""Benchmark freshness: ``FileChanged`` produced → its chunks searchable with vectors.

The real path, each stage a real process (:mod:`bench.stack`): Tansu → Faust worker
(file chunker, then embedder with all-MiniLM-L6-v2) → ``tribal project`` (index
projection into pgvector on an embedded PostgreSQL). Edits are paced one at a time.
Target: p95 < 2 s.

    python -m bench.freshness [--edits 40] [--quick]
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench.changes import edited_file
from bench.report import machine, print_table, save
from bench.run import Arguments, scratch
from bench.stack import running_stack, until
from bench.stats import summary

TARGET_P95_S = 2.0


async def run(edits: int, where: Path) -> dict[str, Any]:
    latencies = []
    async with running_stack(where, projections=["index"], default_partitions=2) as stack:
        for n in range(-1, edits):  # n = -1 warms up: model load, group join
            event = edited_file(n + 1000 if n < 0 else n)
            t0 = time.perf_counter()
            await stack.pipe.produce("files.changes", [(event.key, event)])
            searchable = partial(stack.searchable, f"file:{event.key}")
            await until(searchable, 240 if n < 0 else 30, event.key)
            if n >= 0:
                latencies.append(time.perf_counter() - t0)
            await asyncio.sleep(0.2)
    return {"edits": len(latencies), **summary(latencies, 50, 95, unit="s")}


def main(argv: list[str] | None = None) -> int:
    args = Arguments("freshness", __doc__, edits=(40, 5)).parse(argv)
    with scratch("fresh") as where:
        result = asyncio.run(run(args.edits, where))
    doc = {
        "benchmark": "freshness: FileChanged → searchable (pgvector, embedder in the loop)",
        "machine": machine(),
        **result,
        "target_p95_s": TARGET_P95_S,
        "target_met": result["p95_s"] < TARGET_P95_S,
    }
    save(doc, args.out)
    columns = ("edits", "p50_s", "p95_s", "max_s")
    print_table(
        f"Freshness (target p95 < {TARGET_P95_S} s)",
        columns,
        [[result[c] for c in columns]],
        left=0,
    )
    print(f"target met: {doc['target_met']}  →  {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
