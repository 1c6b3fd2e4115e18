"""``make bench-load``: sustained load, 1 vs 2 workers, capacity (see :mod:`bench.load`)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.load import __doc__ as load_doc
from bench.load.phases import capacity_main
from bench.load.plot import write_lag_plot
from bench.load.report import print_load, print_scaling
from bench.load.scaling import run_scaling
from bench.load.sustained import run_load
from bench.report import console, machine, save
from bench.run import RESULTS, scratch
from devstack.pipeline import REPO
from runtime.observability.logs import configure_logging


def _counts(value: str) -> list[int]:
    return [int(x) for x in value.split(",")]


OPTIONS = """
duration            300.0  seconds of load
turns-rate          100.0  turns/s over HTTP (open loop)
files-rate          50.0   file changes/s through Kafka (open loop)
retrieve-clients    50     closed-loop retrieval clients
groups              20     conversations the turns go to
sample-every        5.0    seconds between samples
warmup-timeout      300.0  seconds for the warm-up to be caught up
drain-timeout       120.0  seconds for the backlog to drain after the load
scale-files         400    file backlog of the 1 vs 2 workers run
scale-turns         2000   turn backlog of the 1 vs 2 workers run
scale-workers       1,2,1  worker counts to run in order (1 again at the end: the machine is shared)
scale-partitions    6      partitions of the backlogs' topics
"""
"""Options of the load and of the 1 vs 2 workers run: name, default (its type the
option's: an integer, a decimal or a list of counts) and help."""
CAPACITY_OPTIONS = """
start-factor        -      first factor (else from the roles)
calibrate           60.0   seconds; 0: none
steps               4      runs of the mixed search
candidate-drain     60.0   seconds each candidate may drain
kind-steps          2      runs of each kind's search
kind-duration       -      seconds of each kind's runs (default: --duration)
retrieval-duration  60.0   seconds of retrieval alone
overload-base       -      factor (else capacity.json's held)
overload-multiple   2.0    times the held factor
overload-duration   120.0  seconds of overload
overload-drain      900.0  seconds it may drain
role-files          5000   backlog of the chunk role
role-chunked        600    backlog of the embed role (chunked files)
role-turns          3000   backlog of the memory role
role-workers        1,2    worker counts of each role
"""
"""Options of the capacity phases (``bench-results/capacity.json``); ``-``: no default."""
FLAGS = {
    "quick": "30 s of load, a small backlog",
    "skip-load": "no sustained load",
    "skip-scaling": "no 1 vs 2 workers run",
}
CAPACITY_FLAGS = {
    "capacity": "role rates, then the search",
    "overload": "2x the held mix, then drain",
    "skip-roles": "keep capacity.json's roles",
    "per-kind": "turns, files, retrieval alone",
}


def _add(group: argparse._ActionsContainer, table: str, flags: dict[str, str]) -> None:
    for line in table.strip().splitlines():
        name, default, help = line.split(maxsplit=2)
        kind: Callable[[str], object] = (
            _counts if "," in default else float if "." in default or default == "-" else int
        )
        value = None if default == "-" else kind(default)
        group.add_argument(f"--{name}", type=kind, default=value, help=help)
    for name, text in flags.items():
        group.add_argument(f"--{name}", action="store_true", help=text)


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load",
        description=load_doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="directory of the results")
    _add(parser, OPTIONS, FLAGS)
    _add(parser.add_argument_group("capacity (bench-results/capacity.json)"), CAPACITY_OPTIONS,
         CAPACITY_FLAGS)  # fmt: skip
    args = parser.parse_args(argv)
    args.kind_duration = args.kind_duration or args.duration
    if args.quick:
        args.duration, args.drain_timeout = 30.0, 60.0
        args.scale_files, args.scale_turns, args.scale_workers = 150, 600, [1, 2]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    configure_logging("WARNING", "console")  # the ingestor logs every turn at INFO
    args.out.mkdir(parents=True, exist_ok=True)
    with scratch("load", keep_failed=True) as where:
        asyncio.run(measure(args, where))
    return 0


async def measured(title: str, benchmark: str, quick: bool, run: Awaitable[dict[str, Any]]
                   ) -> dict[str, Any]:  # fmt: skip
    """``run``'s result as a results document: what, when, and the machine as it started."""
    console.print(title)
    started = machine()
    result = await run
    return {"benchmark": benchmark, "quick": quick, "machine": started,
            "generated_at": datetime.now(UTC).isoformat(timespec="seconds"), **result}  # fmt: skip


async def measure(args: argparse.Namespace, where: Path) -> None:
    if args.capacity or args.overload or args.per_kind:
        await capacity_main(args, where)
        args.skip_load = args.skip_scaling = True  # the capacity bench replaces both
    if not args.skip_load:
        doc = await measured("[bold]load[/bold] on the embedded stack",
                             "sustained load, embedded stack", args.quick,
                             run_load(args, where / "load"))  # fmt: skip
        doc["load_average_at_end"] = list(os.getloadavg())
        plot = write_lag_plot(doc, args.out / "load_lag")
        doc["lag_plot"] = str(plot.relative_to(REPO) if plot.is_relative_to(REPO) else plot)
        print_load(doc)
        note = "" if plot.suffix == ".png" else " (matplotlib is not installed: CSV instead)"
        console.print(f"→ {save(doc, args.out / 'load.json')}, lag series {plot}{note}")
    if not args.skip_scaling:
        doc = await measured("[bold]scaling[/bold]: 1 vs 2 workers",
                             "1 vs 2 tribal workers draining a backlog", args.quick,
                             run_scaling(args, where / "scaling"))  # fmt: skip
        print_scaling(doc)
        console.print(f"→ {save(doc, args.out / 'scaling.json')}")


if __name__ == "__main__":
    raise SystemExit(main())
