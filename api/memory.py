"""``POST /v1/memory/turns``, ``/v1/memory/events`` and ``/v1/memory/forget``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from api.errors import error_response
from events.sources.turns import IngestionError, MemoryIngestor, Session, Turn

MAX_BODY_BYTES = 1024 * 1024


class TurnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str
    user_message: str = Field(min_length=1)
    agent_response: str = ""
    turn_id: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


class EventRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str
    event_type: str = Field(min_length=1)
    content: str = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str | None = None
    tenant: str | None = None
    reason: str | None = None


async def _body(request: Request) -> dict[str, Any] | Response:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        return error_response(413, "PAYLOAD_TOO_LARGE", f"body over {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return error_response(400, "INVALID_JSON", f"request body is not JSON: {exc}")
    if not isinstance(data, dict):
        return error_response(400, "INVALID_REQUEST", "request body must be a JSON object")
    return data


def _invalid(exc: ValidationError) -> Response:
    problems = [
        {"field": ".".join(str(p) for p in e["loc"]), "problem": e["msg"]} for e in exc.errors()
    ]
    first = problems[0]
    return error_response(
        422,
        "INVALID_REQUEST",
        f"{first['field']}: {first['problem']}",
        context={"problems": problems},
    )


def memory_routes(ingestor: Callable[[], MemoryIngestor | None]) -> list[Route]:
    """Routes over whatever ingestor the app has (None while Kafka is unavailable)."""

    def unavailable() -> Response:
        return error_response(
            503, "EVENT_LOG_UNAVAILABLE", "no Kafka broker is configured", recoverable=True
        )

    async def post_turn(request: Request) -> Response:
        data = await _body(request)
        if isinstance(data, Response):
            return data
        try:
            req = TurnRequest.model_validate(data)
            tenant, _, session_id = req.group_id.partition(":")
            turn = Turn(
                user_message=req.user_message,
                agent_response=req.agent_response,
                turn_id=req.turn_id,
                metadata=req.metadata,
            )
        except ValidationError as exc:
            return _invalid(exc)
        ing = ingestor()
        if ing is None:
            return unavailable()
        t0 = time.perf_counter()
        try:
            receipt = await ing.ingest_turn(turn, Session(tenant_id=tenant, id=session_id))
        except IngestionError as exc:
            return error_response(422, exc.code, exc.message)
        return _accepted(receipt.model_dump(mode="json"), t0)

    async def post_event(request: Request) -> Response:
        data = await _body(request)
        if isinstance(data, Response):
            return data
        try:
            req = EventRequest.model_validate(data)
        except ValidationError as exc:
            return _invalid(exc)
        ing = ingestor()
        if ing is None:
            return unavailable()
        t0 = time.perf_counter()
        try:
            receipt = await ing.ingest_event(
                req.event_type, req.content, req.group_id, req.metadata
            )
        except IngestionError as exc:
            return error_response(422, exc.code, exc.message)
        return _accepted(receipt.model_dump(mode="json"), t0)

    async def post_forget(request: Request) -> Response:
        data = await _body(request)
        if isinstance(data, Response):
            return data
        try:
            req = ForgetRequest.model_validate(data)
        except ValidationError as exc:
            return _invalid(exc)
        if (req.group_id is None) == (req.tenant is None):
            return error_response(422, "INVALID_REQUEST", "give exactly one of group_id, tenant")
        ing = ingestor()
        if ing is None:
            return unavailable()
        t0 = time.perf_counter()
        try:
            if req.group_id is not None:
                event_id = await ing.forget_group(req.group_id, req.reason)
            else:
                event_id = await ing.forget_tenant(req.tenant or "", req.reason)
        except IngestionError as exc:
            return error_response(422, exc.code, exc.message)
        return _accepted({"event_id": str(event_id)}, t0)

    return [
        Route("/v1/memory/turns", post_turn, methods=["POST"]),
        Route("/v1/memory/events", post_event, methods=["POST"]),
        Route("/v1/memory/forget", post_forget, methods=["POST"]),
    ]


def _accepted(body: dict[str, Any], t0: float) -> JSONResponse:
    body = {"success": True, **body, "latency_ms": round((time.perf_counter() - t0) * 1000, 3)}
    return JSONResponse(body, status_code=202)
