"""Source 1: endpoints handed to us in ``TRIBAL_TEST_*`` variables."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from devstack.endpoints import Broker, Provisioned, WeaviateEndpoint
from devstack.kafka import kafka_answers
from devstack.postgres import postgres_server_version
from devstack.weaviate import weaviate_version

VARIABLES = {
    "kafka": "TRIBAL_TEST_KAFKA_BOOTSTRAP",
    "tansu": "TRIBAL_TEST_TANSU_BOOTSTRAP",
    "postgres": "TRIBAL_TEST_POSTGRES_DSN",
    "weaviate": "TRIBAL_TEST_WEAVIATE_URL",
}
LABELS = {
    "kafka": "Apache Kafka",
    "tansu": "Tansu",
    "postgres": "PostgreSQL",
    "weaviate": "Weaviate",
}


def from_environment(service: str) -> Provisioned | None:
    """The service named by its variable, or None when the variable is unset."""
    value = os.environ.get(VARIABLES[service], "").strip()
    if not value:
        return None
    where = f"{VARIABLES[service]}={value}"
    if service in ("kafka", "tansu"):
        if not kafka_answers(value):
            raise RuntimeError(f"{where} does not answer a Metadata request")
        version = os.environ.get(f"TRIBAL_TEST_{service.upper()}_VERSION", "")
        broker = Broker(service, value, version)
        return Provisioned(service, LABELS[service], version, "env", broker)
    if service == "postgres":
        try:
            version = postgres_server_version(value)
        except Exception as exc:
            raise RuntimeError(f"{where} does not answer: {exc}") from exc
        return Provisioned(service, LABELS[service], version, "env", value)
    url = urlsplit(value)
    grpc_port = int(os.environ.get("TRIBAL_TEST_WEAVIATE_GRPC_PORT", "50051"))
    try:
        version = weaviate_version(value.rstrip("/"))
    except OSError as exc:
        raise RuntimeError(f"{where} does not answer: {exc}") from exc
    endpoint = WeaviateEndpoint(url.hostname or "127.0.0.1", url.port or 80, grpc_port, version)
    return Provisioned(service, LABELS[service], version, "env", endpoint)
