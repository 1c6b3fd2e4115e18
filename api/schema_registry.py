"""The Confluent Schema Registry REST subset, served over any :class:`SchemaRegistry`.

Lets other processes (Faust workers, Kafka tools) share Tribal's embedded file
registry through ``ConfluentHttpRegistry`` or any Confluent client.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from events.limits import BODY_MAX_BYTES, SUBJECT_MAX
from events.registry.base import InvalidSchemaError, SchemaNotFoundError, SchemaRegistry
from events.registry.compat import IncompatibleSchemaError, check_backward_compatible
from events.schemas import default_contracts
from events.text import describe, find_control

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
# Error codes beyond Confluent's documented ones (42201 invalid schema, 409, 404xx) are
# Tribal's own, in the same status*100+n style.
INVALID_SUBJECT = 42208
TOO_LARGE = 41301


class _Reply(JSONResponse):
    media_type = CONTENT_TYPE


def _error(status: int, error_code: int, message: str) -> _Reply:
    # A message may quote the request (a record name holding a lone surrogate): such a
    # character cannot be UTF-8, so it is written as its escape instead of failing the reply.
    safe = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return _Reply({"error_code": error_code, "message": safe}, status_code=status)


def subject_problem(subject: str) -> str | None:
    """Why ``subject`` cannot name a subject (empty, too long, control characters), or None."""
    if not subject:
        return "Invalid subject: empty"
    if len(subject) > SUBJECT_MAX:
        return f"Invalid subject: {len(subject)} characters; at most {SUBJECT_MAX}"
    found = find_control(subject)
    if found is not None:
        return f"Invalid subject: control character {describe(found[1])} at index {found[0]}"
    return None


def check_readable_by_tribal(subject: str, schema: dict[str, Any]) -> None:
    """Refuse a schema under one of Tribal's record names that Tribal could not read.

    Subjects are ``{topic}-{record}``. When the record is one of Tribal's events, data
    written with ``schema`` must decode with Tribal's contract for it; otherwise a squatter
    (say, an unrelated record under the dead-letter subject) would make every later write
    of Tribal's own schema there "incompatible", and nothing could be dead-lettered.
    """
    contract = default_contracts().get(subject.rsplit("-", 1)[-1])
    if contract is None:
        return
    try:
        check_backward_compatible(schema, contract.schema)
    except IncompatibleSchemaError as exc:
        raise IncompatibleSchemaError(
            f"Tribal's contract for {contract.full_name} cannot read data written with it: {exc}"
        ) from exc


def schema_registry_routes(registry: SchemaRegistry) -> list[Route]:
    """Routes for ``/subjects``, ``/subjects/{s}/versions[/latest]`` and ``/schemas/ids/{id}``."""

    async def register(request: Request) -> _Reply:
        subject = request.path_params["subject"]
        problem = subject_problem(subject)
        if problem is not None:
            return _error(422, INVALID_SUBJECT, problem)
        raw = await request.body()
        if len(raw) > BODY_MAX_BYTES:
            return _error(413, TOO_LARGE, f"Schema too large: over {BODY_MAX_BYTES} bytes")
        try:
            body: dict[str, Any] = json.loads(raw)
            schema = json.loads(body["schema"])
        except (ValueError, KeyError, TypeError) as exc:
            return _error(422, 42201, f"Invalid schema: {exc}")
        except RecursionError:
            return _error(422, 42201, "Invalid schema: nested too deeply")
        if body.get("schemaType", "AVRO") != "AVRO" or not isinstance(schema, dict):
            return _error(422, 42201, "Invalid schema: only Avro record schemas are supported")
        try:
            check_readable_by_tribal(subject, schema)
            schema_id = await run_in_threadpool(registry.register, subject, schema)
        except IncompatibleSchemaError as exc:
            return _error(409, 409, f"Schema being registered is incompatible: {exc}")
        except InvalidSchemaError as exc:
            return _error(422, 42201, str(exc))
        return _Reply({"id": schema_id})

    async def by_id(request: Request) -> _Reply:
        schema_id = request.path_params["schema_id"]
        try:
            schema = await run_in_threadpool(registry.get_by_id, schema_id)
        except SchemaNotFoundError:
            return _error(404, 40403, f"Schema {schema_id} not found")
        return _Reply({"schema": json.dumps(schema)})

    async def latest(request: Request) -> _Reply:
        subject = request.path_params["subject"]
        found = await run_in_threadpool(registry.latest, subject)
        if found is None:
            return _error(404, 40401, f"Subject '{subject}' not found.")
        schema_id, schema = found
        return _Reply({"subject": subject, "id": schema_id, "schema": json.dumps(schema)})

    async def subjects(request: Request) -> _Reply:
        return _Reply(await run_in_threadpool(registry.subjects))

    return [
        Route("/subjects", subjects, methods=["GET"]),
        Route("/subjects/{subject}/versions", register, methods=["POST"]),
        Route("/subjects/{subject}/versions/latest", latest, methods=["GET"]),
        Route("/schemas/ids/{schema_id:int}", by_id, methods=["GET"]),
    ]


async def registry_not_found(request: Request, exc: Exception) -> Response:
    """A path no registry route matches (``/subjects//versions/latest``: an empty subject),
    in the registry's own error shape."""
    return _error(404, 40401, f"no such resource: {request.url.path}")


async def registry_not_allowed(request: Request, exc: Exception) -> Response:
    """A method a registry route does not take, in the registry's own error shape."""
    return _error(405, 40501, f"method {request.method} not allowed here")


def create_schema_registry_app(registry: SchemaRegistry) -> Starlette:
    """A standalone Starlette app serving ``registry`` (mount it or run it with uvicorn)."""
    return Starlette(
        routes=schema_registry_routes(registry),
        exception_handlers={404: registry_not_found, 405: registry_not_allowed},
    )
