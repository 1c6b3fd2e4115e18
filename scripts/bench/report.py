"""The results as JSON and as a table: rows, Faust's overhead, and the targets."""

from __future__ import annotations

import os
import platform
import sys
from importlib.metadata import version
from typing import Any

from rich.console import Console
from rich.table import Table

from .measure import Result

TARGET_OVERHEAD_PCT = 20.0
TARGET_SIZE = 1024


def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "faust_streaming": version("faust-streaming"),
        "aiokafka": version("aiokafka"),
        "mode_streaming": version("mode-streaming"),
    }


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


def print_report(doc: dict[str, Any], console: Console) -> None:
    table = Table(title="Event backbone", title_justify="left")
    for column in ("broker", "path", "size", "messages", "seconds", "msgs/s", "MB/s"):
        table.add_column(column, justify="left" if column in ("broker", "path") else "right")
    for column in ("p50 ms", "p99 ms", "p50 loaded", "p99 loaded"):
        table.add_column(column, justify="right")
    for r in doc["results"]:
        table.add_row(
            f"{r['broker']} {r['broker_version']}",
            r["path"],
            _size(r["size"]),
            str(r["messages"]),
            f"{r['seconds']:.2f}",
            f"{r['msgs_per_s']:,.0f}",
            f"{r['mb_per_s']:.1f}",
            f"{r['p50_ms']:.1f}",
            f"{r['p99_ms']:.1f}",
            f"{r['loaded_p50_ms']:.0f}",
            f"{r['loaded_p99_ms']:.0f}",
        )
    console.print(table)

    if doc["faust_overhead"]:
        over = Table(title="Faust overhead (positive = worse)", title_justify="left")
        for column in ("broker", "path", "size", "thr vs aiokafka", "p50 vs aiokafka"):
            over.add_column(column)
        over.add_column("thr vs relay")
        over.add_column("p50 vs relay")
        over.add_column(f"≤{TARGET_OVERHEAD_PCT:.0f}% at 1 KB")
        for o in doc["faust_overhead"]:
            a = o.get("vs_aiokafka", {})
            b = o.get("vs_relay", {})
            met = o.get("target_met")
            over.add_row(
                o["broker"],
                o["path"],
                _size(o["size"]),
                f"{a.get('throughput_pct', float('nan')):+.1f}%",
                f"{a.get('p50_pct', float('nan')):+.1f}%",
                f"{b.get('throughput_pct', float('nan')):+.1f}%",
                f"{b.get('p50_pct', float('nan')):+.1f}%",
                "" if met is None else ("[green]met" if met else "[red]not met"),
            )
        console.print(over)

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
