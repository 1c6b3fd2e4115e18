"""A path or method no route takes is answered in a structured error, never plain text."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from api.app import create_app
from runtime.settings import TribalSettings


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    settings = TribalSettings(kafka_bootstrap="", postgres_dsn="", data_dir=tmp_path)
    return TestClient(create_app(settings))  # no lifespan: nothing here reaches a store


def test_an_unknown_path_answers_an_agent_error(client: TestClient) -> None:
    resp = client.get("/v1/no-such-thing")
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "NOT_FOUND"


def test_a_method_a_route_does_not_take_answers_an_agent_error(client: TestClient) -> None:
    resp = client.delete("/healthz")
    assert resp.status_code == 405
    assert resp.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_a_registry_subject_holding_a_line_break_answers_in_the_registry_shape(
    client: TestClient,
) -> None:
    # The mount's pattern stops at a line break, so no registry route ever sees this path.
    resp = client.get("/schema-registry/subjects/a%0D%0Ab/versions/latest")
    assert resp.status_code == 404
    assert resp.json()["error_code"] == 40401
    assert resp.json()["message"]
