"""The OpenAPI 3.1 document, generated from the pydantic models of every operation."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from api.errors import AgentError
from api.memory import EventRequest, ForgetRequest, ImportRequest, MessagesRequest, TurnRequest
from api.routes import OPERATIONS
from api.schemas.knowledge import RetrieveRequest, RetrieveResponse

REF = "#/components/schemas/{model}"


class ErrorBody(BaseModel):
    """Every error: ``{"success": false, "error": AgentError}``."""

    success: bool = False
    error: AgentError


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


_ERRORS = {
    "401": {"description": "Missing or unknown API key", "content": _json(_ref(ErrorBody))},
    "403": {"description": "Another tenant's data", "content": _json(_ref(ErrorBody))},
    "404": {"description": "Not found", "content": _json(_ref(ErrorBody))},
    "413": {"description": "Body too large", "content": _json(_ref(ErrorBody))},
    "422": {"description": "Invalid request", "content": _json(_ref(ErrorBody))},
    "503": {"description": "A store is unavailable", "content": _json(_ref(ErrorBody))},
}


def _parameters(model: type[BaseModel], path_params: dict[str, str]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template=REF)
    required = set(schema.get("required", ()))
    in_path = {field: param for param, field in path_params.items()}
    out = []
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        where = "path" if name in in_path else "query"
        out.append(
            {
                "name": in_path.get(name, name),
                "in": where,
                "required": where == "path" or name in required,
                "description": prop.pop("description", ""),
                "schema": prop,
            }
        )
    return out


def openapi_document(version: str) -> dict[str, Any]:
    """OpenAPI 3.1: paths from :data:`api.routes.OPERATIONS`, schemas from their models."""
    models: list[type[BaseModel]] = [ErrorBody, RetrieveRequest, RetrieveResponse,
                                     TurnRequest, ImportRequest, MessagesRequest,
                                     EventRequest, ForgetRequest]  # fmt: skip
    paths: dict[str, Any] = {}
    for op in OPERATIONS:
        models += [op.output] if op.method == "GET" else [op.input, op.output]
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", op.path)
        spec: dict[str, Any] = {
            "operationId": op.service.__name__,
            "summary": op.summary,
            "description": (op.service.__doc__ or "").strip(),
            "responses": {"200": {"description": "OK", "content": _json(_ref(op.output))},
                          **_ERRORS},
        }  # fmt: skip
        if op.method == "GET":
            spec["parameters"] = _parameters(op.input, op.path_params or {})
        else:
            spec["requestBody"] = {"required": True, "content": _json(_ref(op.input))}
        paths[path] = {op.method.lower(): spec}
    paths["/v1/retrieve"] = {
        "post": {
            "operationId": "retrieve_knowledge",
            "summary": "Help-desk articles for a support message (seed 002)",
            "description": "Never an error: failures, timeouts (100 ms) and invalid input "
            "answer 200 with coverage 'none'.",
            "requestBody": {"required": True, "content": _json(_ref(RetrieveRequest))},
            "responses": {
                "200": {
                    "description": "OK (maybe degraded)",
                    "content": _json(_ref(RetrieveResponse)),
                },
                "401": _ERRORS["401"],
            },
        }
    }
    accepted = {"202": {"description": "Accepted: durable in Kafka"}, **_ERRORS}
    for path, model, summary in (
        ("/v1/memory/turns", TurnRequest, "Record a conversation turn (seed 003 ingest_turn)"),
        (
            "/v1/memory/import",
            ImportRequest,
            "Record past turns at once (a history import): all of them or none",
        ),
        (
            "/v1/memory/messages",
            MessagesRequest,
            "Record a conversation given as messages, each with its speaker or role",
        ),
        ("/v1/memory/events", EventRequest, "Record a system event (seed 003 ingest_event)"),
        ("/v1/memory/forget", ForgetRequest, "Forget a group_id or a whole tenant"),
    ):
        body = {"required": True, "content": _json(_ref(model))}
        paths[path] = {"post": {"summary": summary, "responses": accepted, "requestBody": body}}
    paths["/v1/memory/changes"] = {
        "get": {
            "summary": "New and invalidated facts of a group, as server-sent events",
            "parameters": [
                {"name": "group_id", "in": "query", "required": True,
                 "schema": {"type": "string"}},
                {"name": "after", "in": "query", "required": False,
                 "schema": {"type": "integer"}, "description": "Resume after this offset"},
            ],
            "responses": {"200": {"description": "text/event-stream",
                                  "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                          **_ERRORS},
        }
    }  # fmt: skip
    health = {"200": {"description": "All dependencies reachable"},
              "503": {"description": "A dependency is down"}}  # fmt: skip
    paths["/healthz"] = {"get": {"summary": "Liveness and checks", "responses": health}}
    metrics = {"200": {"description": "text exposition format"}}
    paths["/metrics"] = {"get": {"summary": "Prometheus metrics", "responses": metrics}}
    get_inputs = [op.input for op in OPERATIONS if op.method == "GET"]
    unique = list(dict.fromkeys(models + get_inputs))
    _, defs = models_json_schema(
        [(m, "serialization" if m in _outputs() else "validation") for m in unique],
        ref_template=REF,
    )
    return {
        "openapi": "3.1.0",
        "info": {"title": "Tribal", "version": version,
                 "description": "Schemas, code, help desk and conversation memory for agents."},
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}, {}],
    }  # fmt: skip


def _outputs() -> set[type[BaseModel]]:
    return {op.output for op in OPERATIONS} | {RetrieveResponse, ErrorBody}
