"""What the fixtures hand to tests: plain values, whoever provisioned the service."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Broker:
    """A Kafka-API broker a test runs against."""

    name: str
    """``"kafka"`` (Apache Kafka) or ``"tansu"``."""
    bootstrap: str
    """``host:port``, for clients."""
    version: str
    """The broker's version, as the run's header reports it."""


@dataclass(frozen=True)
class WeaviateEndpoint:
    http_host: str
    http_port: int
    grpc_port: int
    version: str
    grpc_host: str = ""

    def __post_init__(self) -> None:
        if not self.grpc_host:
            object.__setattr__(self, "grpc_host", self.http_host)

    @property
    def url(self) -> str:
        return f"http://{self.http_host}:{self.http_port}"


@dataclass
class Provisioned:
    """One running service: what it is, where it came from, how to let it go."""

    service: str  # "kafka", "tansu", "postgres", "weaviate"
    label: str  # "Apache Kafka", "Tansu", ...
    version: str
    source: str  # "env", "testcontainers", "native", "embedded"
    value: object
    started_in: float = 0.0
    close: Callable[[], None] = field(default=lambda: None)

    def describe(self) -> str:
        took = f", {self.started_in:.1f}s" if self.started_in else ""
        return f"{self.label} {self.version or '?'} ({self.source}{took})"
