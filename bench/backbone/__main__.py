"""``make bench``: measure the event backbone and write ``bench-results/backbone.json``.

    python -m bench.backbone                 # full run, about 3-5 minutes on 2 cores
    python -m bench.backbone --quick         # a few hundred messages, for a smoke test
    python -m bench.backbone --brokers tansu --paths aiokafka,faust --no-startup

Apache Kafka is started here (KRaft, jars fetched by :mod:`devstack.kafka`) unless
``TRIBAL_BENCH_KAFKA_BOOTSTRAP`` points at one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from typing import Any

from bench.backbone.brokers import BROKERS
from bench.backbone.measure import Load, Result
from bench.backbone.paths import bare, through_worker
from bench.backbone.report import overheads, print_report
from bench.backbone.startup import startup_runs
from bench.backbone.worker import BATCH_KEY
from bench.report import console, machine, save
from bench.run import Arguments

KB = 1024
PATHS = ("aiokafka", "relay", "faust", "faust-batch")

FAUST_SETTINGS: dict[str, Any] = {
    # Tuned on 2 cores (10k x 1 KB on Tansu: ~0.9k -> ~2k msg/s); the rest is create_app's.
    "producer_linger_ms": 5,  # create_app: 0. Fuller produce batches.
    "stream_buffer_maxsize": 32768,  # Faust: 4096. Fewer pause/resume cycles in a burst.
    "broker_max_poll_records": 2000,  # Faust: unbounded by default in 0.15 (None).
    "broker_commit_interval": 5.0,  # create_app: 1.0. Trades redo-after-crash for speed.
}


class _DropRetriedNotLeader(logging.Filter):
    # A topic created a moment ago has leaders in the metadata before the broker
    # serves them; aiokafka logs the first ListOffsets as an error and retries.
    def filter(self, record: logging.LogRecord) -> bool:
        return "NotLeaderForPartitionError" not in record.getMessage()


def _loads(args: argparse.Namespace) -> dict[int, Load]:
    if args.quick:
        return {
            KB: Load(messages=300, warmup=20, latency_messages=20, latency_interval_s=0.01),
            100 * KB: Load(messages=20, warmup=2, latency_messages=5, latency_interval_s=0.02),
        }
    return {
        KB: Load(
            messages=args.messages_1k, warmup=500, latency_messages=500, latency_interval_s=0.004
        ),
        100 * KB: Load(
            messages=args.messages_100k, warmup=20, latency_messages=100, latency_interval_s=0.02
        ),
    }


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = Arguments("backbone", __doc__, quick="tiny message counts")
    parser.add_argument("--brokers", default="tansu,kafka", help="tansu,kafka")
    parser.add_argument("--paths", default=",".join(PATHS), help=",".join(PATHS))
    parser.add_argument("--sizes", default="1,100", help="value sizes in KB")
    parser.add_argument("--messages-1k", type=int, default=20_000)
    parser.add_argument("--messages-100k", type=int, default=500)
    parser.add_argument(
        "--faust-set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="override a Faust app setting, e.g. producer_linger_ms=5",
    )
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up timing")
    parser.add_argument("--startup-runs", type=int, default=2)
    return parser.parse(argv)


async def _bench(args: argparse.Namespace, faust_settings: dict[str, Any]) -> list[Result]:
    loads = _loads(args)
    sizes = [int(s) * KB for s in args.sizes.split(",")]
    paths = [p for p in args.paths.split(",") if p]
    rows: list[Result] = []
    for name in args.brokers.split(","):
        with BROKERS[name]() as broker:
            console.print(f"[bold]{broker.name} {broker.version}[/] on {broker.bootstrap}")
            for size in sizes:
                load = loads.get(size) or loads[KB]
                for path in paths:
                    began = time.monotonic()
                    if path == "aiokafka":
                        row = await bare(broker, size, load)
                    elif path == "relay":
                        row = await through_worker(broker, size, load, "relay", {})
                    elif path == "faust":
                        row = await through_worker(broker, size, load, "faust", faust_settings)
                    else:
                        batched = {**faust_settings, BATCH_KEY: 500}
                        row = await through_worker(broker, size, load, "faust", batched)
                        row.path = path
                    rows.append(row)
                    console.print(
                        f"  {path:8} {size // KB:>3} KB: {row.msgs_per_s:>9,.0f} msg/s  "
                        f"p50 {row.p50_ms:6.1f} ms  p99 {row.p99_ms:6.1f} ms  "
                        f"({time.monotonic() - began:.0f}s)"
                    )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    logging.getLogger("aiokafka.consumer.fetcher").addFilter(_DropRetriedNotLeader())
    faust_settings = dict(FAUST_SETTINGS)
    for item in args.faust_set:
        key, _, raw = item.partition("=")
        faust_settings[key] = json.loads(raw)
    began = time.monotonic()
    rows = asyncio.run(_bench(args, faust_settings))
    startup = None if args.no_startup else asyncio.run(startup_runs(args.startup_runs))
    doc: dict[str, Any] = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "machine": machine("faust-streaming", "aiokafka", "mode-streaming"),
        "faust_settings": faust_settings,
        "method": {
            "throughput": "burst of `messages` sent as fast as the producer takes them; "
            "seconds = first send to last unique receive",
            "latency": "p50/p99 over `latency_messages` sent paced after the burst; "
            "loaded_* are the same percentiles over the burst itself",
            "counting": "unique (partition, offset) and unique key at the consumer",
            "workers": "relay and faust run as separate processes; the producer and "
            "consumer share the bench process",
        },
        "results": [r.as_dict() for r in rows],
        "faust_overhead": overheads(rows),
        "startup": startup,
        "elapsed_s": round(time.monotonic() - began, 1),
    }
    save(doc, args.out)
    print_report(doc)
    console.print(f"Wrote {args.out} in {doc['elapsed_s']:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
