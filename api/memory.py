"""``POST /v1/memory/turns``, ``/v1/memory/import``, ``/v1/memory/events`` and
``/v1/memory/forget``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from api.endpoint import json_endpoint
from api.errors import error_response
from api.services.errors import ServiceError
from events.limits import (
    EVENT_TYPE_MAX,
    GROUP_ID_MAX,
    IMPORT_TURNS_MAX,
    MESSAGE_MAX,
    REASON_MAX,
    SPEAKER_MAX,
    TENANT_MAX,
    TURN_ID_MAX,
)
from events.problems import problem_of
from events.text import CleanText
from events.types import (
    GROUP_ID_PATTERN,
    TENANT_PATTERN,
    Metadata,
    check_metadata,
    metadata_json_schema,
)
from sources.turns import (
    BatchIngestionError,
    IngestionError,
    MemoryIngestor,
    Session,
    Turn,
    turn_problem,
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


OCCURRED_AT = Field(
    default=None,
    description="When it happened (ISO 8601 with a timezone; default: now). Give the past "
    "for an import or a late turn: episodes, facts and summaries keep this time.",
)


class TurnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str = _group_id()
    user_message: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    agent_response: CleanText = Field(default="", max_length=MESSAGE_MAX)
    turn_id: CleanText | None = Field(default=None, max_length=TURN_ID_MAX, description="A UUID.")
    metadata: Metadata = Field(default_factory=dict)
    speaker: CleanText | None = Field(
        default=None, min_length=1, max_length=SPEAKER_MAX,
        description="Who said user_message, in their own name (default: the user).",
    )  # fmt: skip
    occurred_at: AwareDatetime | None = OCCURRED_AT

    def turn(self) -> Turn:
        return Turn.model_validate(
            {
                "user_message": self.user_message,
                "agent_response": self.agent_response,
                "turn_id": self.turn_id,
                "metadata": self.metadata,
                "speaker": self.speaker,
                "occurred_at": self.occurred_at,
            }
        )

    def session(self) -> Session:
        tenant, _, session_id = self.group_id.partition(":")
        return Session(tenant_id=tenant, id=session_id)


class ImportRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: list[TurnRequest] = Field(
        min_length=1,
        max_length=IMPORT_TURNS_MAX,
        description="Past turns, of any groups of the caller's tenant, in any order.",
    )


AGENT_ROLES = ("assistant", "agent")


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    speaker: CleanText | None = Field(
        default=None, min_length=1, max_length=SPEAKER_MAX, description="Who said it, by name."
    )
    role: Literal["user", "assistant", "agent"] | None = Field(
        default=None,
        description="'user' (the default) or the agent's side ('assistant', 'agent'); a "
        "message of the agent's side answers the message before it.",
    )
    occurred_at: AwareDatetime | None = OCCURRED_AT


class MessagesRequest(BaseModel):
    """A conversation as a list of messages, each with its speaker or role: a message
    from a person is a turn (said by its ``speaker``), and the agent's message after it
    is that turn's ``agent_response``."""

    model_config = ConfigDict(extra="forbid")

    group_id: str = _group_id()
    messages: list[Message] = Field(min_length=1, max_length=IMPORT_TURNS_MAX)
    metadata: Metadata = Field(default_factory=dict)
    occurred_at: AwareDatetime | None = OCCURRED_AT

    def turns(self) -> list[tuple[int, TurnRequest]]:
        """(index of the message it starts at, turn) per turn, in the order said."""
        out: list[tuple[int, TurnRequest]] = []
        answered = True
        for i, m in enumerate(self.messages):
            when = m.occurred_at or self.occurred_at
            if m.role in AGENT_ROLES and not answered:
                out[-1] = (out[-1][0], out[-1][1].model_copy(update={"agent_response": m.content}))
                answered = True
                continue
            speaker = m.speaker or ("Agent" if m.role in AGENT_ROLES else None)
            turn = TurnRequest(
                group_id=self.group_id, user_message=m.content, speaker=speaker,
                metadata=self.metadata, occurred_at=when,
            )  # fmt: skip
            out.append((i, turn))
            answered = m.role in AGENT_ROLES
        return out


class EventRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    group_id: str = _group_id()
    event_type: CleanText = Field(min_length=1, max_length=EVENT_TYPE_MAX)
    content: CleanText = Field(min_length=1, max_length=MESSAGE_MAX)
    metadata: AnyMetadata = Field(
        default_factory=dict, description="Values that are not strings are stored as str(value)."
    )
    occurred_at: AwareDatetime | None = OCCURRED_AT


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
            raise ServiceError(403, "FORBIDDEN", f"this API key may not write tenant {tenant!r}")

    def require() -> MemoryIngestor:
        ing = ingestor()
        if ing is None:
            raise ServiceError(
                503, "EVENT_LOG_UNAVAILABLE", "no Kafka broker is configured", recoverable=True
            )
        return ing

    async def timed(action: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        try:
            result = await action
        except IngestionError as exc:
            raise ServiceError(422, exc.code, exc.message) from exc
        body = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        return {"success": True, **body, "latency_ms": round((time.perf_counter() - t0) * 1000, 3)}

    @json_endpoint(TurnRequest, status=202)
    async def post_turn(request: Request, req: TurnRequest) -> dict[str, Any]:
        own(request, req.group_id.partition(":")[0])
        return await timed(require().ingest_turn(req.turn(), req.session()))

    async def record_all(
        request: Request, numbered: list[tuple[str, TurnRequest]]
    ) -> dict[str, Any] | Response:
        """Turns at once, each named by where it came from: all recorded, or none (every
        problem listed under its name)."""
        for tenant in sorted({t.group_id.partition(":")[0] for _, t in numbered}):
            own(request, tenant)
        ing = require()
        t0 = time.perf_counter()
        turns: list[tuple[Turn, Session]] = []
        refused: list[tuple[int, IngestionError]] = []
        for i, (_, t) in enumerate(numbered):
            try:
                turn, session = t.turn(), t.session()
            except ValidationError as exc:
                problem = problem_of(exc)
                refused.append((i, IngestionError(problem.code, problem.message)))
                continue
            wrong = turn_problem(turn, session)
            if wrong is not None:
                refused.append((i, wrong))
            turns.append((turn, session))
        try:
            if refused:
                raise BatchIngestionError(refused)
            receipts = await ing.ingest_turns(turns)
        except BatchIngestionError as exc:
            named = [(numbered[i][0], p) for i, p in exc.problems]
            (first, refusal), more = named[0], len(named) - 1
            message = f"{first}: {refusal.message}" + (f" (and {more} more)" if more else "")
            problems = [{"field": name, "code": p.code, "problem": p.message} for name, p in named]
            return error_response(422, exc.code, message, context={"problems": problems})
        return {
            "success": True,
            "accepted": len(receipts),
            "receipts": [r.model_dump(mode="json", exclude_none=True) for r in receipts],
            "latency_ms": round((time.perf_counter() - t0) * 1000, 3),
        }

    @json_endpoint(ImportRequest, status=202)
    async def post_import(request: Request, req: ImportRequest) -> dict[str, Any] | Response:
        """A history's turns at once: all recorded, or none (every problem listed)."""
        return await record_all(request, [(f"turns.{i}", t) for i, t in enumerate(req.turns)])

    @json_endpoint(MessagesRequest, status=202)
    async def post_messages(request: Request, req: MessagesRequest) -> dict[str, Any] | Response:
        """A conversation's messages as turns: all recorded, or none."""
        return await record_all(request, [(f"messages.{i}", t) for i, t in req.turns()])

    @json_endpoint(EventRequest, status=202)
    async def post_event(request: Request, req: EventRequest) -> dict[str, Any]:
        own(request, req.group_id.partition(":")[0])
        return await timed(
            require().ingest_event(
                req.event_type, req.content, req.group_id, req.metadata, req.occurred_at
            )
        )

    @json_endpoint(ForgetRequest, status=202)
    async def post_forget(request: Request, req: ForgetRequest) -> dict[str, Any]:
        if (req.group_id is None) == (req.tenant is None):
            raise ServiceError(422, "INVALID_REQUEST", "give exactly one of group_id, tenant")
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
        Route("/v1/memory/import", post_import, methods=["POST"]),
        Route("/v1/memory/messages", post_messages, methods=["POST"]),
        Route("/v1/memory/events", post_event, methods=["POST"]),
        Route("/v1/memory/forget", post_forget, methods=["POST"]),
    ]
