"""The ``/v1`` read endpoints: one :class:`Operation` per service function.

The same table drives routing and the generated OpenAPI document (:mod:`api.openapi`).
GET operations read their input model from the query string and path; POST ones
from the JSON body.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from api.auth import ANY_TENANT
from api.endpoint import invalid, read_json, service_error
from api.errors import error_response
from api.schemas import catalog as c
from api.schemas import code as k
from api.schemas import memory as m
from api.schemas.knowledge import RetrieveRequest, fallback
from api.services import catalog, code, knowledge, memory
from api.services.context import ServiceContext
from api.services.errors import ServiceError
from events.problems import problem_of

log = logging.getLogger(__name__)
Service = Callable[[ServiceContext, Any, str], Awaitable[BaseModel]]


@dataclass(frozen=True)
class Operation:
    path: str
    method: str
    input: type[BaseModel]
    output: type[BaseModel]
    service: Service
    summary: str
    path_params: dict[str, str] | None = None
    """URL parameter → input field."""


OPERATIONS = [
    Operation("/v1/tables/search", "GET", c.SearchTablesInput, c.SearchTablesOutput,
              catalog.search_tables, "Search tables by a natural-language query (search_tables)"),
    Operation("/v1/tables/{fqn:path}", "GET", c.GetTableSchemaInput, c.GetTableSchemaOutput,
              catalog.get_table_schema, "One table's columns, keys and relations "
              "(get_table_schema)", {"fqn": "table"}),
    Operation("/v1/join-path", "GET", c.GetJoinPathInput, c.GetJoinPathOutput,
              catalog.get_join_path, "Shortest foreign-key path and SQL (get_join_path)"),
    Operation("/v1/domains", "GET", c.ListDomainsInput, c.ListDomainsOutput,
              catalog.list_domains, "Business domains (list_domains)"),
    Operation("/v1/domains/{name}", "GET", c.GetDomainOverviewInput, c.GetDomainOverviewOutput,
              catalog.get_domain_overview, "One domain's overview (get_domain_overview)",
              {"name": "domain"}),
    Operation("/v1/code/search", "GET", k.SearchCodeInput, k.SearchCodeOutput,
              code.search_code, "Search code symbols (search_code)"),
    Operation("/v1/memory/search", "GET", m.SearchMemoryInput, m.SearchMemoryOutput,
              memory.search_memory, "Facts and episodes of a group at a point in time "
              "(search_memory)"),
    Operation("/v1/memory/entities/{id}", "GET", m.GetEntityInput, m.GetEntityOutput,
              memory.get_entity, "An entity with its history (get_entity)", {"id": "entity_id"}),
]  # fmt: skip

STORE_ERRORS: tuple[type[BaseException], ...] = (OSError, ConnectionError)
try:  # asyncpg is a core dependency; its errors mean the store is down
    import asyncpg

    STORE_ERRORS = (*STORE_ERRORS, asyncpg.PostgresError, asyncpg.InterfaceError)
except ImportError:  # pragma: no cover
    pass


def tenant_of(request: Request) -> str:
    tenant = request.scope.get("state", {}).get("tenant")
    return tenant if isinstance(tenant, str) else ANY_TENANT


async def run_service(
    op: Operation, ctx: ServiceContext, data: dict[str, Any], tenant: str
) -> Response:
    """Validate, call, answer: 200 with the output model, or an AgentError body."""
    try:
        req = op.input.model_validate(data)
    except ValidationError as exc:
        return invalid(exc)
    try:
        out = await op.service(ctx, req, tenant)
    except ServiceError as exc:
        return service_error(exc)
    except STORE_ERRORS as exc:
        log.warning("%s: store unavailable: %s", op.path, exc)
        return error_response(
            503, "STORE_UNAVAILABLE", str(exc) or type(exc).__name__, recoverable=True
        )
    return JSONResponse(out.model_dump(mode="json", by_alias=True))


def _endpoint(op: Operation, ctx: Callable[[], ServiceContext]) -> Callable[..., Any]:
    async def handler(request: Request) -> Response:
        try:
            data: dict[str, Any] = (
                dict(request.query_params) if op.method == "GET" else await read_json(request)
            )
        except ServiceError as exc:
            return service_error(exc)
        for param, field in (op.path_params or {}).items():
            data[field] = request.path_params[param]
        return await run_service(op, ctx(), data, tenant_of(request))

    handler.__name__ = op.service.__name__
    return handler


def v1_routes(ctx: Callable[[], ServiceContext]) -> list[Route]:
    """Every read operation, plus ``POST /v1/retrieve`` (which never answers an error)."""

    async def retrieve(request: Request) -> Response:
        try:
            req = RetrieveRequest.model_validate(await read_json(request))
        except (ServiceError, ValidationError) as exc:  # seed 002: invalid query → 200 degraded
            problem = exc.message if isinstance(exc, ServiceError) else problem_of(exc).message
            out = fallback(f"Invalid query: {problem}", why="invalid_query")
        else:
            out = await knowledge.retrieve_knowledge(ctx(), req, tenant_of(request))
        headers = (
            {"X-Tribal-Fallback": out.fallback_reason, "X-Tribal-Waited-Ms": str(out.waited_ms)}
            if out.fallback_reason
            else None
        )
        return JSONResponse(out.model_dump(mode="json"), headers=headers)

    return [
        Route("/v1/retrieve", retrieve, methods=["POST"]),
        *(Route(op.path, _endpoint(op, ctx), methods=[op.method]) for op in OPERATIONS),
    ]
