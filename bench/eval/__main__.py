"""``make eval``: build every labelled corpus on Tansu + PostgreSQL (each its own
tenant), serve the API with uvicorn, measure each corpus leaving it out of the
calibration, through HTTP and both baselines; print and save, with reliability plots.

    python -m bench.eval [--out eval-results/eval.json] [--kind code] [--fit] [--check]
                         [--index weaviate]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from bench.eval import loco, report
from bench.eval.corpora import all_corpora
from bench.eval.evaluate import evaluate
from devstack import ServiceHub
from devstack.deployment import MODEL
from devstack.endpoints import WeaviateEndpoint
from streams.embedder.model import SentenceTransformerEmbedder

ROOT = Path(__file__).resolve().parents[2]


class _GrpcPollerNoise(logging.Filter):
    """Drops grpc's spurious ``BlockingIOError`` from ``PollerCompletionQueue``: the
    eval serves the API in a thread with a loop of its own, and with two loops using
    ``grpc.aio`` (Weaviate's client) each wakes for every event while one reads it
    (grpc/grpc#25364; harmless, and logged hundreds of times a run)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (
            isinstance(error, BlockingIOError) and "PollerCompletionQueue" in record.getMessage()
        )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eval")
    parser.add_argument("--out", type=Path, default=ROOT / "eval-results" / "eval.json")
    parser.add_argument(
        "--fit", action="store_true",
        help="refit the calibrated relevance on the dev split and write calibration.json",
    )  # fmt: skip
    parser.add_argument(
        "--check", action="store_true",
        help="exit 1 unless every target holds, held out, on every corpus",
    )  # fmt: skip
    parser.add_argument(
        "--kind", action="append", choices=("tables", "code", "kb"),
        help="only the corpora of this kind (repeatable; default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--index", choices=("pgvector", "weaviate"), default="pgvector",
        help="the search index to build, fit and measure on (default: pgvector)",
    )  # fmt: skip
    args = parser.parse_args()
    logging.getLogger("asyncio").addFilter(_GrpcPollerNoise())
    console = Console(width=170)
    hub = ServiceHub()
    try:
        tansu = hub.get("tansu").value.bootstrap  # type: ignore[attr-defined]
        pg = hub.get("postgres").value
        assert isinstance(pg, str)
        store: dict[str, object] = {}
        if args.index == "weaviate":
            node = hub.get("weaviate").value
            assert isinstance(node, WeaviateEndpoint)
            store = {"weaviate_url": node.url, "weaviate_grpc_port": node.grpc_port,
                     "weaviate_prefix": f"Eval{int(time.time())}"}  # fmt: skip
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="tribal-eval-") as tmp:
            kinds = tuple(args.kind or ("tables", "code", "kb"))
            result = asyncio.run(
                evaluate(
                    tansu, pg, Path(tmp), SentenceTransformerEmbedder(MODEL), console,
                    corpora=all_corpora(kinds), fit=args.fit, store=store,
                )
            )  # fmt: skip
        result["seconds"] = round(time.perf_counter() - t0, 1)
    finally:
        hub.close()
    report.render(result, console)
    report.write(result, args.out)
    console.print(f"report: {args.out}")
    suffix = args.out.stem.removeprefix("eval").lstrip("-")  # eval-weaviate -> weaviate
    picture = f"reliability-{suffix}.png" if suffix else "reliability.png"
    plot = loco.reliability_plot(result["corpora"], args.out.with_name(picture))
    if plot is not None:
        console.print(f"reliability plot: {plot}")
    failed = report.verdicts(result)
    for line in failed:
        console.print(f"[red]not met:[/red] {line}")
    if not failed:
        console.print(
            "[green]every target met held out on every corpus, above both baselines[/green]"
        )
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
