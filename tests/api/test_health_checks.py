"""``/healthz`` says how Tribal runs and checks every store it was given."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from api.app import create_app
from devstack.endpoints import WeaviateEndpoint
from runtime.embedded.process import free_port
from runtime.settings import TribalSettings


def _health(settings: TribalSettings) -> tuple[int, dict[str, object]]:
    client = TestClient(create_app(settings))  # no lifespan: only the checks run
    resp = client.get("/healthz")
    return resp.status_code, resp.json()


def test_health_reports_the_mode_and_an_unreachable_database_and_index(tmp_path: Path) -> None:
    closed = free_port()
    settings = TribalSettings(
        mode="distributed",
        kafka_bootstrap="",
        postgres_dsn=f"postgresql://postgres@127.0.0.1:{closed}/postgres",
        weaviate_url=f"http://127.0.0.1:{free_port()}",
        data_dir=tmp_path,
    )
    status, body = _health(settings)
    assert body["mode"] == "distributed"
    assert body["checks"] == {"postgres": "unreachable", "index": "unreachable"}
    assert status == 503
    assert body["status"] == "degraded"


@pytest.mark.slow
def test_health_checks_postgres_and_weaviate_when_they_answer(
    tmp_path: Path, postgres_dsn: str, weaviate: WeaviateEndpoint
) -> None:
    settings = TribalSettings(
        mode="distributed",
        kafka_bootstrap="",
        postgres_dsn=postgres_dsn,
        weaviate_url=weaviate.url,
        weaviate_grpc_port=weaviate.grpc_port,
        data_dir=tmp_path,
    )
    status, body = _health(settings)
    assert body["checks"] == {"postgres": "ok", "index": "ok"}
    assert status == 200
