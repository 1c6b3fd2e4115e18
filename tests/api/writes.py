"""The memory write endpoints on an in-memory sink, behind the API keys of two tenants:
what a request records is read straight back, and a refused one is proven to have
recorded nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from api.auth import ApiKeyMiddleware
from api.memory import memory_routes
from sources.sink import MemorySink
from sources.turns import MemoryIngestor

KEYS = {"key-acme": "acme", "key-globex": "globex"}
ACME = {"authorization": "Bearer key-acme"}


def memory_app(sink: MemorySink) -> Starlette:
    """The memory routes recording into ``sink``, for callers holding one of :data:`KEYS`."""
    ingestor = MemoryIngestor(sink)
    app = Starlette(routes=memory_routes(lambda: ingestor))
    app.add_middleware(ApiKeyMiddleware, keys=KEYS)
    return app


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


@pytest.fixture
def client(sink: MemorySink) -> Iterator[TestClient]:
    """A client of :func:`memory_app` with acme's key."""
    with TestClient(memory_app(sink), headers=ACME) as c:
        yield c
