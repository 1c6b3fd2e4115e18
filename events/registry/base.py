"""The schema-registry port: where Avro schemas get their ids.

Semantics follow the Confluent Schema Registry so that the embedded file registry
and a real Confluent-compatible one are interchangeable.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

AvroSchema = dict[str, Any]


class SchemaNotFoundError(LookupError):
    """No schema has the requested id."""


class InvalidSchemaError(ValueError):
    """The document is not a valid Avro schema."""


def canonical_json(schema: AvroSchema) -> str:
    """A stable text form: equal schemas (up to key order) give equal strings."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@runtime_checkable
class SchemaRegistry(Protocol):
    """Assigns ids to Avro schemas and versions them per subject."""

    def register(self, subject: str, schema: AvroSchema) -> int:
        """Register ``schema`` under ``subject`` and return its id.

        Idempotent: registering a schema already known (in any subject) returns the
        id it already has. A new version must be BACKWARD compatible with the
        subject's latest one (it can read data written with it), otherwise
        :class:`events.registry.compat.IncompatibleSchemaError` is raised and
        nothing changes. Raises :class:`InvalidSchemaError` for non-Avro documents.
        """
        ...

    def get_by_id(self, schema_id: int) -> AvroSchema:
        """The schema with id ``schema_id``; raises :class:`SchemaNotFoundError`."""
        ...

    def latest(self, subject: str) -> tuple[int, AvroSchema] | None:
        """The id and schema of the newest version of ``subject``, or None if unknown."""
        ...

    def subjects(self) -> list[str]:
        """All subjects with at least one version, sorted."""
        ...
