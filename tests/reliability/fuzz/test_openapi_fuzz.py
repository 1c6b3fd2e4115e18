"""Schemathesis against the app's own ``/openapi.json``: every operation, requests that
follow the document and requests that break it, answered 2xx or 4xx with an AgentError.

The app is the real route table (``/v1`` reads and retrieve, the memory writes, the
OpenAPI document the API serves) over real stores: a fresh PostgreSQL database holding the
catalog, the graph and the pgvector index, set up as the projections set them up. Memory
writes go to an in-memory sink, so nothing needs a broker. (The live API, MCP included, is
fuzzed the same way in ``test_pipeline.py``.)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis.errors import Unsatisfiable
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from api.app import ERROR_HANDLERS, VERSION
from api.memory import memory_routes
from api.openapi import openapi_document
from api.routes import v1_routes
from api.services.context import ServiceContext, close_context, open_context
from devstack.fuzz.answers import agent_error
from projections.registry import projections_for
from runtime.databases import temporary_database
from runtime.settings import TribalSettings
from sources.sink import MemorySink
from sources.turns import MemoryIngestor
from tests.reliability.fuzz.profile import OPENAPI

schemathesis = pytest.importorskip("schemathesis")

NEVER_ENDING = ("/v1/memory/changes",)  # server-sent events: a stream, not an answer
APP_ONLY = ("/healthz", "/metrics")  # api.app's own routes: fuzzed live in test_pipeline.py


@pytest.fixture(scope="module")
async def store(postgres_dsn: str) -> AsyncIterator[str]:
    """A fresh database with every read store's tables, empty."""
    async with temporary_database(postgres_dsn, "fuzz_openapi") as dsn:
        for projection in projections_for(TribalSettings(postgres_dsn=dsn, weaviate_url="")):
            await projection.setup()
            await projection.close()
        yield dsn


def fuzzed_app(settings: TribalSettings, sink: MemorySink) -> Starlette:
    state: dict[str, ServiceContext] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # Opened on the loop that serves the requests (asyncpg pools belong to one loop).
        state["ctx"] = await open_context(settings, load_model=False)
        state["ctx"].ingestor = MemoryIngestor(sink)
        yield
        await close_context(state["ctx"])

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(VERSION))

    routes = [
        Route("/openapi.json", openapi, methods=["GET"]),
        *memory_routes(lambda: state["ctx"].ingestor),
        *v1_routes(lambda: state["ctx"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=ERROR_HANDLERS)


@pytest.fixture(scope="module")
def schema(store: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir: Path = tmp_path_factory.mktemp("fuzz-openapi")
    settings = TribalSettings(
        kafka_bootstrap="",
        postgres_dsn=store,
        weaviate_url="",
        data_dir=data_dir,
        api_answer_cache_s=0,
    )
    app = fuzzed_app(settings, MemorySink())
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app)
    for path in (*NEVER_ENDING, *APP_ONLY):
        loaded = loaded.exclude(path=path)
    return loaded


def problem(method: str, path: str, status: int, body: Any) -> str | None:
    """What is wrong with an answer, by the property of the suite, or None."""
    if status >= 500:
        return f"{status}"
    if path == "/v1/retrieve":
        ok = status == 200 and isinstance(body, dict) and "coverage" in body
        return None if ok else f"{status}: not seed 002's answer"
    if 400 <= status < 500 and agent_error(body) is None:
        return f"{status} without an AgentError"
    return None


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_every_operation_answers_2xx_or_a_4xx_agent_error_never_a_server_error(
    schema: Any, mode: str
) -> None:
    found: list[str] = []
    tried = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @OPENAPI
        @given(case=operation.as_strategy(generation_mode=schemathesis.GenerationMode(mode)))
        def check(case: Any) -> None:
            response = case.call(timeout=30)
            try:
                body: Any = response.json()
            except ValueError:
                body = response.text[:200]
            wrong = problem(case.method, case.operation.path, response.status_code, body)
            assert wrong is None, (
                f"{case.method} {case.formatted_path} -> {wrong}: {str(body)[:200]}"
            )

        try:
            check()
        except Unsatisfiable:  # no request can break this operation's document this way
            continue
        except AssertionError as exc:  # every operation is tried; all failures are reported
            found.append(str(exc).splitlines()[0])
        tried += 1
    assert tried >= 8
    assert found == [], "\n".join(found)
