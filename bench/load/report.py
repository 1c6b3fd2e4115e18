"""The load benchmarks' tables, and ``capacity.json`` written after every phase."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table

from bench.load.roles import ROLE_UNIT
from bench.report import console


def save_capacity(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    """Written after every phase: a crash later keeps what was measured."""
    (args.out / "capacity.json").write_text(json.dumps(doc, indent=2))


def print_capacity(doc: dict[str, Any]) -> None:
    runs = [("calibration", doc["calibration"])] if doc.get("calibration") else []
    for name, search_ in (("mixed", doc.get("mixed")), *(doc.get("per_kind") or {}).items()):
        if search_ and "runs" in search_:
            if search_.get("calibration"):
                runs.append((f"{name} calibration", search_["calibration"]))
            runs += [(name, r) for r in search_["runs"]]
        elif search_:
            runs.append((name, search_))
    if runs:
        table = Table(title="Capacity candidates (each on a fresh embedded stack)")
        cols = (
            *("load", "x", "turns/s", "files/s", "clients", "s", "held", "kept up"),
            *("max lag", "retrieve/s", "p95 ms", "fallback", "load 1m", "others' cores"),
        )
        for col in cols:
            table.add_column(col, justify="right")
        for name, r in runs:
            j, ret, cpu = r["judged"], r["streams"]["retrieve_http"], r["cpu_cores"]
            table.add_row(*map(str, (
                name, r["factor"], r["turns_per_s"], r["files_per_s"], r["retrieval_clients"],
                round(r["seconds"]), "yes" if j["held"] else "no", j["kept_up"], r["max_lag"],
                ret["achieved_per_s"], ret["p95_ms"], f"{j['retrieval_degraded_share']:.0%}",
                (cpu.get("load_average_1m") or {}).get("mean"), cpu.get("others"),
            )))  # fmt: skip
        console.print(table)
        for name, r in runs:
            if not r["judged"]["held"]:
                console.print(f"  {name} x{r['factor']}: {'; '.join(r['judged']['why'])}")
    if doc.get("mixed"):
        m = doc["mixed"]
        console.print(
            f"mixed capacity: {m['capacity']} "
            f"(held x{m['held_factor']}, failed x{m['failed_factor']})"
        )
    if doc.get("roles"):
        table = Table(title="Worker roles draining a backlog (per machine: the better count)")
        for col in ("role", "workers", "items", "seconds", "rate", "unit", "load 1m"):
            table.add_column(col, justify="right")
        for r in doc["roles"]["runs"]:
            rate = r.get("chunks_per_s", r["per_s"])
            table.add_row(*map(str, (r["role"], r["workers"], r["items"], r["seconds"], rate,
                                     ROLE_UNIT[r["role"]], r["load_average_1m"])))  # fmt: skip
        console.print(table)
    if doc.get("overload"):
        o = doc["overload"]
        lost = o.get("landed") or {}
        lag = o["lag"]
        console.print(
            f"overload x{o['factor']} for {o['seconds']:.0f}s: lag max {lag['max_during_load']}, "
            f"growth {lag['growth_per_min_during_load']}/min, drained after "
            f"{o['drained_after_s']}s; bounded {o['bounded']}; nothing lost {o['nothing_lost']}"
        )
        for part in ("turns", "files", "deadletters"):
            console.print(f"  {part}: {lost.get(part)}")
    p = doc.get("projection")
    if p:
        table = Table(title="Machines like this one for 100 turns/s, 50 files/s, 50 clients")
        for col in ("part", "machines", "arithmetic"):
            table.add_column(col, justify="right" if col == "machines" else "left")
        for name, r in p["roles"].items():
            table.add_row(name, str(r["machines"]), r["arithmetic"])
        table.add_row("total", str(p["machines_fractional"]), p["arithmetic"])
        console.print(table)
        console.print(f"  packed: {p['machines_packed']}, each part its own: "
                      f"{p['machines_each_role_its_own']}; check: {p.get('check')}")  # fmt: skip


def print_load(result: dict[str, Any]) -> None:
    table = Table(title=f"Load for {result['seconds']:.0f}s on the embedded stack")
    for col in ("stream", "target/s", "achieved/s", "p50 ms", "p95 ms", "p99 ms", "errors"):
        table.add_column(col, justify="right")
    for name, s in result["streams"].items():
        target = "closed loop" if s["target_per_s"] is None else s["target_per_s"]
        failed = s["errors"] + s["skipped_in_flight_cap"]
        row = [name, target, s["achieved_per_s"], s["p50_ms"], s["p95_ms"], s["p99_ms"], failed]
        table.add_row(*map(str, row))
    console.print(table)
    v = result["verdict"]
    series = Table(title=f"After the first {v['warmup_s']:.0f}s")
    for col in ("series", "end of warm-up", "last", "allowed", "slope/min", "grew"):
        series.add_column(col, justify="right")
    for kind in ("lag", "rss_mb"):
        for name, t in v[kind].items():
            keys = ("at_end_of_warmup", "last", "allowed", "slope_per_min")
            grew = t.get("grew", t.get("verdict"))
            series.add_row(f"{kind} {name}", *(str(t.get(k, "-")) for k in keys), str(grew))
    console.print(series)
    for name, r in result["worker_topics"].items():
        console.print(f"  {name}: written {r['written_per_s']}/s, "
                      f"worker read {r['worker_read_per_s']}/s")  # fmt: skip
    said = "GREW: " + ", ".join(v["grew"]) if v["grew"] else "no growth in lag or memory"
    drained = (
        f"drained {result['drained_after_s']}s after the load"
        if result["drained_after_s"] is not None
        else f"{result['lag_left_after_drain']} messages still behind "
        f"{result['drain_timeout_s']:.0f}s after the load"
    )
    console.print(f"verdict after the first {v['warmup_s']:.0f}s: {said}; {drained}")


def print_scaling(result: dict[str, Any]) -> None:
    table = Table(title="1 vs 2 workers (one consumer group)")
    for col in (
        "workers",
        "files/s",
        "chunks/s",
        "per worker",
        "episodes/s",
        "per worker",
        "load 1m",
    ):
        table.add_column(col, justify="right")
    for r in result["runs"]:
        f, t = r["files"], r["turns"]
        row = [
            *(r["workers"], f["files_per_s"], f["chunks_per_s"], f["files_per_s_per_worker"]),
            *(t["episodes_per_s"], t["episodes_per_s_per_worker"], r["load_average_1m"]),
        ]
        table.add_row(*map(str, row))
    console.print(table)
    console.print(f"speed-up, 2 workers over 1 (mean of runs): {result['speedup_2_over_1']}")
