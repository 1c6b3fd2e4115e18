"""A real Faust worker between real topics, on Apache Kafka and on Tansu."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, WorkerProcess, eventually, kb_article
from events.chunks import ChunksEmbedded, DocumentChunked
from events.deadletter import DeadLettered
from tests.pipelines import eventually_while_running, fresh_pipeline, holds

pytestmark = pytest.mark.slow


@pytest.fixture
async def pipeline(broker: Broker, tmp_path: Path) -> Pipeline:
    return await fresh_pipeline(broker, tmp_path)


async def test_poison_messages_are_dead_lettered_and_the_stream_goes_on(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    random_bytes = b"\x93\x1f\xfe not avro at all"
    unknown_schema = b"\x00" + struct.pack(">I", 987_654) + b"\x02\x04"
    await pipeline.produce(
        "kb.articles",
        [("bad-1", random_bytes), ("bad-2", unknown_schema), ("kb-1", kb_article(1))],
    )
    with WorkerProcess(pipeline.settings, tmp_path / "worker.log"):

        async def settled() -> bool:
            chunks = await pipeline.read_all("chunks")
            dead = await pipeline.read_all("deadletter")
            return len(chunks) >= 1 and len(dead) >= 2

        await eventually(settled, timeout=90)
    dead = [d for d in await pipeline.decoded("deadletter") if isinstance(d, DeadLettered)]
    by_key = {d.origin_key: d for d in dead}
    assert by_key["bad-1"].error_code == "NOT_WIRE_FORMAT"
    assert by_key["bad-1"].payload == random_bytes
    assert by_key["bad-2"].error_code == "UNKNOWN_SCHEMA_ID"
    assert "987654" in by_key["bad-2"].error_message
    assert by_key["bad-2"].origin_topic == pipeline.topic("kb.articles")
    assert by_key["bad-2"].origin_offset >= 0
    chunks = await pipeline.decoded("chunks")
    assert [c.document_id for c in chunks if isinstance(c, DocumentChunked)] == ["kb:kb-1"]


async def test_articles_flow_through_chunker_and_embedder_to_vectors(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    await pipeline.produce("kb.articles", [(f"kb-{n}", kb_article(n)) for n in range(5)])
    with WorkerProcess(pipeline.settings, tmp_path / "worker.log") as worker:
        await eventually_while_running(worker, holds(pipeline, "embeddings", 5), timeout=120)
    articles = [f"kb:kb-{n}" for n in range(5)]
    docs = await pipeline.decoded("chunks")
    assert all(isinstance(d, DocumentChunked) for d in docs)
    assert sorted(d.document_id for d in docs if isinstance(d, DocumentChunked)) == articles
    vectors = [e for e in await pipeline.decoded("embeddings") if isinstance(e, ChunksEmbedded)]
    assert sorted(v.document_id for v in vectors) == articles
    assert {(v.model, v.dims) for v in vectors} == {("sentence-transformers/all-MiniLM-L6-v2", 384)}
    assert await pipeline.read_all("deadletter") == []
