"""Both MCP transports, driven by the SDK's own client: stdio (``python -m cli mcp``)
and streamable HTTP at ``/mcp`` on a real uvicorn server."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from api.mcp_server import TOOLS
from api.schemas.catalog import (
    GetDomainOverviewOutput,
    GetJoinPathOutput,
    GetTableSchemaOutput,
    ListDomainsOutput,
    SearchTablesOutput,
)
from api.schemas.code import SearchCodeOutput
from api.schemas.knowledge import RetrieveResponse
from api.schemas.memory import AddMemoryOutput, GetEntityOutput, SearchMemoryOutput
from devstack.deployment import ALICE, AUTH, GROUP, Demo
from devstack.pipeline import REPO
from devstack.served import ThreadedServer
from tests.api.conftest import eventually

NAMES = {
    "search_tables", "get_table_schema", "get_join_path", "get_domain_overview", "list_domains",
    "retrieve_knowledge", "search_code", "search_memory", "get_entity", "add_memory",
}  # fmt: skip
pytestmark = pytest.mark.slow


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    if result.structured_content is not None:
        data: dict[str, Any] = result.structured_content
        return data
    loaded: dict[str, Any] = json.loads(result.content[0].text)
    return loaded


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(demo: Demo) -> AsyncIterator[ClientSession]:
    s = demo.settings
    env = {**os.environ, "TRIBAL_POSTGRES_DSN": s.postgres_dsn,
           "TRIBAL_KAFKA_BOOTSTRAP": s.kafka_bootstrap, "TRIBAL_TOPIC_PREFIX": s.topic_prefix,
           "TRIBAL_DATA_DIR": str(s.data_dir), "TRIBAL_DEFAULT_PARTITIONS": "3",
           "HF_HUB_OFFLINE": "1", "TRIBAL_LOG_LEVEL": "WARNING"}  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cli", "mcp"], env=env, cwd=str(REPO)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def exercise(session: ClientSession) -> None:
    """List the tools and call each on the demo data; answers must have the seed shapes."""
    tools = (await session.list_tools()).tools
    assert {t.name for t in tools} == NAMES == {name for name, *_ in TOOLS}
    for t in tools:
        assert t.description
        assert len(t.description) > 60
        assert t.input_schema["type"] == "object"

    async def call(name: str, **args: Any) -> dict[str, Any]:
        return payload(await session.call_tool(name, args))

    found = SearchTablesOutput.model_validate(await call("search_tables", query="payments"))
    assert found.success
    assert found.tables[0].name == "shop.public.payments"
    table = GetTableSchemaOutput.model_validate(
        await call("get_table_schema", table="shop.public.orders")
    )
    assert table.table_schema is not None
    assert table.table_schema.columns
    path = GetJoinPathOutput.model_validate(
        await call("get_join_path", source_table="shop.public.product_images",
                   target_table="shop.public.customers")
    )  # fmt: skip
    assert path.hop_count == 3
    assert path.sql_snippet
    domains = ListDomainsOutput.model_validate(await call("list_domains"))
    assert domains.domains
    overview = GetDomainOverviewOutput.model_validate(
        await call("get_domain_overview", domain=domains.domains[0].name)
    )
    assert overview.tables
    missing = GetTableSchemaOutput.model_validate(await call("get_table_schema", table="a.b.c"))
    assert not missing.success
    assert missing.error
    assert missing.error.code == "TABLE_NOT_FOUND"
    code = SearchCodeOutput.model_validate(await call("search_code", query="join foreign keys"))
    assert code.results[0].symbol == "shortest_path"
    memory = SearchMemoryOutput.model_validate(await call("search_memory", group_id=GROUP))
    assert any(f.fact == "Alice owns an Apollo II" for f in memory.facts)
    entity = GetEntityOutput.model_validate(
        await call("get_entity", entity_id=str(ALICE), group_id=GROUP)
    )
    assert entity.entity is not None
    assert entity.entity.name == "Alice"
    added = AddMemoryOutput.model_validate(
        await call("add_memory", group_id=GROUP, user_message="My Apollo II is overheating")
    )
    assert added.success
    assert added.event_id

    async def semantic() -> bool:
        out = RetrieveResponse.model_validate(await call(
            "retrieve_knowledge", intent="not_hashing", message="Apollo II shows 0 H/s",
            metadata={"product": "Apollo II"},
        ))  # fmt: skip
        return bool(out.sources_consulted)

    await eventually(semantic, timeout=60)  # stdio: the model loads in the background


async def test_mcp_over_streamable_http(server: ThreadedServer) -> None:
    async with http_session(server.url, AUTH) as session:
        await exercise(session)


async def test_mcp_over_stdio(demo: Demo) -> None:
    async with stdio_session(demo) as session:
        await exercise(session)


async def test_mcp_over_http_reads_only_the_keys_tenant(server: ThreadedServer) -> None:
    async with http_session(server.url, {"Authorization": "Bearer key-globex"}) as session:
        out = payload(await session.call_tool("get_table_schema", {"table": "shop.public.orders"}))
        assert out["success"] is False
        assert out["error"]["code"] == "TABLE_NOT_FOUND"
        mem = payload(await session.call_tool("search_memory", {"group_id": GROUP}))
        assert mem["success"] is False
        assert mem["error"]["code"] == "FORBIDDEN"
