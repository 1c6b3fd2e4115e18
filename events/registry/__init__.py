"""Schema registries: the port, its adapters, and the one the settings ask for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from events.registry.base import (
    AvroSchema,
    InvalidSchemaError,
    SchemaNotFoundError,
    SchemaRegistry,
)
from events.registry.compat import IncompatibleSchemaError, check_backward_compatible
from events.registry.file import FileSchemaRegistry

if TYPE_CHECKING:
    from runtime.settings import TribalSettings

__all__ = [
    "AvroSchema",
    "FileSchemaRegistry",
    "IncompatibleSchemaError",
    "InvalidSchemaError",
    "SchemaNotFoundError",
    "SchemaRegistry",
    "check_backward_compatible",
    "registry_from_settings",
]


def registry_from_settings(settings: TribalSettings) -> SchemaRegistry:
    """The Confluent HTTP registry at ``schema_registry_url`` if set, else the file one."""
    if settings.schema_registry_url:
        from events.registry.http import ConfluentHttpRegistry

        return ConfluentHttpRegistry(settings.schema_registry_url)
    return FileSchemaRegistry(settings.schema_dir)
