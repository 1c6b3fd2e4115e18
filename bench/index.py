"""Benchmark the search index: rebuild rate per adapter next to each store's raw insert rate.

A rebuild replays ``DocumentChunked`` + ``ChunksEmbedded`` batches through
``IndexProjection`` into a shadow generation (``begin_generation``), then swaps it in.
The raw rate inserts the same rows (text, metadata, 384-dim vector) straight into a
table / collection with the same indexes, with the store's fastest bulk path (COPY;
``insert_many``). Size: bytes on disk per chunk (PostgreSQL: table + indexes + TOAST;
Weaviate: the collection's files, only when this script started the node).
Targets: >= 5,000 chunks/s on pgvector, >= 2,000 chunks/s on Weaviate.

    python -m bench.index [--chunks 20000] [--per-doc 20] [--only pgvector]

Endpoints: ``TRIBAL_POSTGRES_DSN``, ``TRIBAL_WEAVIATE_URL`` (+ ``TRIBAL_WEAVIATE_GRPC_PORT``)
or, when unset, servers started here (:mod:`devstack`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.report import print_table, save
from bench.run import Arguments, scratch
from bench.stack import postgres_dsn
from devstack.synthetic import code_file, embeddings
from devstack.weaviate import WeaviateNode
from events.chunks import ChunksEmbedded, DocumentChunked
from projections.base import Applied
from projections.index import pgvector_sql
from projections.index.documents import chunk_objects
from projections.index.pgvector import PgVectorIndex
from projections.index.projection import IndexProjection
from projections.index.scoring import object_uuid
from projections.index.weaviate import WeaviateIndex
from projections.index.weaviate_schema import collection_config, to_properties

TARGETS = {"pgvector": 5000.0, "weaviate": 2000.0}
MODEL = "bench/random-384"
DIMS = 384
WORDS = (
    "order",
    "customer",
    "invoice",
    "table",
    "column",
    "index",
    "query",
    "join",
    "schema",
    "vector",
    "chunk",
    "embed",
    "search",
    "kafka",
    "topic",
    "partition",
    "offset",
    "replay",
    "tenant",
    "session",
    "episode",
    "summary",
    "file",
    "repo",
    "function",
    "class",
    "method",
    "section",
    "article",
    "device",
    "pool",
    "hash",
    "firmware",
    "network",
)


def vector(rng: random.Random) -> list[float]:
    v = [rng.gauss(0, 1) for _ in range(DIMS)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def documents(
    chunks: int, per_doc: int, seed: int = 7
) -> list[tuple[DocumentChunked, ChunksEmbedded]]:
    rng = random.Random(seed)
    out = []
    for d in range(chunks // per_doc):
        functions = [(f"f{i}", " ".join(rng.choices(WORDS, k=60))) for i in range(per_doc)]
        chunked = code_file("bench", f"src/m{d}.py", f"{d:064x}", functions, chunked_by="bench")
        embedded = embeddings(chunked, MODEL, DIMS, lambda _: vector(rng))
        out.append((chunked, embedded))
    return out


def batches(
    docs: list[tuple[DocumentChunked, ChunksEmbedded]], size: int
) -> Iterator[list[Applied]]:
    """Runner-like batches: a slice of the chunks topic, then the same slice of embeddings."""
    per = max(1, size // 2)
    for start in range(0, len(docs), per):
        part = docs[start : start + per]
        yield [Applied("tribal.chunks", 0, start + i, None, c) for i, (c, _) in enumerate(part)] + [
            Applied("tribal.embeddings", 0, start + i, None, e) for i, (_, e) in enumerate(part)
        ]


async def rebuild(
    live: Any, docs: list[tuple[DocumentChunked, ChunksEmbedded]], size: int
) -> dict[str, float]:
    shadow = await live.begin_generation(model=MODEL)
    projection = IndexProjection(shadow)
    t0 = time.perf_counter()
    for batch in batches(docs, size):
        await projection.apply(batch)
    applied = time.perf_counter() - t0
    t1 = time.perf_counter()
    await live.finish_generation(shadow)
    n = sum(len(c.chunks) for c, _ in docs)
    return {
        "chunks": n,
        "seconds": applied,
        "chunks_per_s": n / applied,
        "swap_s": (swap := time.perf_counter() - t1),
        # pgvector builds its HNSW/GIN indexes during the swap: this is the honest total.
        "end_to_end_chunks_per_s": n / (applied + swap),
    }


async def pg_raw(dsn: str, docs: list[tuple[DocumentChunked, ChunksEmbedded]]) -> dict[str, float]:
    raw = PgVectorIndex(dsn, schema="bench_raw", model=MODEL)
    await raw.setup()
    await raw.drop()
    await raw.setup()
    rows = []
    for chunked, embedded in docs:
        vecs = {v.chunk_id: v.vector for v in embedded.vectors}
        for o in chunk_objects(chunked):
            rows.append((*pgvector_sql.object_args(o), vecs[o.chunk_id], MODEL))
    t0 = time.perf_counter()
    async with raw.pool.acquire() as conn:
        await conn.copy_records_to_table(
            "objects",
            schema_name="bench_raw",
            records=rows,
            columns=[*pgvector_sql.COLUMNS, "embedding", "model"],
        )
    seconds = time.perf_counter() - t0
    await raw.drop()
    await raw.close()
    return {"seconds": seconds, "chunks_per_s": len(rows) / seconds}


async def weaviate_raw(
    live: WeaviateIndex, docs: list[tuple[DocumentChunked, ChunksEmbedded]]
) -> dict[str, float]:
    from weaviate.classes.data import DataObject

    name = f"{live.prefix}RawCodeChunk"
    client = live.client
    await client.collections.delete(name)
    col = await client.collections.create(name, **collection_config("CodeChunk"))
    objects = []
    for chunked, embedded in docs:
        vecs = {v.chunk_id: v.vector for v in embedded.vectors}
        objects += [
            DataObject(
                uuid=object_uuid(o.tenant, o.chunk_id),
                properties=to_properties(o, MODEL),
                vector=vecs[o.chunk_id],
            )
            for o in chunk_objects(chunked)
        ]
    t0 = time.perf_counter()
    for start in range(0, len(objects), 1000):
        result = await col.data.insert_many(objects[start : start + 1000])
        assert not result.has_errors, list(result.errors.values())[:1]
    seconds = time.perf_counter() - t0
    await client.collections.delete(name)
    return {"seconds": seconds, "chunks_per_s": len(objects) / seconds}


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


async def bench_pg(dsn: str, docs: Any, size: int) -> dict[str, Any]:
    live = PgVectorIndex(dsn, schema="bench_index", model=MODEL)
    await live.setup()
    result: dict[str, Any] = {
        "rebuild": await rebuild(live, docs, size),
        "raw": await pg_raw(dsn, docs),
    }
    async with live.pool.acquire() as conn:
        total = await conn.fetchval("SELECT pg_total_relation_size('bench_index.objects')")
    result["bytes_per_chunk"] = total / result["rebuild"]["chunks"]
    await live.drop()
    await live.close()
    return result


async def bench_weaviate(
    endpoint: tuple[str, int, str, int], data_dir: Path | None, docs: Any, size: int
) -> dict[str, Any]:
    live = WeaviateIndex(*endpoint, prefix="Bench", model=MODEL)
    await live.setup()
    result: dict[str, Any] = {"rebuild": await rebuild(live, docs, size)}
    result["raw"] = await weaviate_raw(live, docs)
    result["bytes_per_chunk"] = None
    if data_dir is not None:
        generation = await live._live_generation()
        await asyncio.sleep(1.0)
        path = data_dir / f"benchcodechunk_{generation}".lower()
        if path.exists():
            result["bytes_per_chunk"] = dir_bytes(path) / result["rebuild"]["chunks"]
    await live.drop()
    await live.close()
    return result


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    docs = documents(args.chunks, args.per_doc)
    results: dict[str, Any] = {
        "chunks": args.chunks,
        "per_doc": args.per_doc,
        "dims": DIMS,
        "batch": args.batch,
    }
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(scratch("index"))
        if "pgvector" in args.only:
            dsn = stack.enter_context(postgres_dsn(tmp))
            results["pgvector"] = await bench_pg(dsn, docs, args.batch)
        if "weaviate" in args.only:
            url = os.environ.get("TRIBAL_WEAVIATE_URL", "")
            data_dir = None
            if url:
                w = WeaviateIndex.from_url(
                    url, int(os.environ.get("TRIBAL_WEAVIATE_GRPC_PORT", "50051"))
                )
                endpoint = w.endpoint
            else:
                wnode = WeaviateNode(tmp / "weaviate").start()
                stack.callback(wnode.stop)
                endpoint = (wnode.host, wnode.http_port, wnode.host, wnode.grpc_port)
                data_dir = tmp / "weaviate" / "data"
            results["weaviate"] = await bench_weaviate(endpoint, data_dir, docs, args.batch)
    return results


def report(results: dict[str, Any]) -> None:
    rows = []
    for name, target in TARGETS.items():
        r = results.get(name)
        if r is None:
            continue
        rate = r["rebuild"]["chunks_per_s"]
        size = r["bytes_per_chunk"]
        rows.append([
            name,
            f"[{'green' if rate >= target else 'red'}]{rate:,.0f}",
            f"{target:,.0f}",
            f"{r['raw']['chunks_per_s']:,.0f}",
            f"{r['rebuild']['swap_s']:.2f}",
            f"{r['rebuild']['end_to_end_chunks_per_s']:,.0f}",
            "n/a" if size is None else f"{size:,.0f}",
        ])  # fmt: skip
    print_table(
        f"search index rebuild ({results['chunks']} chunks, {DIMS} dims)",
        ("adapter", "rebuild chunks/s", "target", "raw insert chunks/s", "swap s",
         "end-to-end chunks/s", "bytes/chunk"),
        rows,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = Arguments("index", __doc__)
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--per-doc", type=int, default=20)
    parser.add_argument("--batch", type=int, default=1000, help="records per projection batch")
    parser.add_argument(
        "--only", nargs="+", default=["pgvector", "weaviate"], choices=list(TARGETS)
    )
    args = parser.parse(argv)
    outcome = asyncio.run(measure(args))
    for name, target in TARGETS.items():
        if name in outcome:
            outcome[name]["target_chunks_per_s"] = target
            outcome[name]["meets_target"] = outcome[name]["rebuild"]["chunks_per_s"] >= target
    save(outcome, args.out)
    report(outcome)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
