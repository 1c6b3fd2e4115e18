"""One demo deployment for the API tests (:mod:`devstack.deployment`): data on Tansu +
PostgreSQL, and the API served by a real uvicorn in a thread of its own (its own event
loop, stores and query embedder)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from devstack.deployment import AUTH, KEYS, MODEL, Demo, build_demo
from devstack.served import ThreadedServer
from streams.embedder.model import SentenceTransformerEmbedder


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(MODEL)


@pytest.fixture(scope="session")
async def demo(
    tansu_bootstrap: str,
    postgres_dsn: str,
    embedder: SentenceTransformerEmbedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Demo:
    data_dir: Path = tmp_path_factory.mktemp("api-demo")
    return await build_demo(tansu_bootstrap, postgres_dsn, data_dir, embedder, api_keys=KEYS)


@pytest.fixture(scope="session")
def server(demo: Demo) -> Iterator[ThreadedServer]:
    with ThreadedServer(demo.settings) as running:
        # The query embedder loads in the background: wait until retrieval is semantic.
        deadline = time.monotonic() + 90
        body = {"intent": "not_hashing", "message": "Apollo shows 0 H/s",
                "metadata": {"product": "Apollo II"}}  # fmt: skip
        while time.monotonic() < deadline:
            r = httpx.post(f"{running.url}/v1/retrieve", json=body, headers=AUTH)
            if r.json()["sources_consulted"]:
                break
            time.sleep(0.5)
        yield running


@pytest.fixture
async def client(server: ThreadedServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=30) as c:
        yield c


async def eventually(probe: object, timeout: float = 20) -> None:
    """Await ``probe()`` until it returns truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await probe():  # type: ignore[operator]
            return
        await asyncio.sleep(0.2)
    raise AssertionError("condition not met in time")
