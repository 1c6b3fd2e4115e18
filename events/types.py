"""Constrained value types shared by the event models.

Each type validates on construction, so an invalid event can never exist in memory
and a consumer can trust every value it decodes.
"""

from __future__ import annotations

import math
import re
from array import array
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from events.limits import (
    GROUP_ID_MAX,
    METADATA_KEY_MAX,
    METADATA_MAX_ENTRIES,
    METADATA_VALUE_MAX,
    SESSION_MAX,
    TENANT_MAX,
)
from events.text import INVALID_TEXT, describe, find_control

_CHARS = r"[A-Za-z0-9_.\-]"
TENANT_PATTERN = rf"{_CHARS}{{1,{TENANT_MAX}}}"
"""The full-match pattern of a tenant id."""
GROUP_ID_PATTERN = rf"{TENANT_PATTERN}:{_CHARS}{{1,{SESSION_MAX}}}"
"""The full-match pattern of a ``group_id``: ``tenant:session``, each part bounded."""
_GROUP_ID_RE = re.compile(GROUP_ID_PATTERN)


class AvroFloat32:
    """Marks a float vector that travels as Avro ``float`` (32 bit) instead of ``double``."""


def _as_utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:00+00:01 is a valid ISO time before the first UTC instant.
        raise ValueError(f"{value.isoformat()} is out of range in UTC") from None


def shown(value: str, limit: int = 80) -> str:
    """``value`` quoted for an error message, cut to ``limit`` characters."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"


def group_id_problem(value: str) -> str | None:
    """Why ``value`` is not a ``group_id``, or None when it is one."""
    if _GROUP_ID_RE.fullmatch(value):
        return None
    return (
        f"group_id must be 'tenant:session' with each part made of letters, "
        f"digits, '_', '.' or '-' (tenant at most {TENANT_MAX}, session at most "
        f"{SESSION_MAX} characters); got {shown(value)}"
    )


def _check_group_id(value: str) -> str:
    problem = group_id_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def check_metadata(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` if it is within the metadata limits and its text has no control characters.

    Values that are not strings are checked by whoever turns them into strings.
    """
    if len(value) > METADATA_MAX_ENTRIES:
        raise ValueError(f"metadata has {len(value)} entries; at most {METADATA_MAX_ENTRIES}")
    for key, item in value.items():
        if len(key) > METADATA_KEY_MAX:
            raise ValueError(
                f"metadata key {shown(key, 20)} is {len(key)} characters; "
                f"at most {METADATA_KEY_MAX}"
            )
        texts = [("key", key)] + ([("value", item)] if isinstance(item, str) else [])
        for what, text in texts:
            found = find_control(text)
            if found is not None:
                raise PydanticCustomError(
                    INVALID_TEXT,
                    "{what} of metadata key {key}: control character {character} at "
                    "index {index}; remove it (tab, line feed and carriage return are allowed)",
                    {"what": what, "key": shown(key, 20), "character": describe(found[1]),
                     "index": found[0]},
                )  # fmt: skip
        if isinstance(item, str) and len(item) > METADATA_VALUE_MAX:
            raise ValueError(
                f"metadata value of key {shown(key, 20)} is {len(item)} characters; "
                f"at most {METADATA_VALUE_MAX}"
            )
    return value


def metadata_json_schema(values: dict[str, Any]) -> WithJsonSchema:
    """The JSON schema of a metadata map whose values are ``values``, with its limits."""
    return WithJsonSchema(
        {
            "type": "object",
            "maxProperties": METADATA_MAX_ENTRIES,
            "propertyNames": {"maxLength": METADATA_KEY_MAX},
            "additionalProperties": values,
        }
    )


def _as_float32(values: list[float]) -> list[float]:
    # Round to what the wire can carry so that decode(encode(e)) == e holds exactly.
    if not all(math.isfinite(v) for v in values):
        raise ValueError("vector contains NaN or infinite values")
    return array("f", values).tolist()


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_as_utc)]
"""A timezone-aware instant, normalised to UTC. Naive datetimes are rejected."""

TenantId = Annotated[str, StringConstraints(pattern=f"^{TENANT_PATTERN}$", max_length=TENANT_MAX)]
"""A tenant name: letters, digits, ``_``, ``.``, ``-``; at most ``TENANT_MAX`` characters."""

GroupId = Annotated[
    str,
    AfterValidator(_check_group_id),
    WithJsonSchema(
        {"type": "string", "pattern": f"^{GROUP_ID_PATTERN}$", "maxLength": GROUP_ID_MAX}
    ),
]
"""The memory isolation key ``tenant:session`` (seed 003), at most ``GROUP_ID_MAX`` characters."""

Metadata = Annotated[
    dict[str, str],
    AfterValidator(check_metadata),
    metadata_json_schema({"type": "string", "maxLength": METADATA_VALUE_MAX}),
]
"""A turn's or event's labels: bounded in entries, key and value length; no control characters."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A lowercase hex SHA-256 digest."""

Vector = Annotated[list[float], AvroFloat32(), AfterValidator(_as_float32)]
"""An embedding: finite float32 values."""


def utcnow() -> datetime:
    """The current instant in UTC (the default ``occurred_at``)."""
    return datetime.now(UTC)
