"""`tribal worker --role`: stages run in separate workers, each its own consumer group,
and together do what one worker does."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, WorkerProcess, eventually, isolated_settings, kb_article
from events.chunks import ChunksEmbedded

pytestmark = pytest.mark.slow


async def test_a_chunk_worker_and_an_embed_worker_together_embed_an_article(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    await pipeline.produce("kb.articles", [("kb-1", kb_article(1))])
    with WorkerProcess(pipeline.settings, tmp_path / "chunk.log", role="chunk") as chunker:

        async def chunked() -> bool:
            assert chunker.proc is not None
            assert chunker.proc.poll() is None, chunker.log()
            return len(await pipeline.read_all("chunks")) >= 1

        await eventually(chunked, timeout=120)
        assert await pipeline.read_all("embeddings") == []  # no embed worker yet
        with WorkerProcess(pipeline.settings, tmp_path / "embed.log", role="embed") as embed:

            async def embedded() -> bool:
                assert embed.proc is not None
                assert embed.proc.poll() is None, embed.log()
                return any(
                    isinstance(e, ChunksEmbedded) for e in await pipeline.decoded("embeddings")
                )

            await eventually(embedded, timeout=180)
