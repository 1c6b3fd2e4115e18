"""Session-scoped real services. See :mod:`devstack.hub` for where each comes from.

Fixtures: ``kafka_bootstrap`` (Apache Kafka), ``tansu_bootstrap``, ``broker`` (both, one
after the other), ``postgres_dsn`` and ``weaviate``. Nothing starts until a test asks.
With ``TRIBAL_REQUIRE_SERVICES=1`` a missing service fails the tests that need it;
otherwise they skip and the run ends with one line saying what was skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack import Broker, Provisioned, ServiceHub, ServiceUnavailableError, WeaviateEndpoint
from devstack.kafka import KAFKA_VERSION
from devstack.weaviate import WEAVIATE_VERSION

_HUB = pytest.StashKey[ServiceHub]()

_MARKERS = {
    "kafka_bootstrap": "kafka",
    "tansu_bootstrap": "kafka",
    "broker": "kafka",
    "postgres_dsn": "postgres",
    "weaviate": "weaviate",
}


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_HUB] = ServiceHub()


def pytest_unconfigure(config: pytest.Config) -> None:
    hub = config.stash.get(_HUB, None)
    if hub is not None:
        hub.close()


def pytest_report_header(config: pytest.Config) -> list[str]:
    hub = config.stash[_HUB]
    return [
        f"tribal services: Apache Kafka {KAFKA_VERSION}, "
        f"Weaviate {WEAVIATE_VERSION}, PostgreSQL 18 + pgvector, Tansu "
        f"(env > testcontainers > native, started on first use"
        f"{'; required' if hub.require else ''})"
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A test that takes a service fixture carries that service's marker, so
    # `-m "not weaviate"` deselects it without anyone remembering to mark it.
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in _MARKERS:
                item.add_marker(_MARKERS[fixture])


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    hub = terminalreporter.config.stash[_HUB]
    line = hub.report_line()
    if line:
        terminalreporter.write_line(line)
    if hub.failed:
        reports = [
            report
            for outcome in ("skipped", "error", "failed")
            for report in terminalreporter.stats.get(outcome, [])
        ]
        parts = []
        for service, reason in hub.failed.items():
            tag = f"unavailable: {service} ("
            count = sum(1 for report in reports if tag in str(getattr(report, "longrepr", "")))
            parts.append(f"{service} ({count} tests; {reason.splitlines()[0][:200]})")
        verb = "failed" if hub.require else "skipped"
        terminalreporter.write_line(f"tribal services {verb}: " + "; ".join(parts), yellow=True)


@pytest.fixture(scope="session")
def tribal_services(request: pytest.FixtureRequest) -> Iterator[ServiceHub]:
    """The session's service hub; everything it started stops when the session ends."""
    hub = request.config.stash[_HUB]
    yield hub
    hub.close()


def _provide(hub: ServiceHub, service: str) -> Provisioned:
    try:
        return hub.get(service)
    except ServiceUnavailableError as exc:
        missing = str(exc)
    # Outside the except block, so the report shows the reason, not a chained traceback.
    if hub.require:
        pytest.fail(f"{missing} [TRIBAL_REQUIRE_SERVICES is set]", pytrace=False)
    pytest.skip(missing)


@pytest.fixture(scope="session")
def kafka_bootstrap(tribal_services: ServiceHub) -> str:
    """``host:port`` of an Apache Kafka broker."""
    value = _provide(tribal_services, "kafka").value
    assert isinstance(value, Broker)
    return value.bootstrap


@pytest.fixture(scope="session")
def tansu_bootstrap(tribal_services: ServiceHub) -> str:
    """``host:port`` of a Tansu broker."""
    value = _provide(tribal_services, "tansu").value
    assert isinstance(value, Broker)
    return value.bootstrap


@pytest.fixture(scope="session", params=["kafka", "tansu"])
def broker(request: pytest.FixtureRequest, tribal_services: ServiceHub) -> Broker:
    """Each Kafka-API broker in turn: tests taking it run once per broker."""
    value = _provide(tribal_services, str(request.param)).value
    assert isinstance(value, Broker)
    return value


@pytest.fixture(scope="session")
def postgres_dsn(tribal_services: ServiceHub) -> str:
    """``postgresql://`` URL of a superuser on a PostgreSQL 18 server with pgvector."""
    value = _provide(tribal_services, "postgres").value
    assert isinstance(value, str)
    return value


@pytest.fixture(scope="session")
def weaviate(tribal_services: ServiceHub) -> WeaviateEndpoint:
    """Host, ports, URL and version of a Weaviate node with no vectorizer modules."""
    value = _provide(tribal_services, "weaviate").value
    assert isinstance(value, WeaviateEndpoint)
    return value
