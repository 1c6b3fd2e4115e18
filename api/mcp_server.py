"""The MCP server: the API's operations as tools, with seed 001's tool names.

Transports: stdio (``tribal mcp``) and streamable HTTP at ``/mcp`` in the Starlette
app (:func:`api.app.create_app`). Each tool is a service function: its input schema is
the fields of the function's request model, its output schema the answer model, its
description the function's docstring. Errors come back as the output with ``success:
false`` and an ``error`` (seed 001's AgentError), never as a protocol error, so an agent
can read and act on them.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin, get_type_hints

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, ValidationError, WithJsonSchema
from pydantic_core import PydanticUndefined

from api.auth import ANY_TENANT, tenant_from_headers
from api.schemas.knowledge import RetrieveResponse
from api.services import catalog, code, knowledge, memory
from api.services.context import ServiceContext
from api.services.errors import ServiceError
from events.problems import problem_of
from runtime.settings import TribalSettings

INSTRUCTIONS = (
    "Tribal knows this organisation's database schemas, source code, help-desk articles "
    "and conversation memory. Start with list_domains or search_tables to find tables, "
    "get_table_schema for columns, get_join_path for SQL joining two tables. Use "
    "retrieve_knowledge for customer-support questions, search_code for code, and "
    "search_memory/get_entity/add_memory for what was said in a conversation (group_id "
    "is 'tenant:session'). Every answer reports tokens_used and is cut to max_tokens "
    "(truncated: true); page with offset while has_more is true."
)

SERVICES: tuple[Callable[..., Awaitable[BaseModel]], ...] = (
    catalog.search_tables,
    catalog.get_table_schema,
    catalog.get_join_path,
    catalog.get_domain_overview,
    catalog.list_domains,
    knowledge.retrieve_knowledge,
    code.search_code,
    memory.search_memory,
    memory.get_entity,
    memory.add_memory,
)
"""The operations served as tools: seed 001's five first, then the others."""


class Tool(NamedTuple):
    """One tool: its service's name, request and answer models, and docstring."""

    name: str
    input: type[BaseModel]
    output: type[BaseModel]
    service: Any
    description: str


def tool_of(service: Callable[..., Awaitable[BaseModel]]) -> Tool:
    """The tool serving ``service(ctx, request, tenant)``, described by its docstring."""
    hints = get_type_hints(service)
    request = list(inspect.signature(service).parameters)[1]
    description = " ".join((service.__doc__ or "").split())
    return Tool(service.__name__, hints[request], hints["return"], service, description)


TOOLS = [tool_of(service) for service in SERVICES]


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/X"}`` replaced by ``X`` (models nest once)."""
    if isinstance(node, list):
        return [_inline(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline(defs[ref.removeprefix("#/$defs/")], defs)
    return {k: _inline(v, defs) for k, v in node.items()}


def _unannotated(tp: Any) -> Any:
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _sdk_type(annotation: Any) -> Any:
    """What the SDK checks before a tool runs: that text is a string (so it does not
    JSON-parse a query such as ``null``), nothing else. The tool's input model then
    checks everything, so a refusal is an AgentError (``INVALID_TEXT``, ...) in the
    tool's answer, as over HTTP, not a protocol error."""
    if annotation is str:
        return str
    args = {_unannotated(a) for a in get_args(annotation)}
    if get_origin(annotation) in (Union, types.UnionType) and args == {str, type(None)}:
        return str | None
    return Any


def _parameters(model: type[BaseModel]) -> tuple[list[inspect.Parameter], dict[str, Any]]:
    params, hints = [], {}
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    # Paging and budget fields (inherited) last: a reader sees the query first.
    names = sorted(model.model_fields, key=lambda n: n in ("offset", "max_tokens"))
    for name in names:
        field = model.model_fields[name]
        shown = _inline(schema["properties"][name], defs)  # limits stay visible to clients
        hint: Any = Annotated[_sdk_type(field.annotation), WithJsonSchema(shown)]
        if field.default is not PydanticUndefined:
            default = field.default
        elif field.default_factory is not None:
            default = field.default_factory()  # type: ignore[call-arg]
        else:
            default = inspect.Parameter.empty
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=hint))  # fmt: skip
        hints[name] = hint
    return params, hints


def _tool(
    name: str,
    model: type[BaseModel],
    output: type[BaseModel],
    service: Callable[[ServiceContext, Any, str], Awaitable[BaseModel]],
    context: Callable[[], ServiceContext],
    tenant_of: Callable[[Context], str | None],
) -> Callable[..., Awaitable[Any]]:
    async def call(ctx: Context, **kwargs: Any) -> Any:
        tenant = tenant_of(ctx)
        if tenant is None:
            err = ServiceError(401, "UNAUTHORIZED", "a valid bearer API key is required")
            return _failed(output, err)
        try:
            req = model.model_validate(kwargs)
            return await service(context(), req, tenant)
        except ValidationError as exc:
            problem = problem_of(exc)
            err = ServiceError(
                422, problem.code, problem.message, context={"problems": problem.problems}
            )
            return _failed(output, err)
        except ServiceError as exc:
            return _failed(output, exc)

    params, hints = _parameters(model)
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [ctx_param, *params], return_annotation=output
    )
    call.__annotations__ = {"ctx": Context, **hints, "return": output}
    call.__name__ = name
    return call


def _failed(output: type[BaseModel], exc: ServiceError) -> Any:
    if output is RetrieveResponse:  # seed 002: never an error, at most a named gap
        from api.schemas.knowledge import fallback

        return fallback(f"Invalid query: {exc.message}") if exc.status == 422 else fallback()
    return output.model_validate({"success": False, "error": exc.agent_error()})


def build_mcp(
    context: Callable[[], ServiceContext], stdio_tenant: str = ANY_TENANT
) -> MCPServer[Any]:
    """The MCP server over ``context()``; over HTTP the caller's key picks the tenant."""
    server: MCPServer[Any] = MCPServer(
        "tribal", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING"
    )

    def tenant_of(ctx: Context) -> str | None:
        headers = ctx.headers
        if headers is None:  # stdio: whoever started the process
            return stdio_tenant
        return tenant_from_headers(context().settings.api_keys, headers)

    for name, model, output, service, description in TOOLS:
        server.add_tool(
            _tool(name, model, output, service, context, tenant_of),
            name=name,
            description=description,
        )
    return server


async def serve_stdio(settings: TribalSettings, tenant: str = ANY_TENANT) -> None:
    """``tribal mcp``: the tools over stdin/stdout until the client closes them."""
    from api.services.open import open_services

    # Without a broker the read tools still serve; add_memory answers EVENT_LOG_UNAVAILABLE.
    async with open_services(settings, log_required=False) as ctx:
        await build_mcp(lambda: ctx, stdio_tenant=tenant).run_stdio_async()
