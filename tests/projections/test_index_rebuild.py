"""`tribal rebuild index` on a live system, and a projection worker killed mid-load."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import REPO, Pipeline, isolated_settings, settings_env
from devstack.synthetic import code_file, embeddings
from events.chunks import ChunksEmbedded, DocumentChunked
from projections.index import Kind, index_from_settings
from projections.index.port import SearchMode
from projections.rebuild import rebuild
from projections.registry import projections_for
from projections.runner import ProjectionRunner
from tests.projections.test_rebuild import isolated_pipeline, running
from tests.projections.test_runner import fresh_database

pytestmark = pytest.mark.slow
DIMS = 384
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def fake_vector(text: str) -> list[float]:
    """A deterministic unit vector per text: the model is not what is under test here."""
    seed = hashlib.sha256(text.encode()).digest()
    rnd = random.Random(seed)
    v = [rnd.uniform(-1, 1) for _ in range(DIMS)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def corpus(n_docs: int, chunks_per_doc: int) -> list[tuple[DocumentChunked, ChunksEmbedded]]:
    """Python files of handlers about orders and refunds, each embedded by :func:`fake_vector`."""
    out = []
    for d in range(n_docs):
        path = f"src/module_{d}.py"
        version = hashlib.sha256(f"file:repo:{path}".encode()).hexdigest()
        functions = [
            (f"handler_{d}_{i}", f"def handler_{d}_{i}(): process order {d} line item {i} refund")
            for i in range(chunks_per_doc)
        ]
        doc = code_file("repo", path, version, functions, chunked_by="python-ingester")
        out.append((doc, embeddings(doc, MODEL, DIMS, lambda chunk: fake_vector(chunk.text))))
    return out


async def load(pipeline: Pipeline, docs: list[tuple[DocumentChunked, ChunksEmbedded]]) -> None:
    await pipeline.produce("chunks", [(d.document_id, d) for d, _ in docs])
    await pipeline.produce("embeddings", [(v.document_id, v) for _, v in docs])


async def test_rebuild_index_swaps_without_a_failed_query(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    pipeline = await isolated_pipeline(broker, postgres_dsn, tmp_path)
    settings = pipeline.settings
    await load(pipeline, corpus(60, 10))
    [live_projection] = projections_for(settings, ["index"])
    live = ProjectionRunner(live_projection, settings, pipeline.serde)
    reader = index_from_settings(settings)
    failures: list[BaseException] = []
    sizes: list[int] = []
    query = fake_vector("def handler_7_3(): process order 7 line item 3 refund")

    async def query_loop(stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                hits = await reader.search(
                    "refund order", query, Kind.CODE_CHUNK, limit=5, mode=SearchMode.HYBRID
                )
                sizes.append(len(hits))
            except Exception as exc:
                failures.append(exc)
            await asyncio.sleep(0.01)

    async with running(live) as stop:
        await reader.setup()
        loop_task = asyncio.create_task(query_loop(stop))
        try:
            report = await rebuild(settings, "index")
            assert report.applied == 120  # 60 chunk events + 60 embedding events
            await load(pipeline, corpus(61, 10)[60:])  # the live runner goes on after the swap
            for _ in range(100):
                if await reader.count(Kind.CODE_CHUNK) == 610:
                    break
                await asyncio.sleep(0.1)
            assert await reader.count(Kind.CODE_CHUNK) == 610
        finally:
            stop.set()
            await loop_task
            await reader.close()
    assert failures == []
    assert len(sizes) > 10
    assert min(sizes) == 5


def _projection_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "cli", "project", "--only", "index"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def test_a_projection_worker_killed_at_random_points_converges_to_a_clean_run(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    """SIGKILL during a 10,000-chunk load, restart, compare with a clean run."""
    docs = corpus(500, 20)  # 10,000 chunks
    dsn = await fresh_database(postgres_dsn)
    settings = isolated_settings(broker.bootstrap, tmp_path, postgres_dsn=dsn)
    pipeline = Pipeline(settings)
    await pipeline.create_topics()
    producing = asyncio.create_task(load(pipeline, docs))

    env = settings_env(settings)
    env["TRIBAL_POSTGRES_DSN"] = dsn
    rnd = random.Random(7)
    kills = 0
    reader = index_from_settings(settings)
    await reader.setup()
    try:
        for _ in range(4):
            worker = _projection_worker(env, tmp_path / "project.log")
            await asyncio.sleep(rnd.uniform(1.0, 4.0))
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(10)
            kills += 1
        await producing
        worker = _projection_worker(env, tmp_path / "project.log")
        try:
            for _ in range(600):
                if await reader.count(Kind.CODE_CHUNK) == 10_000 and await _vectors_complete(
                    reader
                ):
                    break
                await asyncio.sleep(0.2)
        finally:
            worker.terminate()
            worker.wait(30)
        crashed = await _snapshot(reader)
    finally:
        await reader.close()

    clean_dsn = await fresh_database(postgres_dsn)
    clean_settings = settings.model_copy(update={"postgres_dsn": clean_dsn})
    [clean_projection] = projections_for(clean_settings, ["index"])
    runner = ProjectionRunner(clean_projection, clean_settings, pipeline.serde, batch_size=2000)
    await runner.start()
    await runner.catch_up()
    await runner.stop()
    clean_reader = index_from_settings(clean_settings)
    await clean_reader.setup()
    try:
        clean = await _snapshot(clean_reader)
    finally:
        await clean_reader.close()
    assert kills == 4
    assert len(clean) == 10_000
    assert crashed == clean


async def _vectors_complete(index: object) -> bool:
    pool = index.pool  # type: ignore[attr-defined]
    missing = await pool.fetchval(_MISSING_SQL.format(schema=index.schema))  # type: ignore[attr-defined]
    return bool(missing == 0)


async def _snapshot(index: object) -> dict[str, tuple[str, bool]]:
    pool = index.pool  # type: ignore[attr-defined]
    rows = await pool.fetch(_SNAPSHOT_SQL.format(schema=index.schema))  # type: ignore[attr-defined]
    return {r["chunk_id"]: (r["text"], r["has_vector"]) for r in rows}


_MISSING_SQL = (
    "SELECT count(*) FROM \"{schema}\".objects WHERE embedding IS NULL AND kind = 'CodeChunk'"
)
_SNAPSHOT_SQL = (
    'SELECT chunk_id, text, embedding IS NOT NULL AS has_vector FROM "{schema}".objects '
    "WHERE kind = 'CodeChunk'"
)
