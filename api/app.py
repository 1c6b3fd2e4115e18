"""The Starlette application: the ``/v1`` API, MCP at ``/mcp``, health, metrics, OpenAPI,
and the schema registry."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from api.auth import ApiKeyMiddleware
from api.changes import change_routes
from api.errors import error_response
from api.memory import memory_routes
from api.middleware import ObservabilityMiddleware
from api.openapi import openapi_document
from api.routes import v1_routes
from api.schema_registry import (
    create_schema_registry_app,
    registry_not_allowed,
    registry_not_found,
)
from api.services.context import ServiceContext
from api.services.open import open_services
from events.registry import registry_from_settings
from projections.health import HealthBoard, stuck_stages
from projections.lag import projection_lags
from projections.offsets import stored_offsets
from runtime.observability.metrics import PROJECTION_LAG, STAGE_STUCK
from runtime.observability.progress import AGENT_SOURCES, ProgressTracker, group_progress
from runtime.settings import TribalSettings, get_settings
from runtime.topics import topic

VERSION = "0.1.0"
log = logging.getLogger(__name__)
LAG_GAUGE = PROJECTION_LAG


async def _tcp_ok(hostport: str, timeout: float = 0.5) -> bool:
    host, _, port = hostport.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout)
    except (OSError, TimeoutError, ValueError):
        return False
    writer.close()
    return True


def _dsn_address(dsn: str) -> str:
    """``host:port`` of a PostgreSQL URL (port 5432 when it names none)."""
    parts = urlsplit(dsn)
    return f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}"


async def _weaviate_ready(url: str, timeout: float = 1.0) -> bool:
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            return (await client.get(f"{url.rstrip('/')}/v1/.well-known/ready")).status_code == 200
    except httpx.HTTPError:
        return False


def create_app(
    settings: TribalSettings | None = None, context: ServiceContext | None = None
) -> Starlette:
    """The HTTP API for one set of settings.

    ``context`` supplies ready stores (tests, benchmarks); by default the lifespan opens
    them from the settings, preloading the query embedder in the background.
    """
    from api.mcp_server import build_mcp

    settings = settings or get_settings()
    started = time.time()
    tracker = ProgressTracker()
    registry = registry_from_settings(settings)
    state: dict[str, Any] = {"ctx": context or ServiceContext(settings)}

    def ctx() -> ServiceContext:
        current: ServiceContext = state["ctx"]
        return current

    mcp = build_mcp(ctx)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp", host=settings.api_host)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if context is None:
                load_model = bool(settings.postgres_dsn or settings.weaviate_url)
                state["ctx"] = await stack.enter_async_context(
                    open_services(settings, load_model=load_model)
                )
            if settings.postgres_dsn:
                state["health"] = board = HealthBoard(settings.postgres_dsn)
                stack.push_async_callback(board.close)
            # The MCP session manager's task group must live inside the app's lifespan.
            await stack.enter_async_context(mcp.session_manager.run())
            yield

    async def healthz(request: Request) -> JSONResponse:
        checks: dict[str, Any] = {}
        if settings.kafka_bootstrap:
            first = settings.kafka_bootstrap.split(",")[0]
            checks["kafka"] = "ok" if await _tcp_ok(first) else "unreachable"
        if settings.postgres_dsn:
            checks["postgres"] = (
                "ok" if await _tcp_ok(_dsn_address(settings.postgres_dsn)) else "unreachable"
            )
        if settings.weaviate_url:
            checks["index"] = (
                "ok" if await _weaviate_ready(settings.weaviate_url) else "unreachable"
            )
        elif settings.postgres_dsn:
            checks["index"] = checks["postgres"]  # pgvector lives in that database
        reachable = all(v == "ok" for v in checks.values())
        lags = await _lags()
        stuck = await _stuck()
        agents = await _agents()
        stuck += agents.pop("_stuck", [])
        stuck_names = {s["stage"] for s in stuck}
        body = {
            # A stuck stage leaves the API able to answer (200), but not healthy.
            "status": "ok" if reachable and not stuck else "degraded",
            "version": VERSION,
            "mode": settings.mode,
            "uptime_s": round(time.time() - started, 3),
            "checks": checks,
            "projections": {
                name: {"lag_messages": n, "status": "stuck" if name in stuck_names else "ok"}
                for name, n in lags.items()
            },
            "agents": agents,
            "stuck": stuck,
        }
        return JSONResponse(body, status_code=200 if reachable else 503)

    async def _agents() -> dict[str, Any]:
        """The agents' lag per source topic; a topic with work whose committed offsets
        have not moved for ``stuck_after_s`` (between two calls) is stuck."""
        if not settings.kafka_bootstrap:
            return {}
        try:
            progress = await asyncio.wait_for(group_progress(settings, list(AGENT_SOURCES)), 2.0)
        except Exception as exc:  # health must answer even when lag cannot be measured
            log.warning("cannot measure the agents' lag: %s", exc)
            return {}
        stalled = tracker.observe(progress)
        stuck: list[dict[str, Any]] = []
        out: dict[str, Any] = {}
        for short in AGENT_SOURCES:
            full = topic(short, settings)
            behind = sum(p.behind for (t, _), p in progress.items() if t == full)
            worst = next((s for s in stalled if s.topic == full), None)
            is_stuck = worst is not None and worst.seconds > settings.stuck_after_s
            out[short] = {"lag_messages": behind, "status": "stuck" if is_stuck else "ok"}
            STAGE_STUCK.labels(stage=f"agents:{short}").set(1 if is_stuck else 0)
            if is_stuck and worst is not None:
                stuck.append(
                    {
                        "stage": f"agents:{short}",
                        "topic": full,
                        "partition": worst.partition,
                        "offset": worst.offset,
                        "lag_messages": behind,
                        "stalled_s": round(worst.seconds, 1),
                        "last_error": "the agents' committed offset does not move: "
                        "see the worker's log",
                    }
                )
        out["_stuck"] = stuck
        return out

    async def _stuck() -> list[dict[str, Any]]:
        """Stages that have work and do not advance, from the runners' own reports."""
        board: HealthBoard | None = state.get("health")
        if board is None:
            return []
        try:
            reports = await asyncio.wait_for(board.read(), 2.0)
        except Exception as exc:  # the store is down: the stages cannot advance either
            log.warning("cannot read stage health: %s", exc)
            return [{"stage": "store", "stuck": True, "last_error": f"unreachable: {exc}"}]
        found = stuck_stages(reports, settings.stuck_after_s)
        names = {s["stage"] for s in found}
        for report in reports:
            STAGE_STUCK.labels(stage=report.stage).set(1 if report.stage in names else 0)
        return found

    async def _lags() -> dict[str, int]:
        """Each projection's lag, from the offsets it stored and the log's ends."""
        if not (settings.postgres_dsn and settings.kafka_bootstrap):
            return {}
        stored = stored_offsets(ctx().db, ctx().index)
        if not stored:
            return {}
        try:
            found = await asyncio.wait_for(projection_lags(settings, stored), 2.0)
        except Exception as exc:  # health must answer even when lag cannot be measured
            log.warning("cannot measure projection lag: %s", exc)
            return {}
        for lag in found:
            LAG_GAUGE.labels(projection=lag.name).set(lag.messages)
        return {lag.name: lag.messages for lag in found}

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document(VERSION))

    async def metrics(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        await _lags()
        await _stuck()
        await _agents()
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        *memory_routes(lambda: ctx().ingestor),
        *v1_routes(ctx),
        *change_routes(ctx),
        *mcp_app.routes,
        Mount("/schema-registry", app=create_schema_registry_app(registry)),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=ERROR_HANDLERS,
    )
    app.add_middleware(ApiKeyMiddleware, keys=settings.api_keys)
    app.add_middleware(ObservabilityMiddleware)
    return app


_REGISTRY = "/schema-registry"


async def _not_found(request: Request, exc: Exception) -> Response:
    """No route matches: an ``AgentError``, or the registry's shape under its mount (a
    subject holding a line break never reaches the mount, whose pattern stops at one)."""
    if request.url.path.startswith(_REGISTRY):
        return await registry_not_found(request, exc)
    return error_response(404, "NOT_FOUND", f"no such resource: {request.url.path}")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    if request.url.path.startswith(_REGISTRY):
        return await registry_not_allowed(request, exc)
    return error_response(405, "METHOD_NOT_ALLOWED", f"{request.method} is not allowed here")


ERROR_HANDLERS = {404: _not_found, 405: _not_allowed}
"""A path or method no route takes answers an ``AgentError``, never plain text."""
