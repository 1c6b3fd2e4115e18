"""1 vs 2 workers: a fixed backlog of file changes, then of turns, drained by one and
then two ``tribal worker`` processes sharing a consumer group on Tansu."""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition

from bench.load.workers import backlog
from bench.load.workload import file_change, wait_for
from bench.report import console
from runtime.embedded.tansu import TansuBroker
from runtime.topics import topic


@dataclass
class TopicCounter:
    """Unique items seen on one topic, read from the beginning in the background."""

    bootstrap: str
    name: str
    partitions: int
    item: Callable[[bytes | None, bytes], tuple[str, int] | None]
    """(unique id, weight) of a record, e.g. (document id, number of chunks)."""
    seen: dict[str, int] = field(default_factory=dict)

    async def run(self, stop: asyncio.Event) -> None:
        consumer = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False)
        await consumer.start()
        try:
            tps = [TopicPartition(self.name, p) for p in range(self.partitions)]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            while not stop.is_set():
                batch = await consumer.getmany(timeout_ms=200, max_records=5000)
                for msgs in batch.values():
                    for m in msgs:
                        found = self.item(m.key, m.value)
                        if found is not None:
                            self.seen[found[0]] = found[1]
        finally:
            await consumer.stop()


async def drain(
    run: int, workers: int, bootstrap: str, where: Path, files: int, turns: int, partitions: int
) -> dict[str, Any]:
    out: dict[str, Any] = {"workers": workers, "partitions": partitions}
    stop = asyncio.Event()
    counting: list[asyncio.Task[None]] = []
    try:
        async with backlog(
            f"s{run}w{workers}", bootstrap, where, workers=workers, partitions=partitions
        ) as work:
            serde = work.sink.serde

            def episode(key: bytes | None, value: bytes) -> tuple[str, int] | None:
                found = str(getattr(serde.decode(value), "source_event_id", ""))
                return (found, 1) if found else None

            def document(key: bytes | None, value: bytes) -> tuple[str, int] | None:
                return (key or b"").decode(), len(getattr(serde.decode(value), "vectors", ()))

            settings = work.settings
            embedded = TopicCounter(bootstrap, topic("embeddings", settings), partitions, document)
            episodes = TopicCounter(
                bootstrap, topic("memory.episodes", settings), partitions, episode
            )
            counting = [asyncio.create_task(c.run(stop)) for c in (embedded, episodes)]
            # Warm-up on every partition until every worker has processed something:
            # both have loaded the model and own partitions before the clock starts.
            warm_files = [file_change(50_000 + n, paths=10**6) for n in range(4 * partitions)]
            for change in warm_files:
                await work.sink.emit("files.changes", change.key, change)
            await work.turns(range(4 * partitions), 4 * partitions, name="warm")
            await work.sink.flush()

            async def warmed() -> bool:
                work.check()
                return (
                    len(embedded.seen) >= len(warm_files)
                    and len(episodes.seen) >= 4 * partitions
                    and all(p.get("file_chunker", 0) > 0 for p in await work.processed())
                )

            out["warmup_s"] = round(await wait_for(warmed, 300, "workers warmed up"), 1)
            await work.settle()
            before = await work.processed()

            # Files: FileChanged → file_chunker → chunks → embedder → embeddings.
            base = len(embedded.seen)
            chunks0 = sum(embedded.seen.values())
            t0 = time.monotonic()
            for n in range(files):
                change = file_change(100_000 + n, paths=10**6)
                await work.sink.emit("files.changes", change.key, change)
            await work.sink.flush()
            await wait_for(lambda: _count(embedded, base + files), 600, "file backlog drained")
            files_s = time.monotonic() - t0
            chunks = sum(embedded.seen.values()) - chunks0
            mid = await work.processed()

            # Turns: TurnRecorded → episoder (embedding) → memory.episodes.
            base = len(episodes.seen)
            t0 = time.monotonic()
            await work.turns(range(turns))
            await wait_for(lambda: _count(episodes, base + turns), 600, "turn backlog drained")
            turns_s = time.monotonic() - t0
            after = await work.processed()
    finally:
        stop.set()
        await asyncio.gather(*counting, return_exceptions=True)

    def delta(a: list[dict[str, float]], b: list[dict[str, float]], agent: str) -> list[int]:
        return [int(y.get(agent, 0) - x.get(agent, 0)) for x, y in zip(a, b, strict=True)]

    out["files"] = {
        "backlog": files,
        "seconds": round(files_s, 2),
        "files_per_s": round(files / files_s, 1),
        "files_per_s_per_worker": round(files / files_s / workers, 1),
        "chunks_embedded": chunks,
        "chunks_per_s": round(chunks / files_s, 1),
        "chunker_events_per_worker": delta(before, mid, "file_chunker"),
        "embedder_events_per_worker": delta(before, mid, "embedder"),
    }
    out["turns"] = {
        "backlog": turns,
        "seconds": round(turns_s, 2),
        "episodes_per_s": round(turns / turns_s, 1),
        "episodes_per_s_per_worker": round(turns / turns_s / workers, 1),
        "episoder_events_per_worker": delta(mid, after, "episoder"),
    }
    out["load_average_1m"] = round(os.getloadavg()[0], 2)
    return out


async def _count(counter: TopicCounter, wanted: int) -> bool:
    return len(counter.seen) >= wanted


async def run_scaling(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    broker = TansuBroker(log_path=scratch / "tansu.log").start()
    try:
        runs = []
        for run, workers in enumerate(args.scale_workers):
            console.print(f"  draining {args.scale_files} files + {args.scale_turns} turns "
                          f"with {workers} worker(s)…")  # fmt: skip
            runs.append(
                await drain(run, workers, broker.bootstrap, scratch, args.scale_files,
                            args.scale_turns, args.scale_partitions)
            )  # fmt: skip
    finally:
        broker.stop()

    def mean_rate(workers: int, stage: str, key: str) -> float:
        rates = [r[stage][key] for r in runs if r["workers"] == workers]
        return sum(rates) / len(rates) if rates else float("nan")

    return {
        "method": "a fixed backlog produced at once after warm-up (model loaded, every worker "
        "assigned partitions), timed from the first send until every item came out of the "
        "stage; files and turns one after the other; Tansu on loopback, no PostgreSQL",
        "runs": runs,
        "speedup_2_over_1": {
            "files": round(
                mean_rate(2, "files", "files_per_s") / mean_rate(1, "files", "files_per_s"), 2
            ),
            "turns": round(
                mean_rate(2, "turns", "episodes_per_s") / mean_rate(1, "turns", "episodes_per_s"), 2
            ),
        },
    }
