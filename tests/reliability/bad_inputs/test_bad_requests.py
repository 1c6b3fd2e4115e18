"""Bad requests: refused with a clear AgentError, never passed on as SQL or as a lane.

The memory endpoints run against an in-memory sink, so a refused request is also
proven to have emitted nothing. Catalog lookups run against a real PostgreSQL with a
table in it: hostile names must find nothing and leave every table in place. Endpoints
that are still being built are looked up at run time and skipped (with the reason)
while they do not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from pydantic import ValidationError
from starlette.routing import BaseRoute, Route
from starlette.testclient import TestClient

from api.endpoint import MAX_BODY_BYTES
from api.schemas.catalog import (
    GetJoinPathInput,
    GetTableSchemaInput,
    ListDomainsInput,
    SearchTablesInput,
)
from api.schemas.knowledge import RetrieveRequest
from projections.catalog import CatalogProjection, catalog_projection
from projections.catalog import queries as q
from sources.sink import MemorySink
from tests.api import writes
from tests.api.writes import memory_app
from tests.projections.feed import opened
from tests.projections.test_catalog import customers, orders
from tests.projections.test_runner import fresh_database
from tests.projections.topic_feed import TopicFeed

# Every hostile id below claims the caller's own tenant, so the refusal is about its shape.
HOSTILE_GROUP_IDS = [
    "acme",
    "acme:",
    "acme:s1:extra",
    "acme:s 1",
    "acme:s1\n",
    "acme:../../etc",
    "acme:s1'; DROP TABLE entities; --",
    "acme:sessión",
    "acme:*",
    "acme:s1%",
]
SQL_NAMES = [
    "x'; DROP TABLE y; --",
    'shop.sales.orders"; DROP TABLE tribal_catalog.tables; --',
    "shop.sales.orders' OR '1'='1",
    "shop.sales.%",
    "shop.sales._rders",
    "shop.sales.orders\\",
    "shop.sales.orders; SELECT pg_sleep(10)",
    "$1",
    "shop.sales.orders\x00",
]


sink, client = writes.sink, writes.client  # the same fixtures: acme's client of the memory routes


def _error(resp: Any) -> dict[str, Any]:
    body: dict[str, Any] = resp.json()
    error: dict[str, Any] = body.get("error") or body
    return error


def lane_writes(group_id: str) -> list[tuple[str, dict[str, Any]]]:
    """A write of each kind into the lane ``group_id``: its path and body."""
    return [
        ("/v1/memory/turns", {"group_id": group_id, "user_message": "hi"}),
        ("/v1/memory/events", {"group_id": group_id, "event_type": "tool", "content": "ran"}),
        ("/v1/memory/forget", {"group_id": group_id}),
    ]


def refused_everywhere(client: TestClient, group_id: str, status: int, code: str) -> None:
    """Each kind of write into ``group_id`` is refused with ``status`` and ``code``."""
    for path, body in lane_writes(group_id):
        resp = client.post(path, json=body)
        assert resp.status_code == status, (path, resp.text)
        error = _error(resp)
        assert error["code"] == code, error
        assert error["recoverable"] is False


@pytest.mark.parametrize("group_id", HOSTILE_GROUP_IDS)
def test_a_malformed_group_id_is_refused_and_nothing_is_recorded(
    client: TestClient, sink: MemorySink, group_id: str
) -> None:
    refused_everywhere(client, group_id, 422, "INVALID_GROUP_ID")
    assert sink.emitted == []


@pytest.mark.parametrize("group_id", ["globex:s1", "default:s1", ":s1", "acme%:s1", "tënant:s1"])
def test_writing_into_another_tenants_lane_is_forbidden(
    client: TestClient, sink: MemorySink, group_id: str
) -> None:
    refused_everywhere(client, group_id, 403, "FORBIDDEN")
    resp = client.post("/v1/memory/forget", json={"tenant": "globex"})
    assert resp.status_code == 403
    assert sink.emitted == []


@pytest.mark.parametrize(
    "headers",
    [{}, {"authorization": "Bearer nope"}, {"authorization": "Basic a2V5LWFjbWU="}],
    ids=["no-key", "unknown-key", "wrong-scheme"],
)
def test_a_request_without_a_valid_key_is_unauthorized(
    sink: MemorySink, headers: dict[str, str]
) -> None:
    with TestClient(memory_app(sink)) as c:
        resp = c.post(
            "/v1/memory/turns",
            json={"group_id": "acme:s1", "user_message": "hi"},
            headers=headers,
        )
    assert resp.status_code == 401
    assert _error(resp)["code"] == "UNAUTHORIZED"
    assert sink.emitted == []


def test_a_body_over_the_cap_is_refused_before_it_is_parsed(
    client: TestClient, sink: MemorySink
) -> None:
    huge = {"group_id": "acme:s1", "user_message": "x" * (MAX_BODY_BYTES + 10)}
    resp = client.post("/v1/memory/turns", json=huge)
    assert resp.status_code == 413
    assert _error(resp)["code"] == "PAYLOAD_TOO_LARGE"
    assert sink.emitted == []


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", "INVALID_JSON"),
        (b"\xff\xfe\x00", "INVALID_JSON"),
        (b"[1, 2]", "INVALID_REQUEST"),
        (b'"acme:s1"', "INVALID_REQUEST"),
        (b'{"group_id": "acme:s1", "user_message": "hi", "role": "admin"}', "INVALID_REQUEST"),
        (b'{"group_id": ["acme:s1"], "user_message": "hi"}', "INVALID_REQUEST"),
        (b'{"group_id": "acme:s1", "user_message": ""}', "INVALID_REQUEST"),
    ],
)
def test_a_body_that_is_not_a_turn_is_refused_with_a_clear_code(
    client: TestClient, sink: MemorySink, raw: bytes, code: str
) -> None:
    resp = client.post(
        "/v1/memory/turns", content=raw, headers={"content-type": "application/json"}
    )
    assert resp.status_code in (400, 422)
    assert _error(resp)["code"] == code
    assert sink.emitted == []


def test_a_valid_turn_goes_to_its_own_lane(client: TestClient, sink: MemorySink) -> None:
    resp = client.post("/v1/memory/turns", json={"group_id": "acme:s1", "user_message": "hi"})
    assert resp.status_code == 202, resp.text
    assert [(e.topic, e.key) for e in sink.emitted] == [("memory.turns", "acme:s1")]


# -- bounded inputs: the request models refuse absurd sizes ------------------------------


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (SearchTablesInput, {"query": "orders", "limit": 10**6}),
        (SearchTablesInput, {"query": "orders", "limit": -1}),
        (SearchTablesInput, {"query": "x" * 100_000}),
        (SearchTablesInput, {"query": ""}),
        (SearchTablesInput, {"query": "orders", "offset": 10**9}),
        (SearchTablesInput, {"query": "orders", "max_tokens": 10**9}),
        (ListDomainsInput, {"limit": 10**6}),
        (GetJoinPathInput, {"source_table": "a.b.c", "target_table": "a.b.d", "max_hops": -1}),
        (GetJoinPathInput, {"source_table": "a.b.c", "target_table": "a.b.d", "max_hops": 10**6}),
        (GetTableSchemaInput, {"table": "x" * 100_000}),
        (RetrieveRequest, {"intent": "x", "message": "y" * 100_000}),
        (RetrieveRequest, {"intent": "i" * 10_000, "message": "hi"}),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else None,
)
def test_absurd_sizes_are_refused_by_the_request_models(
    model: type[Any], data: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)


def _live_routes() -> list[BaseRoute]:
    from api.app import create_app
    from runtime.settings import TribalSettings

    return list(create_app(TribalSettings(kafka_bootstrap="", postgres_dsn="")).routes)


def _has_route(path: str) -> bool:
    return any(isinstance(r, Route) and r.path == path for r in _live_routes())


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", "/v1/tables/search", {"query": "orders", "limit": str(10**6)}),
        ("GET", "/v1/tables/search", {"query": "x" * 20_000}),
        ("GET", "/v1/join-path", {"from": "a.b.c", "to": "a.b.d", "max_hops": "-1"}),
        ("GET", "/v1/domains", {"limit": str(10**6)}),
        ("GET", "/v1/code/search", {"query": "x", "limit": str(10**6)}),
        ("GET", "/v1/memory/search", {"group_id": "acme:s1", "query": "x", "limit": "1000000"}),
        ("GET", "/v1/memory/search", {"group_id": "not-a-group", "query": "x"}),
    ],
)
def test_absurd_parameters_are_refused_by_the_http_api(
    method: str, path: str, params: dict[str, str]
) -> None:
    if not _has_route(path):
        pytest.skip(f"{path} does not exist yet (api/services is being built)")
    from api.app import create_app
    from runtime.settings import TribalSettings

    app = create_app(TribalSettings(kafka_bootstrap="", postgres_dsn=""))
    with TestClient(app) as c:
        resp = c.request(method, path, params=params)
    assert resp.status_code in (400, 422), resp.text
    assert _error(resp)["code"]


# -- SQL-looking names never reach PostgreSQL as SQL --------------------------------------


@pytest.fixture
async def catalog(postgres_dsn: str) -> AsyncIterator[CatalogProjection]:
    async with opened(catalog_projection(await fresh_database(postgres_dsn))) as projection:
        await TopicFeed(projection)(customers(), orders())
        yield projection


async def _tables(projection: CatalogProjection) -> list[str]:
    rows = await projection.pool.fetch("SELECT fqn FROM tribal_catalog.tables ORDER BY fqn")
    return [r["fqn"] for r in rows]


@pytest.mark.parametrize("name", SQL_NAMES)
async def test_a_sql_looking_table_name_finds_nothing_and_drops_nothing(
    catalog: CatalogProjection, name: str
) -> None:
    before = await _tables(catalog)
    assert before == ["shop.sales.customers", "shop.sales.orders"]
    async with catalog.pool.acquire() as db:
        try:
            found = await q.get_table(db, name)
        except asyncpg.exceptions.CharacterNotInRepertoireError:
            found = None  # a NUL byte: PostgreSQL refuses the *parameter*, not a statement
        assert found is None
        # a name pattern search treats quotes, % and _ as literal characters
        with contextlib.suppress(asyncpg.exceptions.CharacterNotInRepertoireError):
            assert await q.search_tables_by_name(db, name) == []
    assert await _tables(catalog) == before
    assert await catalog.pool.fetchval("SELECT to_regclass('y')") is None


async def test_get_table_schema_over_http_treats_a_sql_name_as_data(
    catalog: CatalogProjection,
) -> None:
    path = "/v1/tables/{fqn}"
    routes = [
        r for r in _live_routes() if isinstance(r, Route) and r.path.startswith("/v1/tables/")
    ]
    if not [r for r in routes if "{" in r.path]:
        pytest.skip(f"{path} does not exist yet (api/services is being built)")
    from api.app import create_app
    from runtime.settings import TribalSettings

    app = create_app(TribalSettings(kafka_bootstrap="", postgres_dsn=catalog.dsn))
    with TestClient(app) as c:
        resp = c.get("/v1/tables/x'; DROP TABLE y; --")
    assert resp.status_code in (400, 404, 422), resp.text
    assert await _tables(catalog) == ["shop.sales.customers", "shop.sales.orders"]
