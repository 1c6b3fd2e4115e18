"""Fixtures: a fresh file registry per test and a real HTTP registry server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from api.schema_registry import create_schema_registry_app
from events.registry.base import AvroSchema, SchemaRegistry
from events.registry.file import FileSchemaRegistry
from events.registry.http import ConfluentHttpRegistry
from events.serde import EventSerde


class SwappableRegistry:
    """Lets one long-lived server serve a fresh registry to every test."""

    def __init__(self) -> None:
        self.target: SchemaRegistry | None = None

    def _current(self) -> SchemaRegistry:
        assert self.target is not None, "no registry behind the server"
        return self.target

    def register(self, subject: str, schema: AvroSchema) -> int:
        return self._current().register(subject, schema)

    def get_by_id(self, schema_id: int) -> AvroSchema:
        return self._current().get_by_id(schema_id)

    def latest(self, subject: str) -> tuple[int, AvroSchema] | None:
        return self._current().latest(subject)

    def subjects(self) -> list[str]:
        return self._current().subjects()


class RegistryServer:
    def __init__(self, url: str, backend: SwappableRegistry) -> None:
        self.url, self.backend = url, backend


@pytest.fixture(scope="session")
def registry_server() -> Iterator[RegistryServer]:
    """uvicorn on 127.0.0.1 (a free port), serving the Starlette registry app."""
    backend = SwappableRegistry()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_schema_registry_app(backend), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "registry server did not start"
        time.sleep(0.01)
    yield RegistryServer(f"http://127.0.0.1:{port}", backend)
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def file_registry(tmp_path: Path) -> FileSchemaRegistry:
    return FileSchemaRegistry(tmp_path / "schemas")


@pytest.fixture
def http_registry(
    registry_server: RegistryServer, file_registry: FileSchemaRegistry
) -> Iterator[ConfluentHttpRegistry]:
    registry_server.backend.target = file_registry
    with ConfluentHttpRegistry(registry_server.url) as client:
        yield client
    registry_server.backend.target = None


@pytest.fixture(params=["file", "http"])
def registry(request: pytest.FixtureRequest) -> SchemaRegistry:
    """Every adapter of the port, for the contract suite."""
    adapter: SchemaRegistry = request.getfixturevalue(f"{request.param}_registry")
    return adapter


@pytest.fixture
def serde(file_registry: FileSchemaRegistry) -> EventSerde:
    return EventSerde(file_registry)
