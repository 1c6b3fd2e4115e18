"""Explicit event versioning.

An event class's ``schema_version`` default is the version the code knows. When a
change needs more than Avro's own resolution (which already fills added fields with
their defaults), bump that default and register an upcaster for the old version::

    @UPCASTERS.register("tribal.kb.KbArticleUpserted", from_version=1)
    def upcast_v1_v2(payload: Payload) -> Payload:
        return {**payload, "intent": [payload["intent"]] if payload["intent"] else []}

Upcasters take and return the decoded dict (already resolved to the current reader
schema) and are chained: a v1 payload passes through 1->2, then 2->3, and so on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from events.base import Event

Payload = dict[str, Any]
Upcaster = Callable[[Payload], Payload]


class UpcastError(Exception):
    """A payload cannot be brought to the current version."""


class NewerSchemaVersionError(UpcastError):
    """The payload was written by newer code than this one."""


class Upcasters:
    """A registry of single-step upcasters, by (Avro full name, from_version)."""

    def __init__(self) -> None:
        self._steps: dict[tuple[str, int], Upcaster] = {}

    def register(self, avro_name: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
        """Decorator: ``fn`` turns a ``from_version`` payload into a ``from_version + 1`` one."""

        def decorate(fn: Upcaster) -> Upcaster:
            key = (avro_name, from_version)
            if key in self._steps:
                raise ValueError(f"an upcaster from v{from_version} of {avro_name} exists")
            self._steps[key] = fn
            return fn

        return decorate

    def upcast(self, avro_name: str, payload: Payload, to_version: int) -> Payload:
        """Chain upcasters until ``payload['schema_version'] == to_version``."""
        version = int(payload.get("schema_version", 1))
        if version > to_version:
            raise NewerSchemaVersionError(
                f"{avro_name} payload has schema_version {version}; "
                f"this code knows up to {to_version}"
            )
        while version < to_version:
            step = self._steps.get((avro_name, version))
            if step is None:
                raise UpcastError(f"no upcaster from v{version} of {avro_name}")
            payload = step(dict(payload))
            version += 1
            payload["schema_version"] = version
        return payload

    def missing(self, event_types: Iterable[type[Event]]) -> list[str]:
        """Steps absent from the chains of ``event_types`` (empty when complete)."""
        return [
            f"{t.avro_name} v{v}->v{v + 1}"
            for t in event_types
            for v in range(1, t.current_version())
            if (t.avro_name, v) not in self._steps
        ]


UPCASTERS = Upcasters()
"""The process-wide upcasters, filled by the event modules that bump a version."""
