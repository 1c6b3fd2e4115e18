"""Seed 002: retrieval never fails. A stopped index, a dead database, a missing model or
a blown 100 ms budget all answer the fallback body with HTTP 200."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from api.app import create_app
from api.schemas.knowledge import RetrieveRequest
from api.services.context import QueryEmbedder, ServiceContext
from api.services.knowledge import retrieve_knowledge
from devstack.deployment import Demo
from projections.index import index_from_settings
from streams.embedder.model import SentenceTransformerEmbedder

FALLBACK = {
    "sources_consulted": [],
    "coverage": "none",
    "gaps": ["Knowledge retrieval unavailable"],
    "retrieval_time_ms": 0,
}
MESSAGE = "Apollo II shows 0 H/s"
BODY = {"intent": "not_hashing", "message": MESSAGE,
        "metadata": {"product": "Apollo II"}}  # fmt: skip
AUTH = {"Authorization": "Bearer key-default"}


@pytest.fixture
async def context(
    demo: Demo, embedder: SentenceTransformerEmbedder
) -> AsyncIterator[ServiceContext]:
    index = index_from_settings(demo.settings)
    await index.setup()
    ctx = ServiceContext(demo.settings, index=index, embedder=QueryEmbedder(embedder))
    await ctx.embedder.embed("warm-up")  # type: ignore[union-attr]
    yield ctx
    await index.close()


async def post(ctx: ServiceContext, message: str = MESSAGE) -> httpx.Response:
    app = create_app(ctx.settings, context=ctx)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api", headers=AUTH) as c:
        return await c.post("/v1/retrieve", json={**BODY, "message": message})


async def test_index_stopped_mid_test_answers_the_fallback_with_200(
    context: ServiceContext,
) -> None:
    before = await post(context)
    assert before.status_code == 200
    assert before.json()["sources_consulted"]
    assert context.index is not None
    await context.index.close()  # the index backend goes away
    after = await post(context, "Apollo II hashrate dropped to zero")
    assert after.status_code == 200
    assert after.json() == FALLBACK


async def test_an_answer_given_before_the_index_stopped_is_served_until_it_expires(
    context: ServiceContext,
) -> None:
    before = (await post(context)).json()
    assert context.index is not None
    await context.index.close()
    again = (await post(context)).json()  # within api_answer_cache_s (1 s)
    assert again["sources_consulted"] == before["sources_consulted"]


async def test_dead_postgres_answers_the_fallback(demo: Demo, context: ServiceContext) -> None:
    dead = demo.settings.model_copy(update={"postgres_dsn": "postgresql://x@127.0.0.1:9/none"})
    context.index = index_from_settings(dead)  # never set up: no connection at all
    response = await post(context)
    assert (response.status_code, response.json()) == (200, FALLBACK)


async def test_blown_budget_answers_the_fallback(context: ServiceContext) -> None:
    req = RetrieveRequest.model_validate({**BODY, "message": "never seen before, not cached"})
    out = await retrieve_knowledge(context, req, "default", budget_s=0.000_001)
    assert out.model_dump() == FALLBACK


async def test_a_missed_budget_is_told_apart_from_nothing_found_and_counted(
    context: ServiceContext,
) -> None:
    from prometheus_client import REGISTRY

    def misses() -> float:
        value = REGISTRY.get_sample_value(
            "tribal_retrieve_fallbacks_total", {"reason": "budget_exceeded"}
        )
        return value or 0.0

    before = misses()
    req = RetrieveRequest.model_validate({**BODY, "message": "a question nobody asked yet"})
    out = await retrieve_knowledge(context, req, "default", budget_s=0.000_001)
    assert out.model_dump() == FALLBACK  # the seed's body, unchanged
    assert (out.fallback_reason, out.waited_ms >= 0) == ("budget_exceeded", True)
    assert misses() == before + 1
    answered = await post(context)  # an answer carries no fallback header
    assert "X-Tribal-Fallback" not in answered.headers
    context.index = None
    degraded = await post(context, "no index to ask")
    assert degraded.json() == FALLBACK
    assert degraded.headers["X-Tribal-Fallback"] == "unavailable"
    assert int(degraded.headers["X-Tribal-Waited-Ms"]) >= 0


async def test_no_index_configured_answers_the_fallback(context: ServiceContext) -> None:
    context.index = None
    assert (await post(context)).json() == FALLBACK
