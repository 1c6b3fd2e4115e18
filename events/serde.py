"""Events <-> Confluent wire format (magic byte 0, 4-byte schema id, Avro binary).

Subjects follow TopicRecordNameStrategy: ``"{topic}-{avro full name}"``. Decoding
resolves the writer schema against the current reader schema, upcasts, then
validates into the pydantic model. Both directions are synchronous (Faust codecs).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from io import BytesIO
from typing import Any, Literal, NamedTuple, get_args

from fastavro import schemaless_reader, schemaless_writer
from pydantic import BaseModel, ValidationError

from events.base import Event
from events.catalog import EVENT_TYPES
from events.registry.base import SchemaNotFoundError, SchemaRegistry
from events.schemas import AvroContract, default_contracts, full_name, parse
from events.upcasting import UPCASTERS, NewerSchemaVersionError, UpcastError, Upcasters

DecodeErrorCode = Literal[
    "NOT_WIRE_FORMAT",
    "UNKNOWN_SCHEMA_ID",
    "UNKNOWN_EVENT_TYPE",
    "MALFORMED_PAYLOAD",
    "INCOMPATIBLE_SCHEMA",
    "NEWER_SCHEMA_VERSION",
    "INVALID_EVENT",
]

_HEADER = struct.Struct(">bI")


class DecodeError(Exception):
    """A message that can never become an event; ``code`` says why (dead-letter it)."""

    def __init__(self, code: DecodeErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code: DecodeErrorCode = code
        self.message = message


def subject_name(topic: str, event_type: type[Event]) -> str:
    """TopicRecordNameStrategy subject, e.g. ``tribal.kb.articles-tribal.kb.KbArticleUpserted``."""
    return f"{topic}-{event_type.avro_name}"


class _Reader(NamedTuple):
    writer: Any
    reader: Any  # None when the writer schema is the current one: no resolution needed
    event_type: type[Event]


class EventSerde:
    """Encodes and decodes events against a schema registry, caching everything."""

    def __init__(
        self,
        registry: SchemaRegistry,
        *,
        event_types: Mapping[str, type[Event]] | None = None,
        contracts: Mapping[str, AvroContract] | None = None,
        upcasters: Upcasters | None = None,
    ) -> None:
        self._registry = registry
        self._types = dict(EVENT_TYPES if event_types is None else event_types)
        self._contracts = dict(default_contracts() if contracts is None else contracts)
        self._upcasters = UPCASTERS if upcasters is None else upcasters
        self._writers: dict[tuple[str, type[Event]], tuple[bytes, Any, bool]] = {}
        self._readers: dict[int, _Reader] = {}

    def prepare(self, topic: str, event_types: Iterable[type[Event]]) -> None:
        """Register the schemas of ``event_types`` for ``topic`` now, not on first encode."""
        for event_type in event_types:
            self._writer(topic, event_type)

    def encode(self, event: Event, topic: str) -> bytes:
        """The wire bytes of ``event`` for ``topic`` (registers its schema the first time)."""
        try:
            header, parsed, flat = self._writers[(topic, event.__class__)]
        except KeyError:
            header, parsed, flat = self._writer(topic, event.__class__)
        out = BytesIO()
        out.write(header)
        # Without nested models the field values are already what fastavro writes.
        schemaless_writer(out, parsed, event.__dict__ if flat else event.model_dump())
        return out.getvalue()

    def decode(self, data: bytes) -> Event:
        """The event in ``data``; raises :class:`DecodeError` if it cannot be one."""
        if len(data) < _HEADER.size or data[0] != 0:
            raise DecodeError("NOT_WIRE_FORMAT", "expected magic byte 0 and a 4-byte schema id")
        schema_id = int.from_bytes(data[1:5], "big")
        reader = self._readers.get(schema_id) or self._reader(schema_id)
        stream = BytesIO(data)
        stream.seek(_HEADER.size)
        try:
            record = schemaless_reader(stream, reader.writer, reader.reader)
        except Exception as exc:  # fastavro raises many types on bad input
            code: DecodeErrorCode = "MALFORMED_PAYLOAD"
            if type(exc).__name__ == "SchemaResolutionError":
                code = "INCOMPATIBLE_SCHEMA"
            raise DecodeError(code, f"schema id {schema_id}: {exc!r}") from exc
        if stream.tell() != len(data):
            raise DecodeError("MALFORMED_PAYLOAD", f"{len(data) - stream.tell()} trailing bytes")
        if not isinstance(record, dict):
            raise DecodeError("MALFORMED_PAYLOAD", f"schema id {schema_id} is not a record")
        return self._validate(reader.event_type, record)

    def _validate(self, event_type: type[Event], record: dict[str, Any]) -> Event:
        try:
            record = self._upcasters.upcast(
                event_type.avro_name, record, event_type.current_version()
            )
        except NewerSchemaVersionError as exc:
            raise DecodeError("NEWER_SCHEMA_VERSION", str(exc)) from exc
        except UpcastError as exc:
            raise DecodeError("INVALID_EVENT", str(exc)) from exc
        try:
            return event_type.model_validate(record)
        except ValidationError as exc:
            raise DecodeError("INVALID_EVENT", str(exc)) from exc

    def _writer(self, topic: str, event_type: type[Event]) -> tuple[bytes, Any, bool]:
        contract = self._contracts.get(event_type.avro_name)
        if contract is None:
            raise KeyError(f"no Avro contract for {event_type.avro_name}")
        schema_id = self._registry.register(subject_name(topic, event_type), contract.schema)
        entry = (_HEADER.pack(0, schema_id), contract.parsed, not _nests_models(event_type))
        self._writers[(topic, event_type)] = entry
        return entry

    def _reader(self, schema_id: int) -> _Reader:
        try:
            schema = self._registry.get_by_id(schema_id)
        except SchemaNotFoundError as exc:
            message = f"schema id {schema_id} is not registered"
            raise DecodeError("UNKNOWN_SCHEMA_ID", message) from exc
        name = full_name(schema) if isinstance(schema, dict) and "name" in schema else "?"
        event_type = self._types.get(name)
        contract = self._contracts.get(name)
        if event_type is None or contract is None:
            raise DecodeError("UNKNOWN_EVENT_TYPE", f"schema id {schema_id} is {name!r}")
        if schema == contract.schema:
            reader = _Reader(contract.parsed, None, event_type)
        else:
            try:
                reader = _Reader(parse(schema), contract.parsed, event_type)
            except Exception as exc:  # fastavro raises several types for bad schemas
                raise DecodeError("INCOMPATIBLE_SCHEMA", f"schema id {schema_id}: {exc}") from exc
        self._readers[schema_id] = reader
        return reader


def _nests_models(model: type[BaseModel]) -> bool:
    return any(_mentions_model(f.annotation) for f in model.model_fields.values())


def _mentions_model(tp: Any) -> bool:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in get_args(tp))
