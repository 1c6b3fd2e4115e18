"""Load the committed ``.avsc`` contracts and parse them with fastavro."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastavro import parse_schema


def avro_dir() -> Path:
    """The schema directory: ``avro/`` in a checkout, ``events/_avro`` in the wheel."""
    checkout = Path(__file__).resolve().parent.parent / "avro"
    return checkout if checkout.is_dir() else Path(__file__).parent / "_avro"


@dataclass(frozen=True)
class AvroContract:
    """One event's schema as written (``schema``) and as fastavro uses it (``parsed``)."""

    full_name: str
    schema: dict[str, Any]
    parsed: Any
    path: Path


def full_name(schema: dict[str, Any]) -> str:
    """``namespace.name`` of a record schema."""
    name: str = schema["name"]
    namespace = schema.get("namespace")
    return name if "." in name or not namespace else f"{namespace}.{name}"


def parse(schema: dict[str, Any]) -> Any:
    """The fastavro parsed form of ``schema`` (named types resolved in isolation)."""
    return parse_schema(schema, named_schemas={})


def load_contracts(directory: Path | None = None) -> dict[str, AvroContract]:
    """Every ``*.avsc`` under ``directory`` (default :func:`avro_dir`), by full name."""
    root = directory if directory is not None else avro_dir()
    contracts: dict[str, AvroContract] = {}
    for path in sorted(root.rglob("*.avsc")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        name = full_name(schema)
        if name in contracts:
            raise ValueError(f"{name} is defined twice: {contracts[name].path} and {path}")
        contracts[name] = AvroContract(name, schema, parse(schema), path)
    return contracts


@lru_cache(maxsize=1)
def default_contracts() -> dict[str, AvroContract]:
    """The packaged contracts, loaded once per process."""
    return load_contracts()
