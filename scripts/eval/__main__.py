"""``make eval``: build the labelled corpora on Tansu + PostgreSQL, serve the API with
uvicorn, run every labelled set through HTTP and both baselines, print and save.

    python -m scripts.eval [--out eval-results/eval.json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from scripts.eval import report
from scripts.eval.evaluate import evaluate
from streams.embedder.model import SentenceTransformerEmbedder
from tests.api.demo import MODEL
from tests.harness import ServiceHub

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.eval")
    parser.add_argument("--out", type=Path, default=ROOT / "eval-results" / "eval.json")
    parser.add_argument(
        "--fit", action="store_true",
        help="refit the calibrated relevance on the dev split and write calibration.json",
    )  # fmt: skip
    parser.add_argument(
        "--check", action="store_true",
        help="exit 1 unless every issue-7 target holds and beats both baselines",
    )  # fmt: skip
    args = parser.parse_args()
    console = Console()
    hub = ServiceHub()
    try:
        tansu = hub.get("tansu").value.bootstrap  # type: ignore[attr-defined]
        pg = hub.get("postgres").value
        assert isinstance(pg, str)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="tribal-eval-") as tmp:
            result = asyncio.run(
                evaluate(
                    tansu, pg, Path(tmp), SentenceTransformerEmbedder(MODEL), console, fit=args.fit
                )
            )
        result["seconds"] = round(time.perf_counter() - t0, 1)
    finally:
        hub.close()
    report.render(result, console)
    report.write(result, args.out)
    console.print(f"report: {args.out}")
    failed = report.verdicts(result)
    for line in failed:
        console.print(f"[red]not met:[/red] {line}")
    if not failed:
        console.print("[green]every target met, above both baselines[/green]")
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
