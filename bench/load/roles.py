"""Each worker role alone (``tribal worker --role chunk|embed|memory``, 1 and 2
processes) draining a backlog of its own inputs: its rate per machine."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient

from bench.load.sampling import group_lag
from bench.load.workers import backlog
from bench.load.workload import file_change, wait_for
from bench.report import console
from runtime.embedded.tansu import TansuBroker
from runtime.observability.progress import ROLES, role_group
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker

ROLE_AGENT = {"chunk": "file_chunker", "embed": "embedder", "memory": "episoder"}
"""The agent of each measured role whose metric shows that a worker has started."""


async def role_drain(
    run: int, role: str, workers: int, bootstrap: str, where: Path, items: int, partitions: int
) -> dict[str, Any]:
    """How fast ``workers`` ``tribal worker --role role`` processes drain a backlog of
    ``items`` inputs of their own (file changes, chunked files, turns), from the first
    send until their group has committed every record of the role's topics."""
    chunker = FileChunker(default_registry())

    async def inputs(first: int, n: int) -> list[tuple[str, str, Any]]:
        """(topic, key, event) to send; files are chunked here for the embed role."""
        changes = [file_change(first + k, paths=10**6) for k in range(n)]
        if role == "chunk":
            return [("files.changes", c.key, c) for c in changes]
        if role == "embed":
            emits = [await chunker.chunked(c) for c in changes]
            return [(e.topic, e.key, e.event) for e in emits]
        return [("memory.turns", "", first + k) for k in range(n)]

    out: dict[str, Any] = {"role": role, "workers": workers, "partitions": partitions}
    # The live lane at full batches: a machine at capacity is never 32 records behind.
    async with backlog(
        f"r{run}{role[:2]}{workers}", bootstrap, where, workers=workers, partitions=partitions,
        role=role, env={"TRIBAL_BULK_BACKLOG": "0"},
    ) as work:  # fmt: skip

        async def lag() -> int:
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
            consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
            await admin.start()
            await consumer.start()
            try:
                group, topics = role_group(work.settings, role), ROLES[role]
                behind, _ = await group_lag(admin, consumer, work.settings, group, topics)
            finally:
                await consumer.stop()
                await admin.close()
            return sum(behind.values())

        async def send_all(items: list[tuple[str, str, Any]]) -> None:
            for name, key, event in items:
                if name != "memory.turns":
                    await work.sink.emit(name, key, event)
            await work.turns(event for name, _, event in items if name == "memory.turns")
            await work.sink.flush()

        # Warm-up on every partition until every worker has processed something.
        await send_all(await inputs(500_000, 4 * partitions))

        async def warmed() -> bool:
            work.check()
            processed = await work.processed()
            return await lag() == 0 and all(p.get(ROLE_AGENT[role], 0) > 0 for p in processed)

        out["warmup_s"] = round(await wait_for(warmed, 300, f"{role} workers warmed up"), 1)
        await work.settle()
        backlog_items = await inputs(0, items)
        t0 = time.monotonic()
        await send_all(backlog_items)
        sent_s = time.monotonic() - t0
        while await lag() > 0:
            if time.monotonic() - t0 > 900:
                raise TimeoutError(f"{role}: backlog not drained within 900 s")
            work.check()
            await asyncio.sleep(0.25)
        seconds = time.monotonic() - t0
    out.update(
        {
            "items": items,
            "sent_in_s": round(sent_s, 2),
            "seconds": round(seconds, 2),
            "per_s": round(items / seconds, 1),
            "load_average_1m": round(os.getloadavg()[0], 2),
        }
    )
    if role == "embed":
        chunks = sum(len(e.chunks) for _, _, e in backlog_items)
        out.update(chunks=chunks, chunks_per_s=round(chunks / seconds, 1))
    return out


ROLE_UNIT = {"chunk": "files/s", "embed": "chunks/s", "memory": "turns/s"}


async def run_roles(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """Each of the roles the load needs, 1 then 2 workers (``--role-workers``), on Tansu."""
    items = {"chunk": args.role_files, "embed": args.role_chunked, "memory": args.role_turns}
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    runs: list[dict[str, Any]] = []
    try:
        for role in ("chunk", "embed", "memory"):
            for workers in args.role_workers:
                console.print(f"  {role}: {items[role]} inputs, {workers} worker(s)…")
                run = await role_drain(len(runs), role, workers, broker.bootstrap, scratch,
                                       items[role], args.scale_partitions)  # fmt: skip
                runs.append(run)
                rate = run.get("chunks_per_s", run["per_s"])
                console.print(f"    {rate} {ROLE_UNIT[role]} (load {run['load_average_1m']})")
    finally:
        broker.stop()
    per_machine: dict[str, dict[str, Any]] = {}
    for role in ("chunk", "embed", "memory"):
        mine = [r for r in runs if r["role"] == role]
        best = max(mine, key=lambda r: r.get("chunks_per_s", r["per_s"]))
        per_machine[role] = {
            "rate": best.get("chunks_per_s", best["per_s"]),
            "unit": ROLE_UNIT[role],
            "workers": best["workers"],
        }
    embed = [r for r in runs if r["role"] == "embed"]
    return {
        "method": "one role's backlog produced at once after warm-up (model loaded, every "
        "worker assigned partitions), timed from the first send until the role's consumer "
        "group has committed every record of its topics; `tribal worker --role <role>` "
        "processes only, on Tansu on loopback, no PostgreSQL; the embed role with the bulk "
        "lane off (TRIBAL_BULK_BACKLOG=0), as a machine at capacity is never 32 behind; "
        "per machine: the better of the worker counts tried",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "runs": runs,
        "per_machine": per_machine,
        "chunks_per_file": round(embed[0]["chunks"] / embed[0]["items"], 2),
    }
