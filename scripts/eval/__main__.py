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
                evaluate(tansu, pg, Path(tmp), SentenceTransformerEmbedder(MODEL), console)
            )
        result["seconds"] = round(time.perf_counter() - t0, 1)
    finally:
        hub.close()
    report.render(result, console)
    report.write(result, args.out)
    console.print(f"report: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
