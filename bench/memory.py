"""Benchmark conversation memory (issue 8).

* episode latency: turn produced → episode searchable (Kafka → ``tribal worker`` →
  index projection on pgvector), p50/p95; target p95 < 500 ms;
* episodes/s through one worker with the local provider; target >= 100/s;
* dedup latency at 10k entities in one group, p50/p95; target p95 < 20 ms;
* memory per 1,000 episodes of extractor + summarizer state, vectors excluded;
  target < 100 MB;
* extraction per turn on the labelled conversations (local provider), p50/p95;
  target p95 < 100 ms.

    python -m bench.memory [--turns 300] [--burst 2000] [--quick]

The broker is Tansu (or ``TRIBAL_BENCH_KAFKA_BOOTSTRAP``); PostgreSQL is embedded (or
``TRIBAL_POSTGRES_DSN``). Results: ``bench-results/memory.json`` and a table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import numpy as np
from aiokafka import AIOKafkaProducer

from bench.report import machine, print_table, save
from bench.run import Arguments, scratch
from bench.stack import KAFKA_ENV, kafka_bootstrap, postgres_dsn
from bench.stats import summary
from devstack.pipeline import REPO, TRIBAL, settings_env
from events.facts import Entity
from events.memory import EpisodeRecorded, TurnRecorded, episode_id_for
from events.registry import registry_from_settings
from events.serde import EventSerde
from projections.base import Applied
from projections.index.pgvector import PgVectorIndex
from projections.index.projection import IndexProjection
from projections.runner import ProjectionRunner
from runtime.embedded.process import ChildProcess
from runtime.settings import TribalSettings
from runtime.topics import ensure_topics, topic
from streams.memory.dedup import EntityDeduplicator
from streams.memory.episoder import episode_of

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TARGETS = {"episode_p95_ms": 500.0, "episodes_per_s": 100.0, "dedup_p95_ms": 20.0,
           "mb_per_1000_episodes": 100.0, "extraction_p95_ms": 100.0}  # fmt: skip
SAMPLE = [
    ("My order #A-{n} was for the Apollo Router.", "I can see order #A-{n} in our system."),
    ("I live at {n} Oak Street.", "Thanks, the address is on file."),
    ("The light keeps blinking red.", "Please unplug it for ten seconds."),
    ("Hi, my name is Robert Smith.", "Hello Robert, I'm Dana from support."),
]


async def extraction_latency(limit: int | None) -> dict[str, Any]:
    """Extraction per turn on the local provider (spaCy's English pipeline and the
    statement rules, deduplication, the temporal fold): every labelled conversation of
    ``tests/eval/memory`` through the extractor lane, one turn at a time."""
    from bench.eval.memory import fold, load
    from streams.memory.english import nlp_available

    nlp_available()  # the pipeline loads once, before the clock starts
    conversations = [c for split in ("train", "test") for c in load(split)][:limit]
    times = [ms for c in conversations for ms in (await fold(c)).per_turn_ms]
    return {"turns": len(times), **summary(times, unit="ms", digits=2)}


def turn(group: str, n: int) -> TurnRecorded:
    user, agent = SAMPLE[n % len(SAMPLE)]
    return TurnRecorded(group_id=group, user_message=user.format(n=1000 + n),
                        agent_response=agent.format(n=1000 + n),
                        metadata={"user_name": "Robert Smith"})  # fmt: skip


async def end_to_end(settings: TribalSettings, dsn: str, turns: int, burst: int) -> dict[str, Any]:
    """Latency (paced turns) and throughput (a burst) through a real worker."""
    serde = EventSerde(registry_from_settings(settings))
    projection = IndexProjection(PgVectorIndex(dsn, schema="bench_memory", model=MODEL))
    await projection.setup()
    seen: dict[UUID, float] = {}
    apply = projection.apply

    async def timed(batch: Sequence[Applied]) -> int:
        done = await apply(batch)
        now = time.perf_counter()
        for a in batch:
            if isinstance(a.event, EpisodeRecorded):
                seen.setdefault(a.event.episode_id, now)
        return done

    projection.apply = timed  # type: ignore[method-assign]
    runner = ProjectionRunner(projection, settings, serde, batch_size=500)
    await runner.start()
    stop = asyncio.Event()
    running = asyncio.create_task(runner.run(stop))
    worker = start_worker(settings)
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, linger_ms=0)
    await producer.start()
    name = topic("memory.turns", settings)
    rss: dict[str, int] = {}

    async def send(t: TurnRecorded, wait: bool) -> None:
        value = serde.encode(t, name)
        if wait:
            await producer.send_and_wait(name, value, key=t.group_id.encode())
        else:
            await producer.send(name, value, key=t.group_id.encode())

    async def until(ids: set[UUID], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ids <= seen.keys():
            if time.monotonic() > deadline or not worker.alive():
                raise RuntimeError(f"{len(ids - seen.keys())} episodes missing; see worker.log")
            await asyncio.sleep(0.01)

    try:
        warm = [turn(f"warm:g{i}", i) for i in range(20)]
        for t in warm:
            await send(t, True)
        await until({episode_id_for(t.event_id) for t in warm}, 180)
        rss["before"] = _rss(worker)
        sent: dict[UUID, float] = {}
        for i in range(turns):
            t = turn(f"acme:lat{i % 10}", i)
            await send(t, True)
            sent[episode_id_for(t.event_id)] = time.perf_counter()
            await asyncio.sleep(0.05)
        await until(set(sent), 60)
        lat = [(seen[e] - s) * 1000 for e, s in sent.items()]
        blast = [turn(f"acme:burst{i % 50}", i) for i in range(burst)]
        t0 = time.perf_counter()
        for t in blast:
            await send(t, False)
        await producer.flush()
        await until({episode_id_for(t.event_id) for t in blast}, 600)
        elapsed = max(seen[episode_id_for(t.event_id)] for t in blast) - t0
        rss["after"] = _rss(worker)
    finally:
        await producer.stop()
        worker.stop(30)
        stop.set()
        await running
        await runner.stop()
        await projection.close()
    return {
        "episode_latency": {"turns": turns, **summary(lat, unit="ms", digits=2)},
        "throughput": {"episodes": burst, "seconds": round(elapsed, 2),
                       "episodes_per_s": round(burst / elapsed, 1)},
        "worker_rss_mb": {k: round(v / 2**20, 1) for k, v in rss.items()},
    }  # fmt: skip


def start_worker(settings: TribalSettings) -> ChildProcess:
    """``tribal worker`` as a child process, logging to ``data_dir/worker.log``."""
    env = {**settings_env(settings), "TRIBAL_LLM_PROVIDER": "local", "TRIBAL_LOG_LEVEL": "WARNING"}
    worker = ChildProcess(
        "worker", [*TRIBAL, "worker"], env=env, log_path=settings.data_dir / "worker.log", cwd=REPO
    )
    worker.start()
    return worker


def _rss(process: ChildProcess) -> int:
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def dedup_latency(entities: int, queries: int, dims: int = 384) -> dict[str, Any]:
    """``match`` against ``entities`` people (random names, random unit vectors)."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(rng.randint(4, 9))).capitalize()

    def vector() -> list[float]:
        v = np.random.default_rng(rng.randint(0, 2**31)).standard_normal(dims)
        return list(v / np.linalg.norm(v))

    from datetime import UTC, datetime

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    d = EntityDeduplicator()
    names = [f"{word()} {word()}" for _ in range(entities)]
    for n in names:
        d.add("acme:big", Entity(entity_id=uuid4(), name=n, entity_type="person",
                                 valid_from=t0), vector())  # fmt: skip
    times: list[float] = []
    hits = 0
    for i in range(queries):
        name = names[rng.randrange(entities)] if i % 2 else f"{word()} {word()}"
        if i % 4 == 1:
            name = name[:-1] + "x"  # a typo: fuzzy stage
        probe = Entity(entity_id=uuid4(), name=name, entity_type="person", valid_from=t0)
        v = vector()
        start = time.perf_counter()
        hits += d.match(probe, "acme:big", v) is not None
        times.append((time.perf_counter() - start) * 1000)
    return {"entities": entities, "queries": queries, "matches": hits,
            **summary(times, unit="ms", digits=2)}  # fmt: skip


async def state_memory(episodes: int) -> dict[str, Any]:
    """Bytes held by extractor + summarizer state per 1,000 episodes (no vectors)."""
    from devstack.memory import config, conversation, memory

    cfg = config()
    cfg = cfg.model_copy(update={"deduplication": cfg.deduplication.model_copy(
        update={"embedding_match_enabled": False})})  # fmt: skip
    m = memory(cfg)
    groups = max(1, episodes // 200)
    batches = [
        [episode_of(t, None, None, "excluded") for t in conversation(f"acme:s{g}")]
        for g in range(groups)
    ]
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for batch in batches:
        await m.extractor.process(batch)
        await m.summarizer.process(batch)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    n = groups * 200
    return {"episodes": n, "groups": groups, "state_mb": round(held / 2**20, 2),
            "mb_per_1000_episodes": round(held / 2**20 / (n / 1000), 2)}  # fmt: skip


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {
        "extraction": await extraction_latency(4 if args.quick else None),
        "dedup": dedup_latency(10_000, 200 if args.quick else 2000),
        "memory": await state_memory(1000 if args.quick else 10_000),
    }
    with (
        scratch("memory") as where,
        kafka_bootstrap(where) as bootstrap,
        postgres_dsn(where) as dsn,
    ):
        tag = uuid4().hex[:6]
        settings = TribalSettings(kafka_bootstrap=bootstrap, data_dir=where,
                                  topic_prefix=f"bm{tag}.", consumer_group=f"bm{tag}")  # fmt: skip
        await ensure_topics(settings)
        results.update(await end_to_end(settings, dsn, args.turns, args.burst))
    return results


def main(argv: list[str] | None = None) -> int:
    args = Arguments("memory", __doc__, turns=(300, 60), burst=(2000, 300)).parse(argv)
    results = asyncio.run(measure(args))
    measured = {
        "episode_p95_ms": results["episode_latency"]["p95_ms"],
        "episodes_per_s": results["throughput"]["episodes_per_s"],
        "dedup_p95_ms": results["dedup"]["p95_ms"],
        "mb_per_1000_episodes": results["memory"]["mb_per_1000_episodes"],
        "extraction_p95_ms": results["extraction"]["p95_ms"],
    }
    met = {k: (v >= TARGETS[k]) if k == "episodes_per_s" else (v < TARGETS[k])
           for k, v in measured.items()}  # fmt: skip
    broker_name = "external" if os.environ.get(KAFKA_ENV) else "tansu"
    doc = {
        "benchmark": "memory", "broker": broker_name, "machine": machine(), "targets": TARGETS,
        "measured": measured, "target_met": met, "results": results,
    }  # fmt: skip
    save(doc, args.out)
    print_table(
        f"memory ({doc['broker']}, {os.cpu_count()} CPUs)",
        ("measure", "value", "target", "met"),
        [
            [
                k,
                v,
                f"{'>=' if k == 'episodes_per_s' else '<'} {TARGETS[k]}",
                "yes" if met[k] else "NO",
            ]
            for k, v in measured.items()
        ],
    )
    print(json.dumps({k: results[k] for k in ("episode_latency", "dedup")}))
    print(f"→ {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
