"""The capacity phases, each merged into ``capacity.json`` as it ends: worker roles, the
mixed search, each kind alone, the overload, and the projection to machines."""

from __future__ import annotations

import argparse
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.load.landed import Ledger
from bench.load.projection import project
from bench.load.report import print_capacity, save_capacity
from bench.load.roles import run_roles
from bench.load.sampling import total_lag
from bench.load.search import BASE_MIX, MIXED, brief, calibrate, predicted_factor, scaled, search
from bench.load.sustained import load_once_more
from bench.load.verdict import LAG_TOLERANCE, trend
from bench.report import console, machine


async def run_mixed(args: argparse.Namespace, scratch: Path, doc: dict[str, Any]) -> None:
    """A short calibration, then the search over the whole mix (the headline figure)."""
    start = args.start_factor
    if start is None and doc.get("roles"):
        start = predicted_factor(doc["roles"])
        console.print(f"  worker roles alone would hold x{start:.3f} of the mix")
    start, doc["calibration"] = await calibrate(args, scratch, MIXED, start or 0.2)
    doc["mixed"] = await search(args, scratch, MIXED, start, args.steps, args.duration)


async def run_per_kind(args: argparse.Namespace, scratch: Path, doc: dict[str, Any]) -> None:
    """Turns alone and file changes alone (a calibration and a shorter search each),
    retrieval alone (one run at ``--retrieve-clients``)."""
    roles = doc.get("roles")
    check = (project(doc) or {}).get("check") or {}
    # Alone, a kind has the machine to itself: start from its worker role's rate,
    # derated as much as the whole mix was against its prediction.
    derate = check.get("measured_over_predicted") or 0.5
    starts = {"turns": 0.2, "files": 0.2}
    if roles:
        per, cpf = roles["per_machine"], roles["chunks_per_file"]
        starts["turns"] = derate * per["memory"]["rate"] / BASE_MIX["turns"]
        files = min(per["chunk"]["rate"], per["embed"]["rate"] / cpf)
        starts["files"] = derate * files / BASE_MIX["files"]
    kinds: dict[str, Any] = doc.setdefault("per_kind", {})
    for kind in ("turns", "files"):
        start, cal = await calibrate(args, scratch, (kind,), starts[kind])
        found = await search(args, scratch, (kind,), start, args.kind_steps, args.kind_duration)
        kinds[kind] = {"calibration": cal, **found}
        save_capacity(args, doc)
    clients = args.retrieve_clients
    console.print(f"[bold]retrieval alone[/bold]: {clients} clients")
    factor = clients / BASE_MIX["retrieval"]
    alone = scaled(args, factor, ("retrieval",), args.retrieval_duration, 10.0)
    kinds["retrieval"] = brief(await load_once_more(alone, scratch / "retrieval"), factor)


async def run_overload(args: argparse.Namespace, scratch: Path, capacity: float) -> dict[str, Any]:
    """``--overload-multiple`` x the held mix for ``--overload-duration`` s, then a drain,
    then every accepted input looked for (:func:`verify_landed`)."""
    factor = round(capacity * args.overload_multiple, 3)
    load = scaled(args, factor, MIXED, args.overload_duration, args.overload_drain)
    console.print(
        f"[bold]overload[/bold]: x{factor} ({args.overload_multiple} times x{capacity}) = "
        f"{load.turns_rate} turns/s, {load.files_rate} files/s, "
        f"{load.retrieve_clients} clients for {args.overload_duration:.0f}s"
    )
    ledger = Ledger()
    result = await load_once_more(load, scratch / "overload", ledger)
    rows = [s for s in result["samples"] if "error" not in s]
    during = [s for s in rows if s["phase"] == "load"]
    after = [s for s in rows if s["phase"] == "drain"]
    at_end = total_lag(during[-1]) if during else 0
    peak_after = max((total_lag(s) for s in after), default=0)
    series = [(s["t_s"], float(total_lag(s))) for s in during]
    growth = trend(series, 0.0, LAG_TOLERANCE) if len(series) >= 3 else {}
    peak_rss = {
        name: max(s["processes"][name]["rss_mb"] for s in rows if name in s["processes"])
        for name in sorted({n for s in rows for n in s["processes"]})
    }
    bounded = (
        result["drained_after_s"] is not None
        and not result["children_died"]
        and peak_after <= at_end * (1 + LAG_TOLERANCE[1]) + LAG_TOLERANCE[0]
    )
    landed = result["landed"] or {}
    return {
        "capacity_factor": capacity,
        "multiple": args.overload_multiple,
        **brief(result, factor),
        "lag": {
            "max_during_load": max((total_lag(s) for s in during), default=0),
            "at_end_of_load": at_end,
            "max_while_draining": peak_after,
            "growth_per_min_during_load": growth.get("slope_per_min"),
            "per_series_growth_per_min": {
                k: t.get("slope_per_min") for k, t in result["verdict"]["lag"].items()
            },
        },
        "peak_rss_mb": peak_rss,
        "bounded_rule": "drained to 0 within the drain timeout, no process died, and after the "
        "load stopped the lag never rose above its value at the end of the load "
        f"(+{LAG_TOLERANCE[1]:.0%} + {LAG_TOLERANCE[0]:.0f} messages)",
        "bounded": bounded,
        "nothing_lost": bool(landed.get("nothing_lost")),
    }


async def capacity_main(args: argparse.Namespace, scratch: Path) -> None:
    path = args.out / "capacity.json"
    doc: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    doc.update(
        benchmark="capacity on one machine, embedded stack",
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        machine=machine(),
        base_mix=BASE_MIX,
    )
    # Phases run at different times, maybe on different code: each keeps its own start.
    phases = doc.setdefault("phases", {})
    if args.capacity:
        if not args.skip_roles:
            console.print("[bold]worker roles[/bold] draining backlogs")
            phases["roles"] = machine()
            doc["roles"] = await run_roles(args, scratch / "roles")
            save_capacity(args, doc)
        phases["mixed"] = machine()
        await run_mixed(args, scratch, doc)
        save_capacity(args, doc)
    if args.per_kind:
        phases["per_kind"] = machine()
        await run_per_kind(args, scratch, doc)
        save_capacity(args, doc)
    if args.overload:
        base = args.overload_base or (doc.get("mixed") or {}).get("held_factor")
        if base is None:
            raise SystemExit("no held capacity to overload: run --capacity or give --overload-base")
        phases["overload"] = machine()
        doc["overload"] = await run_overload(args, scratch, base)
        save_capacity(args, doc)
    doc["projection"] = project(doc)
    doc["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    save_capacity(args, doc)
    print_capacity(doc)
    console.print(f"→ {path}")
