"""The generated OpenAPI document is valid, and schemathesis finds no 500 anywhere."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from api.app import VERSION
from api.openapi import openapi_document
from devstack.deployment import AUTH
from devstack.served import ThreadedServer

schemathesis = pytest.importorskip("schemathesis")  # only when schemathesis is missing


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in refs(v)]
    return []


def test_the_document_is_generated_from_the_models_and_every_ref_resolves() -> None:
    doc = openapi_document(VERSION)
    schemas = doc["components"]["schemas"]
    for ref in refs(doc):
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.rsplit("/", 1)[1] in schemas, ref
    retrieve = schemas["RetrieveResponse"]["properties"]
    assert set(retrieve) == {"sources_consulted", "coverage", "gaps", "retrieval_time_ms"}
    search = doc["paths"]["/v1/tables/search"]["get"]
    assert {p["name"] for p in search["parameters"]} >= {"query", "limit", "offset", "max_tokens"}
    assert "schema" in schemas["TableSchema"]["properties"]
    loaded = schemathesis.openapi.from_dict(doc)  # schemathesis' loader validates it
    assert len(list(loaded.get_all_operations())) >= 14


def test_no_endpoint_answers_a_server_error(server: ThreadedServer) -> None:
    doc = httpx.get(f"{server.url}/openapi.json").json()
    # Never ending (SSE) or destructive for the other tests' shared data.
    schema = (
        schemathesis.openapi.from_dict(doc)
        .exclude(path="/v1/memory/changes")
        .exclude(path="/v1/memory/forget")
    )
    tried = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: Any) -> None:
            response = case.call(base_url=server.url, headers=AUTH, timeout=30)
            where = f"{case.method} {case.formatted_path} -> {response.status_code}"
            assert response.status_code < 500 or response.status_code == 503, (
                f"{where}: {response.text[:300]}"
            )
            if response.status_code == 503:  # only a store really down may answer 503
                assert response.json()["error"]["recoverable"] is True, where

        check()
        tried += 1
    assert tried >= 12


def test_the_served_document_shows_every_input_limit() -> None:
    from starlette.testclient import TestClient

    from api.app import create_app
    from events.limits import (
        EVENT_TYPE_MAX,
        GROUP_ID_MAX,
        MESSAGE_MAX,
        METADATA_KEY_MAX,
        METADATA_MAX_ENTRIES,
        METADATA_VALUE_MAX,
        QUERY_MAX,
        REASON_MAX,
        TENANT_MAX,
        TURN_ID_MAX,
    )
    from runtime.settings import TribalSettings

    app = create_app(TribalSettings(kafka_bootstrap="", postgres_dsn=""))
    doc = TestClient(app).get("/openapi.json").json()  # no lifespan: nothing to connect
    schemas = doc["components"]["schemas"]

    def prop(model: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = schemas[model]["properties"][name]
        return found.get("anyOf", [found])[0] if "anyOf" in found else found

    turn = schemas["TurnRequest"]["properties"]
    assert turn["group_id"]["maxLength"] == GROUP_ID_MAX
    assert turn["group_id"]["pattern"].startswith("^[A-Za-z0-9_.\\-]{1,128}:")
    assert turn["user_message"]["maxLength"] == MESSAGE_MAX
    assert prop("TurnRequest", "turn_id")["maxLength"] == TURN_ID_MAX
    for model in ("TurnRequest", "EventRequest"):
        metadata = schemas[model]["properties"]["metadata"]
        assert metadata["maxProperties"] == METADATA_MAX_ENTRIES
        assert metadata["propertyNames"] == {"maxLength": METADATA_KEY_MAX}
    assert turn["metadata"]["additionalProperties"]["maxLength"] == METADATA_VALUE_MAX
    assert schemas["EventRequest"]["properties"]["event_type"]["maxLength"] == EVENT_TYPE_MAX
    assert prop("ForgetRequest", "tenant")["maxLength"] == TENANT_MAX
    assert prop("ForgetRequest", "reason")["maxLength"] == REASON_MAX
    search = {p["name"]: p for p in doc["paths"]["/v1/memory/search"]["get"]["parameters"]}
    assert search["group_id"]["schema"]["maxLength"] == GROUP_ID_MAX
    assert search["query"]["schema"]["anyOf"][0]["maxLength"] == QUERY_MAX
