"""Machines like this one for the whole mix, from the parts measured."""

from __future__ import annotations

import math
import os
from typing import Any

from bench.load.search import BASE_MIX


def project(doc: dict[str, Any]) -> dict[str, Any] | None:
    """Machines like this one for ``BASE_MIX`` at 1x: each worker role from its measured
    rate per machine; the API (scaled by retrieval clients) and the store (projections,
    PostgreSQL, the broker; scaled by the factor) from the cores they used in the highest
    held mixed run above what they used idle. The worker roles' rates are drain rates, at
    100 % CPU."""
    roles = doc.get("roles")
    if not roles:
        return None
    cpus = os.cpu_count() or 1
    per = roles["per_machine"]
    cpf = roles["chunks_per_file"]
    need = {
        "chunk": (BASE_MIX["files"], f"{BASE_MIX['files']:.0f} files/s"),
        "embed": (
            BASE_MIX["files"] * cpf,
            f"{BASE_MIX['files']:.0f} files/s x {cpf} chunks per file",
        ),
        "memory": (BASE_MIX["turns"], f"{BASE_MIX['turns']:.0f} turns/s"),
    }
    rows: dict[str, dict[str, Any]] = {}
    for role, (demand, why) in need.items():
        rate, unit = per[role]["rate"], per[role]["unit"]
        machines = demand / rate
        rows[role] = {
            "demand": round(demand, 1),
            "unit": unit,
            "per_machine": rate,
            "workers_per_machine": per[role]["workers"],
            "machines": round(machines, 2),
            "arithmetic": f"{why} = {demand:.0f} {unit} / {rate} {unit} per machine "
            f"= {machines:.2f}",
        }
    rows["document"] = {"demand": 0, "machines": 0.0, "arithmetic": "no schema changes in it"}
    held = next(
        (r for r in (doc.get("mixed") or {}).get("runs", [])
         if r["factor"] == doc["mixed"]["held_factor"]),
        None,
    )  # fmt: skip
    if held is not None:
        cores, idle = held["cpu_cores"]["processes"], held["cpu_cores"].get("idle_processes", {})
        scale = {
            "api": (BASE_MIX["retrieval"] / held["retrieval_clients"], ("api",)),
            "store": (1 / held["factor"], ("projections", "postgres", "tansu")),
        }
        for name, (times, procs) in scale.items():
            used = sum(cores.get(p, 0.0) for p in procs)
            base = min(used, sum(idle.get(p, 0.0) for p in procs))
            demand = base + (used - base) * times
            machines = demand / cpus
            rows[name] = {
                "processes": list(procs),
                "cores_under_load": round(used, 2),
                "cores_idle": round(base, 2),
                "scale": round(times, 2),
                "demand": round(demand, 2),
                "unit": "cores",
                "per_machine": cpus,
                "machines": round(machines, 2),
                "arithmetic": f"{base:.2f} idle + ({used:.2f} - {base:.2f}) cores at "
                f"x{held['factor']} x {times:.2f} = {demand:.2f} cores / {cpus} cores per "
                f"machine = {machines:.2f}",
            }
        retrieved = held["streams"]["retrieve_http"]["achieved_per_s"]
        rows["api"]["retrievals_per_s"] = round(retrieved * scale["api"][0])
        rows["api"]["assumes"] = (
            f"each of 50 closed-loop clients gets what each of {held['retrieval_clients']} got "
            f"at x{held['factor']}: {retrieved} x {scale['api'][0]:.2f} = "
            f"{rows['api']['retrievals_per_s']} retrievals/s"
        )
    fractional = sum(r["machines"] for r in rows.values())
    out: dict[str, Any] = {
        "load": {
            "turns_per_s": BASE_MIX["turns"],
            "files_per_s": BASE_MIX["files"],
            "retrieval_clients": BASE_MIX["retrieval"],
        },
        "method": project.__doc__ and " ".join(project.__doc__.split()),
        "roles": rows,
        "machines_fractional": round(fractional, 2),
        "arithmetic": " + ".join(f"{r['machines']:.2f}" for r in rows.values())
        + f" = {fractional:.2f}",
        "machines_each_role_its_own": sum(math.ceil(r["machines"]) for r in rows.values()),
        "machines_packed": math.ceil(fractional),
    }
    if held is not None:
        # One machine ran everything at the held factor; the parts above say it would
        # hold 1/fractional. The gap is what sharing cores (and the load generator) costs.
        alone = 1 / fractional
        out["check"] = {
            "one_machine_predicted_factor": round(alone, 3),
            "one_machine_measured_factor": held["factor"],
            "measured_over_predicted": round(held["factor"] / alone, 2),
            "machines_at_measured_efficiency": math.ceil(fractional * alone / held["factor"]),
            "load_generator_cores": held["cpu_cores"]["processes"].get("bench"),
        }
    return out
