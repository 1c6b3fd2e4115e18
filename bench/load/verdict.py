"""Whether a load was held: series that did not grow after the first minute, and the
cores each process used."""

from __future__ import annotations

import os
from typing import Any

LAG_TOLERANCE = (100.0, 0.20)  # messages, fraction: lag may wobble this much
RSS_TOLERANCE = (30.0, 0.10)  # MB, fraction


def trend(
    points: list[tuple[float, float]], warmup: float, tol: tuple[float, float]
) -> dict[str, Any]:
    """Did a series grow after ``warmup`` seconds? Least-squares slope and last vs base."""
    post = [(t, v) for t, v in points if t >= warmup]
    if len(post) < 3:
        return {"verdict": "too few samples", "samples_after_warmup": len(post)}
    base = post[0][1]
    last = sum(v for _, v in post[-3:]) / 3
    mt = sum(t for t, _ in post) / len(post)
    mv = sum(v for _, v in post) / len(post)
    var = sum((t - mt) ** 2 for t, _ in post)
    slope = sum((t - mt) * (v - mv) for t, v in post) / var if var else 0.0
    absolute, relative = tol
    allowed = base * (1 + relative) + absolute
    grew = last > allowed and slope * (post[-1][0] - post[0][0]) > absolute
    return {
        "at_end_of_warmup": round(base, 1),
        "first_minute_max": round(max((v for t, v in points if t < warmup), default=base), 1),
        "last": round(last, 1),
        "allowed": round(allowed, 1),
        "slope_per_min": round(slope * 60, 2),
        "grew": grew,
    }


def verdict(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    rows = [s for s in samples if s["phase"] == "load" and "error" not in s]
    lag_series: dict[str, list[tuple[float, float]]] = {}
    for s in rows:
        for name, n in s["projection_lag"].items():
            lag_series.setdefault(f"projection:{name}", []).append((s["t_s"], float(n)))
        for name, n in s["group_lag"].items():
            lag_series.setdefault(f"worker:{name}", []).append((s["t_s"], float(n)))
    rss_series: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        if s["phase"] != "load":
            continue
        for name, p in s["processes"].items():
            rss_series.setdefault(name, []).append((s["t_s"], p["rss_mb"]))
    lag = {k: trend(v, warmup, LAG_TOLERANCE) for k, v in lag_series.items()}
    rss = {k: trend(v, warmup, RSS_TOLERANCE) for k, v in rss_series.items()}
    grown = [f"lag {k}" for k, v in lag.items() if v.get("grew")] + [
        f"rss {k}" for k, v in rss.items() if v.get("grew")
    ]
    return {
        "warmup_s": warmup,
        "rule": f"after {warmup:.0f}s, a series grew if the mean of its last 3 samples exceeds "
        f"base*(1+rel)+abs (lag: rel {LAG_TOLERANCE[1]}, abs {LAG_TOLERANCE[0]:.0f} messages; "
        f"RSS: rel {RSS_TOLERANCE[1]}, abs {RSS_TOLERANCE[0]:.0f} MB) and its least-squares "
        "slope adds more than abs over the window",
        "lag": lag,
        "rss_mb": rss,
        "grew": grown,
        "no_growth_after_first_minute": not grown,
    }


def cpu_cores(samples: list[dict[str, Any]], warmup: float) -> dict[str, Any]:
    """Mean cores each process used under load after ``warmup`` s, and the machine's."""
    rows = [s for s in samples if s["phase"] == "load" and s["t_s"] >= warmup]
    if not rows:
        return {}
    names = sorted({n for s in rows for n in s["processes"]})
    mean = {
        n: round(sum(s["processes"].get(n, {}).get("cpu_percent", 0.0) for s in rows)
                 / len(rows) / 100, 2)
        for n in names
    }  # fmt: skip
    machine = sum(s.get("machine_cpu_percent", 0.0) for s in rows) / len(rows)
    cores = machine / 100 * (os.cpu_count() or 1)
    idle = [s for s in samples if s["phase"] == "idle"][-1:]
    return {
        "processes": mean,
        "idle_processes": {
            n: round(p["cpu_percent"] / 100, 2) for s in idle for n, p in s["processes"].items()
        },
        "machine": round(cores, 2),
        "others": round(max(0.0, cores - sum(mean.values())), 2),
        "load_average_1m": {
            "min": min(s["load_average_1m"] for s in rows),
            "mean": round(sum(s["load_average_1m"] for s in rows) / len(rows), 2),
            "max": max(s["load_average_1m"] for s in rows),
        },
    }
