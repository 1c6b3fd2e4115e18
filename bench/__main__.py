"""``make bench``: the benchmarks one after another, each in a process of its own.

    python -m bench                       # every one, in the order below
    python -m bench live fuzz             # only these
    python -m bench --quick               # every one in its tiny mode, where it has one
    python -m bench backbone -- --brokers tansu   # options after -- go to each one named

A benchmark that fails (or misses a target it exits non-zero for) stops the run, as
``make`` would; its results so far are in ``bench-results/``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from devstack.pipeline import REPO

BENCHMARKS = {
    "backbone": True,
    "turns": True,
    "sources_files": False,
    "sources_ddl": False,
    "chunker": False,
    "embedder": True,
    "index": False,
    "freshness": True,
    "live": True,
    "ingest_peer": True,
    "memory": True,
    "memory_import": True,
    "api": False,
    "documenter": True,
    "fuzz": True,
}
"""``make bench``'s benchmarks in order (``bench.<name>``): whether each has ``--quick``."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("names", nargs="*", metavar="NAME", help=", ".join(BENCHMARKS))
    parser.add_argument("--quick", action="store_true", help="each in its tiny mode")
    args = parser.parse_args(argv[:cut])
    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}")
    passed = argv[cut + 1 :]
    for name in args.names or BENCHMARKS:
        quick = ["--quick"] if args.quick and BENCHMARKS[name] else []
        command = [sys.executable, "-m", f"bench.{name}", *quick, *passed]
        print(f"== {' '.join(command[1:])}", flush=True)
        began = time.monotonic()
        code = subprocess.call(command, cwd=REPO)
        print(f"== bench.{name}: exit {code} after {time.monotonic() - began:.0f}s", flush=True)
        if code != 0:
            return code
    print("results: bench-results/*.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
