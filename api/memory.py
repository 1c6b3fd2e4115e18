"""``POST /v1/memory/turns``, ``/v1/memory/events`` and ``/v1/memory/forget``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.routing import Route

from api.endpoint import ApiError, json_endpoint
from events.limits import (
    EVENT_TYPE_MAX,
    GROUP_ID_MAX,
    MESSAGE_MAX,
    REASON_MAX,
    TENANT_MAX,
    TURN_ID_MAX,
)
from events.sources.turns import IngestionError, MemoryIngestor, Session, Turn
from events.text import CleanText
from events.types import (
    GROUP_ID_PATTERN,
    TENANT_PATTERN,
    Metadata,
    check_metadata,
    metadata_json_schema,
)


def _group_id(**default: Any) -> Any:
    # Only the length is checked here: the shape is checked by the ingestor, after the
    # caller's right to write that tenant (403 before 422); the schema shows both.
    return Field(
        **default,
        max_length=GROUP_ID_MAX,
        description="'{tenant_id}:{session_id}'",
        json_schema_extra={"pattern": f"^{GROUP_ID_PATTERN}$"},
    )


AnyMetadata = Annotated[
    dict[str, Any], AfterValidator(check_metadata), metadata_json_schema({})
]  # fmt: skip


class TurnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str = _group_id()
    user_message: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    agent_response: CleanText = Field(default="", max_length=MESSAGE_MAX)
    turn_id: CleanText | None = Field(default=None, max_length=TURN_ID_MAX, description="A UUID.")
    metadata: Metadata = Field(default_factory=dict)


class EventRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str = _group_id()
    event_type: CleanText = Field(min_length=1, max_length=EVENT_TYPE_MAX)
    content: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    metadata: AnyMetadata = Field(
        default_factory=dict, description="Values that are not strings are stored as str(value)."
    )


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str | None = _group_id(default=None)
    tenant: str | None = Field(
        default=None,
        max_length=TENANT_MAX,
        json_schema_extra={"pattern": f"^{TENANT_PATTERN}$"},
    )
    reason: CleanText | None = Field(default=None, max_length=REASON_MAX)


def memory_routes(ingestor: Callable[[], MemoryIngestor | None]) -> list[Route]:
    """Routes over whatever ingestor the app has (None while Kafka is unavailable)."""

    def own(request: Request, tenant: str) -> None:
        """A key writes only its own tenant's memory (``default`` without keys)."""
        caller = request.scope.get("state", {}).get("tenant", "*")
        if caller not in ("*", tenant):  # "*": no API keys configured (loopback only)
            raise ApiError(403, "FORBIDDEN", f"this API key may not write tenant {tenant!r}")

    def require() -> MemoryIngestor:
        ing = ingestor()
        if ing is None:
            raise ApiError(
                503, "EVENT_LOG_UNAVAILABLE", "no Kafka broker is configured", recoverable=True
            )
        return ing

    async def timed(action: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        try:
            result = await action
        except IngestionError as exc:
            raise ApiError(422, exc.code, exc.message) from exc
        body = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        return {"success": True, **body, "latency_ms": round((time.perf_counter() - t0) * 1000, 3)}

    @json_endpoint(TurnRequest, status=202)
    async def post_turn(request: Request, req: TurnRequest) -> dict[str, Any]:
        tenant, _, session_id = req.group_id.partition(":")
        own(request, tenant)
        turn = Turn.model_validate(
            {
                "user_message": req.user_message,
                "agent_response": req.agent_response,
                "turn_id": req.turn_id,
                "metadata": req.metadata,
            }
        )
        session = Session(tenant_id=tenant, id=session_id)
        return await timed(require().ingest_turn(turn, session))

    @json_endpoint(EventRequest, status=202)
    async def post_event(request: Request, req: EventRequest) -> dict[str, Any]:
        own(request, req.group_id.partition(":")[0])
        return await timed(
            require().ingest_event(req.event_type, req.content, req.group_id, req.metadata)
        )

    @json_endpoint(ForgetRequest, status=202)
    async def post_forget(request: Request, req: ForgetRequest) -> dict[str, Any]:
        if (req.group_id is None) == (req.tenant is None):
            raise ApiError(422, "INVALID_REQUEST", "give exactly one of group_id, tenant")
        own(
            request,
            req.tenant if req.tenant is not None else (req.group_id or "").partition(":")[0],
        )
        ing = require()

        async def forget() -> dict[str, Any]:
            if req.group_id is not None:
                return {"event_id": str(await ing.forget_group(req.group_id, req.reason))}
            return {"event_id": str(await ing.forget_tenant(req.tenant or "", req.reason))}

        return await timed(forget())

    return [
        Route("/v1/memory/turns", post_turn, methods=["POST"]),
        Route("/v1/memory/events", post_event, methods=["POST"]),
        Route("/v1/memory/forget", post_forget, methods=["POST"]),
    ]
