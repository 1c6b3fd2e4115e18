"""JSON endpoints from pydantic models: parse, validate, call, answer — errors as AgentError."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api.errors import error_response
from api.services.errors import ServiceError
from events.limits import BODY_MAX_BYTES
from events.problems import problem_of

MAX_BODY_BYTES = BODY_MAX_BYTES

M = TypeVar("M", bound=BaseModel)


async def read_json(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, or a :class:`ServiceError`."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ServiceError(413, "PAYLOAD_TOO_LARGE", f"body over {MAX_BODY_BYTES} bytes")
    try:
        data = json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ServiceError(400, "INVALID_JSON", f"request body is not JSON: {exc}") from exc
    except RecursionError as exc:  # thousands of nested brackets
        raise ServiceError(400, "INVALID_JSON", "request body is nested too deeply") from exc
    if not isinstance(data, dict):
        raise ServiceError(400, "INVALID_REQUEST", "request body must be a JSON object")
    return data


def service_error(exc: ServiceError) -> Response:
    """``exc`` as the HTTP answer: its status and ``{"success": false, "error": ...}``."""
    return error_response(
        exc.status, exc.code, exc.message, recoverable=exc.recoverable, context=exc.context
    )


def invalid(exc: ValidationError) -> Response:
    """A 422 AgentError listing every problem; the first one gives the code and message
    (``INVALID_TEXT``, ``INVALID_GROUP_ID``, … see :mod:`events.problems`)."""
    problem = problem_of(exc)
    return error_response(
        422, problem.code, problem.message, context={"problems": problem.problems}
    )


def json_endpoint(
    model: type[M], status: int = 200
) -> Callable[[Callable[[Request, M], Awaitable[Any]]], Callable[[Request], Awaitable[Response]]]:
    """Turn ``async def f(request, body: model) -> dict | BaseModel`` into a route handler."""

    def wrap(
        fn: Callable[[Request, M], Awaitable[Any]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            try:
                data = (
                    await read_json(request)
                    if request.method != "GET"
                    else dict(request.query_params)
                )
                body = model.model_validate(data)
                result = await fn(request, body)
            except ValidationError as exc:
                return invalid(exc)
            except ServiceError as exc:
                return service_error(exc)
            if isinstance(result, Response):
                return result
            if isinstance(result, BaseModel):
                result = result.model_dump(mode="json")
            return JSONResponse(result, status_code=status)

        handler.__name__ = fn.__name__
        handler.__doc__ = fn.__doc__
        return handler

    return wrap
