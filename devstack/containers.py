"""Source 2: testcontainers, used only when a Docker engine answers."""

from __future__ import annotations

import importlib
import time
from typing import Any

from devstack.endpoints import Broker, Provisioned, WeaviateEndpoint
from devstack.kafka import KAFKA_VERSION, kafka_answers
from devstack.postgres import postgres_server_version
from devstack.weaviate import WEAVIATE_ENV, WEAVIATE_VERSION, weaviate_ready, weaviate_version
from runtime.embedded.process import free_port, wait_until

KAFKA_IMAGE = f"apache/kafka:{KAFKA_VERSION}"
POSTGRES_IMAGE = "pgvector/pgvector:pg18"
WEAVIATE_IMAGE = f"cr.weaviate.io/semitechnologies/weaviate:{WEAVIATE_VERSION}"


def docker_engine_answers(timeout: float = 2.0) -> bool:
    """A Docker engine that answers ping within ``timeout`` (a client alone is not enough)."""
    try:
        docker: Any = importlib.import_module("docker")
        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def _module(*names: str) -> Any:
    # testcontainers 4.x moved modules under ``community``; accept either layout.
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise RuntimeError(f"testcontainers has none of {', '.join(names)}")


def _kafka() -> Provisioned:
    # testcontainers' KafkaContainer speaks Confluent images; the apache/kafka image is
    # configured through KAFKA_* variables. The advertised port must be the host port,
    # so it is chosen before the container starts.
    core: Any = _module("testcontainers.core.container")
    port = free_port()
    container = core.DockerContainer(KAFKA_IMAGE).with_bind_ports(9092, port)
    settings = {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093",
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://127.0.0.1:{port}",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
        "KAFKA_NUM_PARTITIONS": "1",
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "true",
    }
    for key, value in settings.items():
        container = container.with_env(key, value)
    container.start()
    bootstrap = f"127.0.0.1:{port}"
    try:
        wait_until(lambda: kafka_answers(bootstrap), 90, f"Kafka container {bootstrap}")
    except BaseException:
        container.stop()
        raise
    broker = Broker("kafka", bootstrap, KAFKA_VERSION)
    return Provisioned(
        "kafka", "Apache Kafka", broker.version, "testcontainers", broker, close=container.stop
    )


def _postgres() -> Provisioned:
    module: Any = _module("testcontainers.community.postgres", "testcontainers.postgres")
    container = module.PostgresContainer(
        POSTGRES_IMAGE, username="postgres", password="postgres", dbname="postgres", driver=None
    ).start()
    dsn = str(container.get_connection_url())
    version = postgres_server_version(dsn)
    return Provisioned(
        "postgres", "PostgreSQL", version, "testcontainers", dsn, close=container.stop
    )


def _weaviate() -> Provisioned:
    module: Any = _module("testcontainers.community.weaviate", "testcontainers.weaviate")
    container = module.WeaviateContainer(image=WEAVIATE_IMAGE, env_vars=WEAVIATE_ENV)
    container.start()
    host = str(container.get_http_host())
    http_port = int(container.get_http_port())
    url = f"http://{host}:{http_port}"
    deadline = time.monotonic() + 60
    while not weaviate_ready(url) and time.monotonic() < deadline:
        time.sleep(0.2)
    version = weaviate_version(url)
    endpoint = WeaviateEndpoint(
        host, http_port, int(container.get_grpc_port()), version, str(container.get_grpc_host())
    )
    return Provisioned(
        "weaviate", "Weaviate", version, "testcontainers", endpoint, close=container.stop
    )


STARTERS = {"kafka": _kafka, "postgres": _postgres, "weaviate": _weaviate}


def from_containers(service: str) -> Provisioned | None:
    """The service in a container, or None when this service has no container here."""
    starter = STARTERS.get(service)
    return starter() if starter else None
