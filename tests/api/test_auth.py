"""API keys bind callers to tenants: every endpoint, tried across tenants."""

from __future__ import annotations

import httpx
import pytest

from api.auth import InsecureBindError, check_bind
from devstack.deployment import ALICE, GROUP, OTHER
from devstack.served import ThreadedServer

READS = [
    ("GET", "/v1/tables/search", {"query": "orders"}),
    ("GET", "/v1/tables/shop.public.orders", {}),
    ("GET", "/v1/join-path", {"source_table": "shop.public.orders",
                              "target_table": "shop.public.customers"}),
    ("GET", "/v1/domains", {}),
    ("GET", "/v1/domains/orders", {}),
    ("GET", "/v1/code/search", {"query": "embedding"}),
    ("GET", "/v1/memory/search", {"group_id": GROUP}),
    ("GET", f"/v1/memory/entities/{ALICE}", {"group_id": GROUP}),
    ("GET", "/v1/memory/changes", {"group_id": GROUP}),
]  # fmt: skip
WRITES = [
    ("/v1/memory/turns", {"group_id": GROUP, "user_message": "hi"}),
    ("/v1/memory/events", {"group_id": GROUP, "event_type": "x", "content": "y"}),
    ("/v1/memory/forget", {"group_id": GROUP}),
    ("/v1/memory/forget", {"tenant": "default"}),
]


async def test_every_endpoint_refuses_a_missing_or_unknown_key(server: ThreadedServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as c:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "key-default"}):
            for method, path, params in READS:
                r = await c.request(method, path, params=params, headers=headers)
                assert r.status_code == 401, (path, headers)
            for path, body in WRITES:
                assert (await c.post(path, json=body, headers=headers)).status_code == 401
            r = await c.post("/v1/retrieve", json={"intent": "a", "message": "b"}, headers=headers)
            assert r.status_code == 401
            mcp = await c.post("/mcp", json={}, headers=headers)
            assert mcp.status_code == 401
        assert (await c.get("/healthz")).status_code in (200, 503)
        assert (await c.get("/openapi.json")).status_code == 200


async def test_another_tenants_key_sees_none_of_this_tenants_data(server: ThreadedServer) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers=OTHER) as c:
        found = (await c.get("/v1/tables/search", params={"query": "orders"})).json()
        assert found["tables"] == []
        assert (await c.get("/v1/tables/shop.public.orders")).status_code == 404
        r = await c.get("/v1/join-path", params=READS[2][2])
        assert r.status_code == 404
        assert (await c.get("/v1/domains")).json()["domains"] == []
        assert (await c.get("/v1/domains/orders")).status_code == 404
        assert (await c.get("/v1/code/search", params={"query": "embedding"})).json()[
            "results"
        ] == []
        for _, path, params in READS[6:]:
            r = await c.get(path, params=params)
            assert r.status_code == 403, path
            assert r.json()["error"]["code"] == "FORBIDDEN"
        for path, body in WRITES:
            assert (await c.post(path, json=body)).status_code == 403, (path, body)
        retrieved = await c.post("/v1/retrieve", json={"intent": "not_hashing",
                                                       "message": "Apollo 0 H/s"})  # fmt: skip
        assert retrieved.status_code == 200
        assert retrieved.json()["sources_consulted"] == []


def test_without_keys_the_api_binds_loopback_only_unless_insecure() -> None:
    assert "loopback" in check_bind("127.0.0.1", {})
    assert "loopback" in check_bind("::1", {})
    with pytest.raises(InsecureBindError, match="--insecure"):
        check_bind("0.0.0.0", {})
    assert "INSECURE" in check_bind("0.0.0.0", {}, insecure=True)
    assert "API keys" in check_bind("0.0.0.0", {"k": "t"})
