"""The whole path (topics → projection runners → services) on Apache Kafka and on Tansu."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from api.schemas.catalog import GetJoinPathInput
from api.schemas.knowledge import RetrieveRequest
from api.services.catalog import get_join_path
from api.services.context import QueryEmbedder, ServiceContext
from api.services.knowledge import retrieve_knowledge
from devstack import Broker
from devstack.deployment import build_demo
from projections.index import index_from_settings
from streams.embedder.model import SentenceTransformerEmbedder

pytestmark = pytest.mark.slow


async def test_demo_built_through_each_broker_answers_the_services(
    broker: Broker, postgres_dsn: str, embedder: SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    demo = await build_demo(broker.bootstrap, postgres_dsn, tmp_path, embedder)
    pool = await asyncpg.create_pool(demo.dsn, min_size=1, max_size=2)
    index = index_from_settings(demo.settings)
    await index.setup()
    ctx = ServiceContext(demo.settings, db=pool, index=index, embedder=QueryEmbedder(embedder))
    try:
        path = await get_join_path(ctx, GetJoinPathInput(
            source_table="shop.public.product_images", target_table="shop.public.customers"
        ), "default")  # fmt: skip
        assert path.hop_count == 3
        assert path.sql_snippet
        await pool.fetch(path.sql_snippet)
        await ctx.vector("warm-up")
        req = RetrieveRequest(intent="not_hashing", message="My Apollo II shows 0 H/s")
        out = await retrieve_knowledge(ctx, req, "default", budget_s=1.0)
        assert out.sources_consulted
        assert out.coverage in ("high", "medium")
    finally:
        await index.close()
        await pool.close()
