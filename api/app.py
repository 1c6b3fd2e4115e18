"""The Starlette application: health, metrics, OpenAPI, and the schema registry."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import Gauge
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from api.memory import memory_routes
from api.schema_registry import create_schema_registry_app
from events.registry import registry_from_settings
from events.serde import EventSerde
from events.sources.sink import KafkaSink
from events.sources.turns import MemoryIngestor
from projections.lag import projection_lags
from projections.registry import projections_for
from streams.settings import TribalSettings, get_settings

VERSION = "0.1.0"
log = logging.getLogger(__name__)
LAG_GAUGE = Gauge(
    "tribal_projection_lag_messages", "Messages a projection has yet to apply", ["projection"]
)


async def _tcp_ok(hostport: str, timeout: float = 0.5) -> bool:
    host, _, port = hostport.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout)
    except (OSError, TimeoutError, ValueError):
        return False
    writer.close()
    return True


def create_app(settings: TribalSettings | None = None) -> Starlette:
    """The HTTP API for one set of settings."""
    settings = settings or get_settings()
    started = time.time()
    registry = registry_from_settings(settings)
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        sink: KafkaSink | None = None
        if settings.kafka_bootstrap:
            # linger 0: a caller waits for its ack; concurrent calls still share batches
            sink = KafkaSink(
                settings.kafka_bootstrap, EventSerde(registry), settings.topic_prefix, linger_ms=0
            )
            await sink.start()
            state["ingestor"] = MemoryIngestor(sink)
        lagged: list[Any] = []
        if settings.postgres_dsn and settings.kafka_bootstrap:
            try:
                for projection in projections_for(settings):
                    await projection.setup()
                    lagged.append(projection)
            except Exception as exc:  # the API serves without lag figures
                log.warning("projection lag unavailable: %s", exc)
        state["projections"] = lagged
        try:
            yield
        finally:
            state.pop("ingestor", None)
            if sink is not None:
                await sink.stop()
            for projection in lagged:
                await projection.close()

    async def healthz(request: Request) -> JSONResponse:
        checks: dict[str, Any] = {}
        if settings.kafka_bootstrap:
            first = settings.kafka_bootstrap.split(",")[0]
            checks["kafka"] = "ok" if await _tcp_ok(first) else "unreachable"
        ok = all(v == "ok" for v in checks.values())
        lags = await _lags()
        body = {
            "status": "ok" if ok else "degraded",
            "version": VERSION,
            "mode": settings.mode,
            "uptime_s": round(time.time() - started, 3),
            "checks": checks,
            "projections": {name: {"lag_messages": n} for name, n in lags.items()},
        }
        return JSONResponse(body, status_code=200 if ok else 503)

    async def _lags() -> dict[str, int]:
        projections = state.get("projections") or []
        if not projections:
            return {}
        try:
            found = await asyncio.wait_for(projection_lags(settings, projections), 2.0)
        except Exception as exc:  # health must answer even when lag cannot be measured
            log.warning("cannot measure projection lag: %s", exc)
            return {}
        for lag in found:
            LAG_GAUGE.labels(projection=lag.name).set(lag.messages)
        return {lag.name: lag.messages for lag in found}

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document())

    async def metrics(request: Request) -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        await _lags()
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        *memory_routes(lambda: state.get("ingestor")),
        Mount("/schema-registry", app=create_schema_registry_app(registry)),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 description, with request bodies from the pydantic models."""
    from api.errors import AgentError
    from api.memory import EventRequest, ForgetRequest, TurnRequest

    error = {"$ref": "#/components/schemas/AgentError"}

    def post(summary: str, model: type[Any]) -> dict[str, Any]:
        return {
            "post": {
                "summary": summary,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"$ref": f"#/components/schemas/{model.__name__}"}
                        }
                    },
                },
                "responses": {
                    "202": {"description": "Accepted: durable in Kafka"},
                    "4XX": {"description": "Invalid request (AgentError)"},
                    "503": {"description": "Event log unavailable (AgentError)"},
                },
            }
        }

    schemas = {
        m.__name__: m.model_json_schema() for m in (TurnRequest, EventRequest, ForgetRequest)
    }
    schemas["AgentError"] = AgentError.model_json_schema()
    return {
        "openapi": "3.1.0",
        "info": {"title": "Tribal", "version": VERSION},
        "paths": {
            "/healthz": {
                "get": {
                    "summary": "Liveness and dependency checks",
                    "responses": {
                        "200": {"description": "All dependencies reachable"},
                        "503": {"description": "A dependency is unreachable"},
                    },
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Prometheus metrics",
                    "responses": {"200": {"description": "text exposition format"}},
                }
            },
            "/v1/memory/turns": post(
                "Record a conversation turn (seed 003 ingest_turn)", TurnRequest
            ),
            "/v1/memory/events": post(
                "Record a system event (seed 003 ingest_event)", EventRequest
            ),
            "/v1/memory/forget": post("Forget a group_id or a whole tenant", ForgetRequest),
        },
        "components": {"schemas": schemas, "x-error": error},
    }
