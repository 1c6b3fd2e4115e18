"""The results as JSON and as a table: rows, Faust's overhead, and the targets."""

from __future__ import annotations

from typing import Any

from bench.backbone.measure import Result
from bench.report import console, print_table

TARGET_OVERHEAD_PCT = 20.0
TARGET_SIZE = 1024


def _find(rows: list[Result], broker: str, path: str, size: int) -> Result | None:
    return next((r for r in rows if (r.broker, r.path, r.size) == (broker, path, size)), None)


def overheads(rows: list[Result]) -> list[dict[str, Any]]:
    """Faust against bare aiokafka (and against the aiokafka relay), per broker and size."""
    out: list[dict[str, Any]] = []
    for faust in (r for r in rows if r.path.startswith("faust")):
        entry: dict[str, Any] = {"broker": faust.broker, "path": faust.path, "size": faust.size}
        for base_path in ("aiokafka", "relay"):
            base = _find(rows, faust.broker, base_path, faust.size)
            if base is None:
                continue
            entry[f"vs_{base_path}"] = {
                # Positive means Faust is worse: fewer msgs/s, more milliseconds.
                "throughput_pct": round((1 - faust.msgs_per_s / base.msgs_per_s) * 100, 1),
                "p50_pct": round((faust.p50_ms / base.p50_ms - 1) * 100, 1),
            }
        vs = entry.get("vs_aiokafka")
        if faust.size == TARGET_SIZE and vs is not None:
            entry["target_pct"] = TARGET_OVERHEAD_PCT
            entry["target_met"] = (
                vs["throughput_pct"] <= TARGET_OVERHEAD_PCT and vs["p50_pct"] <= TARGET_OVERHEAD_PCT
            )
        out.append(entry)
    return out


def _size(size: int) -> str:
    return f"{size // 1024} KB" if size >= 1024 else f"{size} B"


def _pct(row: dict[str, float], key: str) -> str:
    return f"{row.get(key, float('nan')):+.1f}%"


def print_report(doc: dict[str, Any]) -> None:
    print_table(
        "Event backbone",
        ("broker", "path", "size", "messages", "seconds", "msgs/s", "MB/s",
         "p50 ms", "p99 ms", "p50 loaded", "p99 loaded"),
        [
            [f"{r['broker']} {r['broker_version']}", r["path"], _size(r["size"]), r["messages"],
             f"{r['seconds']:.2f}", f"{r['msgs_per_s']:,.0f}", f"{r['mb_per_s']:.1f}",
             f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}", f"{r['loaded_p50_ms']:.0f}",
             f"{r['loaded_p99_ms']:.0f}"]
            for r in doc["results"]
        ],
        left=2,
    )  # fmt: skip
    if doc["faust_overhead"]:
        print_table(
            "Faust overhead (positive = worse)",
            ("broker", "path", "size", "thr vs aiokafka", "p50 vs aiokafka", "thr vs relay",
             "p50 vs relay", f"≤{TARGET_OVERHEAD_PCT:.0f}% at 1 KB"),
            [
                [o["broker"], o["path"], _size(o["size"]),
                 _pct(o.get("vs_aiokafka", {}), "throughput_pct"),
                 _pct(o.get("vs_aiokafka", {}), "p50_pct"),
                 _pct(o.get("vs_relay", {}), "throughput_pct"),
                 _pct(o.get("vs_relay", {}), "p50_pct"),
                 {None: "", True: "[green]met", False: "[red]not met"}[o.get("target_met")]]
                for o in doc["faust_overhead"]
            ],
            left=3,
        )  # fmt: skip
    up = doc.get("startup")
    if up:
        runs = ", ".join(f"{r['seconds']:.2f}s" for r in up["runs"])
        verdict = "[green]met" if up["target_met"] else "[red]not met"
        console.print(
            f"Embedded start-up to /healthz 200: {runs} (warm {up['warm_s']:.2f}s; "
            f"target < {up['target_warm_s']:.0f}s {verdict}[/])"
        )
    console.print(f"Faust settings: {doc['faust_settings']}")
    console.print(f"Machine: {doc['machine']}")
