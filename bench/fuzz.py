"""Benchmark: generated inputs across every surface, each one accounted for.

``--n`` inputs (10,000 by default; ``--quick``: 300) from a seeded generator
(:class:`devstack.fuzz.mixes.RandomMix`): HTTP turns (70 % valid across
50 tenants), events, forgets, retrieves and searches, MCP tool calls, schema-registry
calls, and raw records produced straight to each source topic (turns, help-desk articles,
files, table snapshots), hostile in all the ways the fuzz suite knows. They are thrown at
a real pipeline: a worker, the projections and the API as processes of their own, on
Apache Kafka with PostgreSQL + pgvector (``--index weaviate``: Weaviate), the services
coming from the test harness (``TRIBAL_TEST_*`` endpoints if set, else started here).

Reported per surface: sent, accepted, rejected with a 4xx (each must carry an error code
and a message), dead-lettered (with the reasons), landed in a read store, lost (accepted
minus landed minus dead-lettered), plus server errors, stuck stages from ``/healthz``,
dead letters the dead-letter store refused, the time a record written last took to reach
its store, and the elapsed time. Targets: 0 lost, 0 stuck, no 5xx, no hang, every
rejection with a code, all of it within 5 minutes.

    python -m bench.fuzz [--n 10000 | --quick] [--seed 1] [--index pgvector]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.report import console, machine, print_table, save
from bench.run import Arguments, scratch
from devstack import Broker, ServiceHub, WeaviateEndpoint
from devstack.fuzz.ledger import Ledger, settle
from devstack.fuzz.mixes import RandomMix
from devstack.fuzz.stack import Driver, FuzzStack
from streams.deadletter_ops import read_dead_letters

TARGET_S = 300.0
QUICK_N = 300
COLUMNS = ("sent", "accepted", "rejected_4xx", "rejected_without_code", "server_errors",
           "no_answer", "dead_lettered", "landed", "lost", "p95_ms")  # fmt: skip


async def run(args: argparse.Namespace, where: Path) -> dict[str, Any]:
    hub = ServiceHub()
    try:
        kafka = hub.get("kafka").value
        postgres = hub.get("postgres").value
        weaviate = hub.get("weaviate").value if args.index == "weaviate" else None
        assert isinstance(kafka, Broker)
        assert isinstance(postgres, str)
        assert weaviate is None or isinstance(weaviate, WeaviateEndpoint)
        stack = FuzzStack(kafka.bootstrap, postgres, where, weaviate, partitions=args.partitions)
        began = time.monotonic()
        try:
            await stack.start()
            warm = await stack.warm_up()
            started_s = time.monotonic() - began
            result = await throw(stack, args)
        finally:
            await stack.stop()
            if args.logs is not None:  # the children's logs, for a run worth a closer look
                shutil.copytree(where / "logs", args.logs, dirs_exist_ok=True)
        result |= {
            "broker": f"Apache Kafka {kafka.version}",
            "index": stack.adapter,
            "startup_s": round(started_s, 1),
            "warm_up_s": warm,
        }
        return result
    finally:
        hub.close()


async def throw(stack: FuzzStack, args: argparse.Namespace) -> dict[str, Any]:
    mix = RandomMix(args.seed).inputs(args.n)
    ledger = Ledger()
    gate = asyncio.Semaphore(args.concurrency)
    t0 = time.monotonic()
    async with Driver(stack) as driver:
        await driver.prepare(mix)  # the doomed turn of every forget, landed

        async def one(n: int) -> None:
            async with gate:
                await driver.send(mix[n], ledger)

        await asyncio.gather(*(one(n) for n in range(len(mix))))
        sent_s = time.monotonic() - t0
        sentinels = await driver.sentinels()
    try:
        fresh: float | None = await stack.wait_fresh(sentinels, args.fresh_within)
    except TimeoutError:
        fresh = None
    budget = max(30.0, TARGET_S - (time.monotonic() - t0))
    accounting = await settle(
        ledger, stack.probe(), stack.settings, stack.pipeline.serde, budget, interval=3.0
    )
    elapsed = time.monotonic() - t0
    health = await stack.health()
    deadline = time.monotonic() + 60
    while any(p["lag_messages"] for p in health.get("projections", {}).values()):
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(2.0)
        health = await stack.health()
    on_topic = len(await read_dead_letters(stack.settings, stack.pipeline.serde))
    stored = await stack.dead_letters_stored()
    surfaces = ledger.by_surface()
    totals = {c: sum(int(s[c]) for s in surfaces.values()) for c in COLUMNS[:-1]}
    problems = ledger.problems()
    return {
        "n": len(mix),
        "seed": args.seed,
        "concurrency": args.concurrency,
        "send_s": round(sent_s, 1),
        "inputs_per_s": round(len(mix) / sent_s, 1),
        "elapsed_s": round(elapsed, 1),
        "last_record_in_store_s": fresh,
        "settled_after_send_s": accounting.seconds,
        "surfaces": {name: surfaces[name] for name in sorted(surfaces)},
        "totals": totals,
        "lost": len(accounting.lost),
        "lost_examples": [f"{e.surface}: {e.detail}"[:300] for e in accounting.lost[:20]],
        "stuck_stages": health.get("stuck", []),
        "health": health.get("status"),
        "projection_lag": {k: v["lag_messages"] for k, v in health.get("projections", {}).items()},
        "edge_problems": len(problems),
        "edge_problem_examples": problems[:20],
        "dead_letters": {
            "on_topic": on_topic,
            "in_store": stored,
            "refused_by_store": on_topic - stored,
            "unexplained_by_code": dict(accounting.unexplained_letters),
            "reasons": dict(
                sum((Counter(s["dead_letter_reasons"]) for s in surfaces.values()), Counter())
            ),
        },
    }


def verdict(result: dict[str, Any]) -> dict[str, bool]:
    totals = result["totals"]
    return {
        "no_lost": result["lost"] == 0,
        "no_stuck_stage": not result["stuck_stages"] and result["health"] == "ok",
        "no_server_error_or_hang": totals["server_errors"] == 0 and totals["no_answer"] == 0,
        "every_rejection_has_a_code": totals["rejected_without_code"] == 0,
        "every_dead_letter_in_the_store": result["dead_letters"]["refused_by_store"] == 0,
        "within_5_minutes": result["elapsed_s"] <= TARGET_S,
    }


def report(doc: dict[str, Any], out: Path) -> None:
    rows = [
        [name, *(row[c] for c in COLUMNS),
         ", ".join([*list(row["rejection_codes"])[:2], *list(row["dead_letter_reasons"])[:2]])]
        for name, row in doc["surfaces"].items()
    ]  # fmt: skip
    rows.append(["[bold]total", *(doc["totals"][c] for c in COLUMNS[:-1]), "", ""])
    print_table(
        f"Fuzz: {doc['n']:,} inputs on {doc['index']} in {doc['elapsed_s']} s "
        f"(sent in {doc['send_s']} s, {doc['inputs_per_s']}/s)",
        (
            "surface",
            *(c.replace("_", " ") for c in COLUMNS),
            "top reasons (rejections / dead letters)",
        ),
        rows,
    )
    letters = doc["dead_letters"]
    console.print(
        f"lost: {doc['lost']}  stuck stages: {len(doc['stuck_stages'])} (health "
        f"{doc['health']})  edge problems: {doc['edge_problems']}  dead letters: "
        f"{letters['on_topic']} on the topic, {letters['in_store']} in the store  "
        f"last record in its store after: {doc['last_record_in_store_s']} s"
    )
    for problem in doc["edge_problem_examples"][:5]:
        console.print(f"  [yellow]{problem[:150]}")
    met = doc["targets"]
    console.print(
        "targets: " + "  ".join(f"{k} {'met' if v else 'NOT MET'}" for k, v in met.items())
    )
    console.print(f"→ {out}")


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("fuzz", __doc__, n=(10_000, QUICK_N))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--index", choices=["pgvector", "weaviate"], default="pgvector")
    parser.add_argument("--fresh-within", type=float, default=TARGET_S)
    parser.add_argument("--logs", type=Path, help="copy the worker/projections/API logs here")
    args = parser.parse(argv)
    with scratch("fuzz") as where:
        result = asyncio.run(run(args, where))
    doc = {
        "benchmark": "fuzz: generated inputs on every surface, each accounted for",
        "machine": machine(),
        **result,
    }
    doc["targets"] = verdict(doc)
    doc["target_met"] = all(doc["targets"].values())
    report(doc, save(doc, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
