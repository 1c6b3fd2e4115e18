"""A client for any Confluent-compatible Schema Registry (Confluent, Redpanda, Tribal's own)."""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import quote

import httpx

from events.registry.base import (
    AvroSchema,
    InvalidSchemaError,
    SchemaNotFoundError,
    canonical_json,
)
from events.registry.compat import IncompatibleSchemaError

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
SUBJECT_NOT_FOUND = 40401
SCHEMA_NOT_FOUND = 40403
INCOMPATIBLE = 409
INVALID_SCHEMA = 42201


class SchemaRegistryHTTPError(RuntimeError):
    """The registry answered with an unexpected error."""

    def __init__(self, status: int, error_code: int | None, message: str) -> None:
        super().__init__(f"schema registry error {status}/{error_code}: {message}")
        self.status, self.error_code = status, error_code


class ConfluentHttpRegistry:
    """A :class:`~events.registry.base.SchemaRegistry` over the Confluent REST API.

    Ids and schemas are immutable once assigned, so both are cached for the life of
    the client; ``latest`` and ``subjects`` always ask the server.
    """

    def __init__(self, url: str, *, timeout: float = 10.0, client: httpx.Client | None = None):
        self._client = client or httpx.Client(
            base_url=url.rstrip("/"), timeout=timeout, headers={"Accept": CONTENT_TYPE}
        )
        self._ids: dict[tuple[str, str], int] = {}
        self._schemas: dict[int, str] = {}
        self._lock = threading.Lock()

    def register(self, subject: str, schema: AvroSchema) -> int:
        """See :meth:`SchemaRegistry.register`."""
        text = canonical_json(schema)
        cached = self._ids.get((subject, text))
        if cached is not None:
            return cached
        body = _json(self._request("POST", f"/subjects/{_q(subject)}/versions", {"schema": text}))
        schema_id = int(body["id"])
        with self._lock:
            self._ids[(subject, text)] = schema_id
            self._schemas[schema_id] = text
        return schema_id

    def get_by_id(self, schema_id: int) -> AvroSchema:
        """See :meth:`SchemaRegistry.get_by_id`."""
        text = self._schemas.get(schema_id)
        if text is None:
            try:
                body = _json(self._request("GET", f"/schemas/ids/{int(schema_id)}"))
            except SchemaRegistryHTTPError as exc:
                if exc.status == 404:
                    raise SchemaNotFoundError(f"schema id {schema_id} not found") from exc
                raise
            text = str(body["schema"])
            with self._lock:
                self._schemas[schema_id] = text
        schema: AvroSchema = json.loads(text)
        return schema

    def latest(self, subject: str) -> tuple[int, AvroSchema] | None:
        """See :meth:`SchemaRegistry.latest`."""
        try:
            body = _json(self._request("GET", f"/subjects/{_q(subject)}/versions/latest"))
        except SchemaRegistryHTTPError as exc:
            if exc.error_code == SUBJECT_NOT_FOUND:
                return None
            raise
        return int(body["id"]), json.loads(body["schema"])

    def subjects(self) -> list[str]:
        """See :meth:`SchemaRegistry.subjects`."""
        return sorted(str(s) for s in self._request("GET", "/subjects").json())

    def close(self) -> None:
        """Close the underlying HTTP connections."""
        self._client.close()

    def __enter__(self) -> ConfluentHttpRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _request(self, method: str, path: str, payload: Any = None) -> httpx.Response:
        headers = {"Content-Type": CONTENT_TYPE} if payload is not None else None
        content = json.dumps(payload) if payload is not None else None
        response = self._client.request(method, path, content=content, headers=headers)
        if response.is_success:
            return response
        try:
            error: dict[str, Any] = response.json()
        except ValueError:
            error = {"message": response.text}
        code, message = error.get("error_code"), str(error.get("message", response.reason_phrase))
        if response.status_code == 409:
            raise IncompatibleSchemaError(message)
        if response.status_code == 422:
            raise InvalidSchemaError(message)
        raise SchemaRegistryHTTPError(response.status_code, code, message)


def _q(subject: str) -> str:
    return quote(subject, safe="")


def _json(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    return body
