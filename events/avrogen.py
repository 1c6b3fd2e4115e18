"""Derive an Avro schema from an event model (used by ``python -m devstack.gen_avro``).

Conventions: datetimes are ``long``/``timestamp-micros``, UUIDs ``string``/``uuid``,
optional fields ``["null", T]`` with default null, tuples and lists arrays, dicts
maps, literals and enums plain strings (so new values never break old readers).
"""

from __future__ import annotations

import enum
import types
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from uuid import UUID

from pydantic import AwareDatetime, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from events.base import Event
from events.types import AvroFloat32

_PRIMITIVES: dict[type, Any] = {
    bool: "boolean",
    int: "long",
    float: "double",
    str: "string",
    bytes: "bytes",
    UUID: {"type": "string", "logicalType": "uuid"},
    datetime: {"type": "long", "logicalType": "timestamp-micros"},
    AwareDatetime: {"type": "long", "logicalType": "timestamp-micros"},
}


def avro_schema(event_type: type[Event]) -> dict[str, Any]:
    """The Avro record schema for ``event_type``."""
    schema = _record(event_type, event_type.namespace(), set())
    assert isinstance(schema, dict)
    return schema


def avsc_path(root: Path, event_type: type[Event]) -> Path:
    """Where the ``.avsc`` of ``event_type`` lives, e.g. ``avro/kb/KbArticleUpserted.avsc``."""
    area = event_type.namespace().removeprefix("tribal.").replace(".", "/")
    return root / area / f"{event_type.__name__}.avsc"


def _record(model: type[BaseModel], namespace: str, defined: set[str]) -> dict[str, Any] | str:
    full_name = f"{namespace}.{model.__name__}"
    if full_name in defined:
        return full_name  # Avro names may be defined once per schema, then referenced.
    defined.add(full_name)
    fields = [_field(name, info, namespace, defined) for name, info in model.model_fields.items()]
    record: dict[str, Any] = {"type": "record", "name": model.__name__, "namespace": namespace}
    if model.__doc__:
        record["doc"] = " ".join(model.__doc__.split())
    record["fields"] = fields
    return record


def _field(name: str, info: FieldInfo, namespace: str, defined: set[str]) -> dict[str, Any]:
    avro_type = _type(info.annotation, info.metadata, namespace, defined)
    field: dict[str, Any] = {"name": name, "type": avro_type}
    if info.description:
        field["doc"] = info.description
    if info.default is not PydanticUndefined:
        field["default"] = _json_default(info.default)
    elif info.default_factory in (list, tuple, dict):
        field["default"] = {} if info.default_factory is dict else []
    return field


def _type(tp: Any, metadata: list[Any], namespace: str, defined: set[str]) -> Any:
    origin = get_origin(tp)
    if origin is Annotated:
        base, *extra = get_args(tp)
        return _type(base, [*metadata, *extra], namespace, defined)
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(tp) if arg is not type(None)]
        if len(members) != 1 or len(get_args(tp)) != 2:
            raise TypeError(f"only 'T | None' unions are supported, got {tp}")
        return ["null", _type(members[0], metadata, namespace, defined)]
    if origin in (list, tuple):
        items = get_args(tp)[0]
        if any(isinstance(m, AvroFloat32) for m in metadata) and items is float:
            return {"type": "array", "items": "float"}
        return {"type": "array", "items": _type(items, [], namespace, defined)}
    if origin is dict:
        key, value = get_args(tp)
        if key is not str:
            raise TypeError(f"Avro map keys are strings, got {tp}")
        return {"type": "map", "values": _type(value, [], namespace, defined)}
    if origin is Literal or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return "string"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _record(tp, namespace, defined)
    if tp in _PRIMITIVES:
        return _PRIMITIVES[tp]
    raise TypeError(f"no Avro mapping for {tp!r}")


def _json_default(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_json_default(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value
