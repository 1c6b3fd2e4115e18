"""Benchmark the embedding pipeline: chunks/s through Kafka → embedder agent → embeddings,
next to raw ``model.encode`` on the same texts in the same run. Target: ≥ 90 % of raw.

    python -m bench.embedder [--chunks 4000] [--quick]
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.report import machine, print_table, save
from bench.run import Arguments, scratch
from devstack.pipeline import REPO, Pipeline, WorkerProcess, isolated_settings
from events.chunks import Chunk, ChunksEmbedded, DocumentChunked
from runtime.embedded.tansu import TansuBroker
from streams.embedder.model import Embedder, SentenceTransformerEmbedder
from streams.embedder.onnx import OnnxEmbedder

CHUNKS_PER_DOC = 16
TARGET = 0.90
ONNX_TARGET = {"speedup": 1.6, "min_cosine": 0.9999}


def onnx_versus_torch(texts: list[str], torch_raw: dict[str, float]) -> dict[str, Any]:
    """Raw encode on ONNX Runtime beside torch, same texts, same run: speed and how far
    the vectors are apart (the lowest cosine over every text)."""
    onnx = OnnxEmbedder()
    rate = raw_rate(texts, onnx)
    a = np.array(onnx.encode(texts))
    b = np.array(SentenceTransformerEmbedder().encode(texts))
    cosine = float(
        ((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))).min()
    )
    speedup = rate["chunks_per_s"] / torch_raw["chunks_per_s"]
    return {
        **rate,
        "speedup": round(speedup, 3),
        "min_cosine": round(cosine, 6),
        "target": ONNX_TARGET,
        "target_met": speedup >= ONNX_TARGET["speedup"] and cosine >= ONNX_TARGET["min_cosine"],
    }


def corpus(n: int) -> list[str]:
    """Real prose and code from this repository, cut into ~400-character pieces."""
    texts: list[str] = []
    files = sorted(REPO.glob("**/*.py")) + sorted(REPO.glob("**/*.md"))
    for path in files:
        if ".venv" in path.parts:
            continue
        body = path.read_text(errors="replace")
        for start in range(0, len(body), 400):
            piece = body[start : start + 400].strip()
            if len(piece) > 100:
                # unique text per chunk: the embedder's cache must not serve repeats
                texts.append(f"{path.name} #{len(texts)}\n{piece}")
            if len(texts) >= n:
                return texts
    while len(texts) < n:
        texts.append(f"filler chunk {len(texts)} about order processing and refunds")
    return texts


def documents(texts: list[str], tag: str) -> list[DocumentChunked]:
    docs = []
    for d in range(0, len(texts), CHUNKS_PER_DOC):
        doc_id = f"bench:{tag}:{d}"
        chunks = tuple(
            Chunk(chunk_id=f"{doc_id}#{i}", index=i, text=t)
            for i, t in enumerate(texts[d : d + CHUNKS_PER_DOC])
        )
        docs.append(
            DocumentChunked(
                document_id=doc_id,
                document_version="0" * 64,
                source_type="file",
                chunked_by="bench",
                chunks=chunks,
            )
        )
    return docs


async def pipeline_rate(texts: list[str], where: Path) -> dict[str, float]:
    broker = TansuBroker(log_path=where / "tansu.log").start()
    try:
        settings = isolated_settings(broker.bootstrap, where / "data", default_partitions=2)
        pipe = Pipeline(settings)
        await pipe.create_topics()
        with WorkerProcess(settings, where / "worker.log"):
            # warm-up: the worker loads the model and joins the group before timing
            await pipe.produce("chunks", [(d.document_id, d) for d in documents(texts[:16], "w")])
            await _wait_for(pipe, 1, timeout=180)
            docs = documents(texts, "run")
            t0 = time.perf_counter()
            await pipe.produce("chunks", [(d.document_id, d) for d in docs])
            await _wait_for(pipe, 1 + len(docs), timeout=600)
            seconds = time.perf_counter() - t0
    finally:
        broker.stop()
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 3),
        "chunks_per_s": len(texts) / seconds,
    }


async def _wait_for(pipe: Pipeline, n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        events = [e for e in await pipe.decoded("embeddings") if isinstance(e, ChunksEmbedded)]
        if len(events) >= n:
            return
        await asyncio.sleep(0.5)
    raise TimeoutError(f"only part of {n} ChunksEmbedded events arrived in {timeout:.0f}s")


def raw_rate(texts: list[str], model: Embedder | None = None) -> dict[str, float]:
    model = model or SentenceTransformerEmbedder()
    model.encode(texts[:64])  # load and warm up
    t0 = time.perf_counter()
    for start in range(0, len(texts), 64):
        model.encode(texts[start : start + 64])
    seconds = time.perf_counter() - t0
    return {
        "chunks": len(texts),
        "seconds": round(seconds, 3),
        "chunks_per_s": len(texts) / seconds,
    }


def main(argv: list[str] | None = None) -> int:
    args = Arguments("embedder", __doc__, chunks=(4000, 256)).parse(argv)
    texts = corpus(args.chunks)
    raw = raw_rate(texts)
    onnx = onnx_versus_torch(texts, raw)
    with scratch("embed") as where:
        piped = asyncio.run(pipeline_rate(texts, where))
    ratio = piped["chunks_per_s"] / raw["chunks_per_s"]
    doc = {
        "benchmark": "embedding pipeline",
        "machine": machine(),
        "raw_encode": raw,
        "raw_encode_onnx": onnx,
        "through_kafka": piped,
        "ratio": round(ratio, 3),
        "target": TARGET,
        "target_met": ratio >= TARGET,
    }
    save(doc, args.out)
    print_table(
        f"Embedding pipeline vs raw model.encode (target ≥ {TARGET:.0%})",
        ("path", "chunks", "seconds", "chunks/s"),
        [
            [path, row["chunks"], row["seconds"], f"{row['chunks_per_s']:.0f}"]
            for path, row in (
                ("raw model.encode", raw),
                ("Kafka → embedder → embeddings", piped),
                ("raw encode, ONNX Runtime", onnx),
            )
        ],
    )
    print(f"ratio {ratio:.1%}; target met: {doc['target_met']}  →  {args.out}")
    print(
        f"ONNX Runtime vs torch: {onnx['speedup']:.2f}x at min cosine {onnx['min_cosine']} "
        f"(target >= {ONNX_TARGET['speedup']}x at >= {ONNX_TARGET['min_cosine']}): "
        f"{'met' if onnx['target_met'] else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
