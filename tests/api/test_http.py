"""The /v1 endpoints on the demo deployment, checked against the seeds' shapes."""

from __future__ import annotations

import asyncpg
import httpx

from api.schemas.catalog import (
    GetDomainOverviewOutput,
    GetJoinPathOutput,
    GetTableSchemaOutput,
    ListDomainsOutput,
    SearchTablesOutput,
)
from api.schemas.code import SearchCodeOutput
from api.schemas.knowledge import RetrieveResponse
from api.schemas.memory import GetEntityOutput, SearchMemoryOutput
from devstack.deployment import ALICE, GROUP, Demo

NOT_HASHING = {
    "intent": "not_hashing",
    "message": "My Apollo shows 0 H/s for 3 days. Already tried restarting.",
    "metadata": {"product": "Apollo II", "attachments": ["debug.log"]},
}
SEED_KEYS = {"sources_consulted", "coverage", "gaps", "retrieval_time_ms"}


async def test_retrieve_answers_seed_002_with_device_specific_sources(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/retrieve", json=NOT_HASHING)
    assert r.status_code == 200
    assert set(r.json()) == SEED_KEYS
    out = RetrieveResponse.model_validate(r.json())
    assert 1 <= len(out.sources_consulted) <= 3
    assert out.coverage == "high"
    assert out.gaps == []
    titles = [s.title for s in out.sources_consulted]
    assert "Apollo II Hashrate Issues" in titles
    for s in out.sources_consulted:
        assert s.relevance_score >= 0.7
        assert len(s.excerpt) <= 150
        assert s.last_updated
    assert 0 < out.retrieval_time_ms < 100


async def test_retrieve_names_the_gap_when_nothing_is_device_specific(
    client: httpx.AsyncClient,
) -> None:
    body = {"intent": "billing", "message": "Can I pay my invoice with a credit card?",
            "metadata": {"product": "Apollo II"}}  # fmt: skip
    out = RetrieveResponse.model_validate((await client.post("/v1/retrieve", json=body)).json())
    assert out.sources_consulted == []
    assert out.coverage in ("low", "none")
    assert "No Apollo II specific troubleshooting guide for this issue" in out.gaps


async def test_retrieve_keeps_both_product_and_device_and_names_the_missing_device(
    client: httpx.AsyncClient,
) -> None:
    body = {**NOT_HASHING, "metadata": {"product": "Apollo II", "device": "Nebula X"}}
    out = RetrieveResponse.model_validate((await client.post("/v1/retrieve", json=body)).json())
    assert "No Nebula X specific troubleshooting guide for this issue" in out.gaps
    assert "No Apollo II specific troubleshooting guide for this issue" not in out.gaps
    assert out.coverage != "high"  # nothing is written for this device


async def test_repeated_queries_hit_the_embedding_cache(client: httpx.AsyncClient) -> None:
    body = {**NOT_HASHING, "message": "Hashrate dropped to zero after the firmware update"}
    times = []
    for _ in range(5):
        r = await client.post("/v1/retrieve", json=body)
        times.append(r.json()["retrieval_time_ms"])
    assert r.json()["sources_consulted"]
    assert min(times[1:]) <= times[0]  # no embedding on repeats


async def test_invalid_retrieve_input_is_degraded_not_an_error(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/retrieve", json={"intent": "x"})
    assert r.status_code == 200
    assert r.json()["coverage"] == "none"
    assert r.json()["sources_consulted"] == []


async def test_search_tables_and_get_table_schema(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/tables/search", params={"query": "customer orders and payments"})
    out = SearchTablesOutput.model_validate(r.json())
    assert out.success
    assert out.tokens_used > 0
    assert out.query_interpretation is not None
    names = [t.name for t in out.tables]
    assert "shop.public.orders" in names
    assert len(names) <= 5
    assert all(0 <= t.relevance_score <= 1 for t in out.tables)
    r = await client.get("/v1/tables/shop.public.orders")
    schema = GetTableSchemaOutput.model_validate(r.json()).table_schema
    assert schema is not None
    assert r.json()["schema"]["schema"] == "public"
    assert schema.primary_key == ["id"]
    assert any(fk.references_table == "shop.public.customers" for fk in schema.foreign_keys)
    missing = await client.get("/v1/tables/shop.public.nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "TABLE_NOT_FOUND"


async def test_join_path_finds_three_hops_whose_sql_runs(
    client: httpx.AsyncClient, demo: Demo
) -> None:
    params = {"source_table": "shop.public.product_images",
              "target_table": "shop.public.customers"}  # fmt: skip
    out = GetJoinPathOutput.model_validate(
        (await client.get("/v1/join-path", params=params)).json()
    )
    assert out.path_found
    assert out.hop_count == 3
    assert out.path is not None
    assert [s.step for s in out.path] == [1, 2, 3]
    assert out.sql_snippet is not None
    conn = await asyncpg.connect(demo.dsn)
    try:
        await conn.fetch(out.sql_snippet)
    finally:
        await conn.close()
    too_short = await client.get("/v1/join-path", params={**params, "max_hops": 2})
    assert too_short.json()["path_found"] is False


async def test_domains_list_and_overview(client: httpx.AsyncClient) -> None:
    out = ListDomainsOutput.model_validate((await client.get("/v1/domains")).json())
    names = {d.name for d in out.domains}
    assert {"orders", "customer"} <= names
    overview = GetDomainOverviewOutput.model_validate(
        (await client.get("/v1/domains/orders")).json()
    )
    assert "shop.public.orders" in {t.name for t in overview.tables}
    assert overview.er_diagram
    assert overview.er_diagram.lstrip().startswith("erDiagram")
    assert (await client.get("/v1/domains/nope")).status_code == 404


async def test_code_search_filters_by_repo_language_and_path(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/code/search", params={"query": "embedding vectors model"})
    out = SearchCodeOutput.model_validate(r.json())
    top = out.results[0]
    assert top.symbol == "SentenceTransformerEmbedder"
    assert top.fully_qualified_name == "streams.embedder.model.SentenceTransformerEmbedder"
    assert (top.path, top.start_line, top.end_line) == ("streams/embedder/model.py", 37, 80)
    ts = await client.get("/v1/code/search", params={"query": "cart", "language": "typescript"})
    assert [h.repo for h in SearchCodeOutput.model_validate(ts.json()).results] == ["webshop"]
    glob = await client.get("/v1/code/search", params={"query": "search", "path": "projections/*"})
    paths = [h.path for h in SearchCodeOutput.model_validate(glob.json()).results]
    assert paths
    assert all(p and p.startswith("projections/") for p in paths)


async def test_memory_search_and_entity_history(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/memory/search", params={"group_id": GROUP, "query": "Apollo"})
    out = SearchMemoryOutput.model_validate(r.json())
    assert [f.fact for f in out.facts] == ["Alice owns an Apollo II"]
    assert out.answers[0].kind == "fact"  # facts and episodes ranked together
    assert out.answers[0].relationship_id == out.facts[0].relationship_id
    past = await client.get(
        "/v1/memory/search", params={"group_id": GROUP, "as_of": "2020-01-01T00:00:00Z"}
    )
    assert past.json()["facts"] == []
    r = await client.get(f"/v1/memory/entities/{ALICE}", params={"group_id": GROUP})
    entity = GetEntityOutput.model_validate(r.json())
    assert entity.entity is not None
    assert entity.entity.name == "Alice"
    assert entity.relationships
    assert entity.versions


async def test_every_answer_is_bounded_and_says_when_it_was_cut(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/tables/search", params={"query": "orders", "limit": 20,
                                                      "max_tokens": 300})  # fmt: skip
    out = SearchTablesOutput.model_validate(r.json())
    assert out.truncated
    assert out.tokens_used <= 300
    assert len(r.content) <= 300 * 4 + 40
    page = await client.get("/v1/domains", params={"limit": 2})
    assert len(page.json()["domains"]) == 2
    assert page.json()["has_more"] is True
    rest = await client.get("/v1/domains", params={"limit": 2, "offset": 2})
    assert {d["name"] for d in rest.json()["domains"]}.isdisjoint(
        {d["name"] for d in page.json()["domains"]}
    )
    too_many = await client.get("/v1/tables/search", params={"query": "x", "limit": 21})
    assert too_many.status_code == 422
