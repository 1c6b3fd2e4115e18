"""The capacity search: the mix scaled by one factor, each candidate a load on a fresh
stack judged held or not, bisecting between the highest held and the lowest failed."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from bench.load.sampling import total_lag
from bench.load.sustained import load_once_more
from bench.report import console

BASE_MIX = {"turns": 100.0, "files": 50.0, "retrieval": 50.0}
"""The load the README once set for one machine: turns/s, file changes/s and closed-loop
retrieval clients. The capacity search scales all three by one factor."""
MIXED = ("turns", "files", "retrieval")
DEGRADED_MAX = 0.05
"""A load is not held when more than this share of retrievals answer the fallback."""


def scaled(
    args: argparse.Namespace, factor: float, kinds: tuple[str, ...], duration: float, drain: float
) -> argparse.Namespace:
    """The arguments of :func:`run_load` for ``BASE_MIX`` x ``factor`` of ``kinds``."""
    out = argparse.Namespace(**vars(args))
    out.turns_rate = round(BASE_MIX["turns"] * factor, 2) if "turns" in kinds else 0.0
    out.files_rate = round(BASE_MIX["files"] * factor, 2) if "files" in kinds else 0.0
    clients = max(1, round(BASE_MIX["retrieval"] * factor))
    out.retrieve_clients = clients if "retrieval" in kinds else 0
    out.duration, out.drain_timeout = duration, drain
    return out


def kept_up(result: dict[str, Any]) -> dict[str, float]:
    """Per input kind, the share of what was written after the first minute that the
    worker got through."""
    rates = result["worker_topics_after_warmup"]

    def r(name: str, key: str) -> float:
        return float(rates.get(name, {}).get(key, 0.0))

    out: dict[str, float] = {}
    if r("files.changes", "written_per_s") > 0:
        # read from chunks minus passed on to the bulk lane, plus read from the bulk lane
        embedded = (
            r("chunks", "worker_read_per_s")
            - r("chunks.bulk", "written_per_s")
            + r("chunks.bulk", "worker_read_per_s")
        )
        done = min(r("files.changes", "worker_read_per_s"), embedded)
        out["files"] = round(done / r("files.changes", "written_per_s"), 3)
    shares = [
        r(t, "worker_read_per_s") / r(t, "written_per_s")
        for t in ("memory.turns", "memory.episodes")
        if r(t, "written_per_s") > 0
    ]
    if shares:
        out["turns"] = round(min(shares), 3)
    return out


def judge(result: dict[str, Any]) -> dict[str, Any]:
    """Held: lag flat after the first minute, every input accepted, no process died and
    no more than ``DEGRADED_MAX`` of retrievals answered the fallback."""
    v = result["verdict"]
    why = []
    if not v["lag"] or any("verdict" in t for t in v["lag"].values()):
        why.append("too few lag samples")
    grew = [g.removeprefix("lag ") for g in v["grew"] if g.startswith("lag ")]
    if grew:
        why.append("lag grew: " + ", ".join(grew))
    if result["children_died"]:
        why.append("died: " + ", ".join(result["children_died"]))
    for name, s in result["streams"].items():
        if s["errors"] or s["skipped_in_flight_cap"]:
            why.append(f"{name}: {s['errors']} errors, {s['skipped_in_flight_cap']} not sent")
    retrieve = result["streams"]["retrieve_http"]
    degraded = retrieve["degraded"] / retrieve["calls"] if retrieve["calls"] else 0.0
    if degraded > DEGRADED_MAX:
        why.append(f"{degraded:.0%} of retrievals answered the fallback")
    return {
        "held": not why,
        "why": why,
        "rss_grew": [g.removeprefix("rss ") for g in v["grew"] if g.startswith("rss ")],
        "retrieval_degraded_share": round(degraded, 3),
        "kept_up": kept_up(result),
    }


def brief(result: dict[str, Any], factor: float) -> dict[str, Any]:
    """One candidate for the JSON: its figures and its lag series, not every sample."""
    rows = [s for s in result["samples"] if "error" not in s]
    return {
        "factor": factor,
        **result["rates"],
        "judged": judge(result),
        "seconds": result["seconds"],
        "streams": result["streams"],
        "worker_topics": result["worker_topics"],
        "worker_topics_after_warmup": result["worker_topics_after_warmup"],
        "cpu_cores": result["cpu_cores"],
        "warmup_caught_up_s": result["warmup_caught_up_s"],
        "drained_after_s": result["drained_after_s"],
        "lag_left_after_drain": result["lag_left_after_drain"],
        "max_lag": max((total_lag(s) for s in rows if s["phase"] == "load"), default=None),
        "verdict": {k: result["verdict"][k] for k in ("rule", "lag", "rss_mb", "grew")},
        "lag_series": [[s["t_s"], s["phase"], total_lag(s), s["load_average_1m"]] for s in rows],
        "landed": result.get("landed"),
        "first_attempt": result.get("first_attempt"),
    }


def next_factor(lo: float | None, hi: float | None, last: dict[str, Any]) -> float | None:
    """Bisection between the highest held and the lowest failed factor (geometric, to
    10 %); up by half when nothing failed yet; down to what the worker got through of
    the failed load when nothing held yet."""
    if lo is not None and hi is not None:
        return None if hi / lo <= 1.1 else math.sqrt(lo * hi)
    if lo is not None:
        return lo * 1.5
    assert hi is not None
    share = min(last["judged"]["kept_up"].values(), default=0.5)
    return hi * min(0.9, max(0.25, share * 0.95))


async def search(
    args: argparse.Namespace,
    scratch: Path,
    kinds: tuple[str, ...],
    start: float,
    steps: int,
    duration: float,
) -> dict[str, Any]:
    """Up to ``steps`` runs of ``kinds`` scaled by a factor, from ``start``; each for
    ``duration`` s on a fresh embedded stack, judged by :func:`judge`."""
    runs: list[dict[str, Any]] = []
    lo: float | None = None
    hi: float | None = None
    factor: float | None = start
    label = "+".join(kinds)
    for step in range(steps):
        if factor is None:
            break
        factor = round(factor, 3)
        load = scaled(args, factor, kinds, duration, args.candidate_drain)
        console.print(
            f"[bold]{label}[/bold] {step + 1}/{steps}: x{factor} = {load.turns_rate} turns/s, "
            f"{load.files_rate} files/s, {load.retrieve_clients} clients for {duration:.0f}s"
        )
        run = brief(await load_once_more(load, scratch / f"{label}-{step}"), factor)
        runs.append(run)
        j = run["judged"]
        said = "HELD" if j["held"] else "not held: " + "; ".join(j["why"])
        load_1m = run["cpu_cores"].get("load_average_1m")
        console.print(f"  → {said} (kept up {j['kept_up']}, load {load_1m})")
        if j["held"]:
            lo = max(lo or 0.0, factor)
        else:
            hi = min(hi or math.inf, factor)
        factor = next_factor(lo, hi, run)
    held = next((r for r in runs if r["factor"] == lo), None)
    return {
        "kinds": list(kinds),
        "duration_s": duration,
        "held_factor": lo,
        "failed_factor": hi,
        "capacity": None
        if held is None
        else {k: held[k] for k in ("turns_per_s", "files_per_s", "retrieval_clients")},
        "runs": runs,
    }


def predicted_factor(roles: dict[str, Any]) -> float:
    """The factor of ``BASE_MIX`` one machine would hold if the worker roles were all
    there is (no API, projections, broker or load generator): a first guess."""
    per = roles["per_machine"]
    need = {
        "chunk": BASE_MIX["files"],
        "embed": BASE_MIX["files"] * float(roles["chunks_per_file"]),
        "memory": BASE_MIX["turns"],
    }
    return 1 / sum(need[r] / float(per[r]["rate"]) for r in need)


async def calibrate(
    args: argparse.Namespace, scratch: Path, kinds: tuple[str, ...], start: float
) -> tuple[float, dict[str, Any] | None]:
    """``--calibrate`` s of ``kinds`` at ``start``: a quarter higher if that held, else
    down to what the worker got through of it. Returns where to start the search."""
    if args.calibrate <= 0:
        return start, None
    label = "+".join(kinds)
    console.print(f"[bold]calibration {label}[/bold]: x{start:.3f} for {args.calibrate:.0f}s")
    load = scaled(args, start, kinds, args.calibrate, 30.0)
    cal = brief(await load_once_more(load, scratch / f"calibration-{label}"), round(start, 3))
    j = cal["judged"]
    share = min(j["kept_up"].values(), default=0.5)
    estimate = start * 1.25 if j["held"] else start * min(0.95, max(0.2, share * 0.95))
    console.print(f"  → held {j['held']}, kept up {j['kept_up']}: start at x{estimate:.3f}")
    return estimate, {"estimate": round(estimate, 3), **cal}
