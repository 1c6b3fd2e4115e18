"""`tribal worker --role`: stages run in separate workers, each its own consumer group,
and together do what one worker does."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import WorkerProcess, kb_article
from events.chunks import ChunksEmbedded
from tests.pipelines import eventually_while_running, fresh_pipeline, holds

pytestmark = pytest.mark.slow


async def test_a_chunk_worker_and_an_embed_worker_together_embed_an_article(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline = await fresh_pipeline(broker, tmp_path)
    await pipeline.produce("kb.articles", [("kb-1", kb_article(1))])
    with WorkerProcess(pipeline.settings, tmp_path / "chunk.log", role="chunk") as chunker:
        await eventually_while_running(chunker, holds(pipeline, "chunks", 1), timeout=120)
        assert await pipeline.read_all("embeddings") == []  # no embed worker yet
        with WorkerProcess(pipeline.settings, tmp_path / "embed.log", role="embed") as embed:

            async def embedded() -> bool:
                return any(
                    isinstance(e, ChunksEmbedded) for e in await pipeline.decoded("embeddings")
                )

            await eventually_while_running(embed, embedded, timeout=180)
