"""``tribal up`` given Apache Kafka, PostgreSQL and Weaviate by ``TRIBAL_*`` uses them: it
starts, says so, searches answer from Weaviate and ``/healthz`` checks every store."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from devstack.endpoints import WeaviateEndpoint
from devstack.pipeline import eventually
from projections.index import Kind
from runtime.databases import drop_database, fresh_database
from tests.distributed.corpus import Corpus, Question, word
from tests.distributed.stack import (
    UpStack,
    tenant_and_key,
    weaviate_prefix,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


async def test_tribal_up_on_external_services_answers_searches_from_weaviate(
    kafka_bootstrap: str, postgres_dsn: str, weaviate: WeaviateEndpoint, tmp_path: Path
) -> None:
    tenant, key = tenant_and_key()
    dsn = await fresh_database(postgres_dsn, "e2e")
    tag = uuid.uuid4().hex[:8]
    stack = UpStack(
        tmp_path / "up",
        tenant,
        key,
        services={
            "TRIBAL_KAFKA_BOOTSTRAP": kafka_bootstrap,
            "TRIBAL_POSTGRES_DSN": dsn,
            "TRIBAL_WEAVIATE_URL": weaviate.url,
            "TRIBAL_WEAVIATE_GRPC_PORT": str(weaviate.grpc_port),
            "TRIBAL_WEAVIATE_PREFIX": weaviate_prefix(),
            "TRIBAL_TOPIC_PREFIX": f"t{tag}.",
            "TRIBAL_CONSUMER_GROUP": f"g{tag}",
            "TRIBAL_DEFAULT_PARTITIONS": "2",
        },
    )
    try:
        await stack.start()  # exits instead when it never sees /healthz answer
        assert (stack.info["mode"], stack.info["broker"], stack.info["index"]) == (
            "distributed",
            "external",
            "weaviate",
        )
        assert f"Weaviate at {weaviate.url}" in stack.log()

        corpus = Corpus(tenant, python=3, markdown=1)
        await corpus.produce(stack.pipeline)
        code = Question(
            "GET",
            "/v1/code/search",
            {"query": f"rebalance {word(1)} inventory", "limit": 3},
            f"src/depot_001.py#depot_001.rebalance_{word(1)}_inventory",
        )
        article = Question(
            "POST",
            "/v1/retrieve",
            {"intent": "not_hashing", "message": "miner shows 0 H/s", "metadata": {}},
            "https://help.example/kb-2",
        )

        async def answered() -> bool:
            stack.children.check()
            resp = await stack.api.ask(code)
            assert resp.status_code == 200, resp.text  # never INDEX_UNAVAILABLE
            return (await stack.api.answers([code, article])) == [
                [code.expects],
                [article.expects, "coverage high"],
            ]

        await eventually(answered, timeout=120)
        assert await stack.index.count(Kind.CODE_CHUNK, tenant) > 0  # in Weaviate

        status, health = await stack.api.health()
        assert (status, health["mode"]) == (200, "distributed")
        assert health["checks"] == {"kafka": "ok", "postgres": "ok", "index": "ok"}
    finally:
        await stack.stop()
        await drop_database(postgres_dsn, dsn)
