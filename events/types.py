"""Constrained value types shared by the event models.

Each type validates on construction, so an invalid event can never exist in memory
and a consumer can trust every value it decodes.
"""

from __future__ import annotations

import math
import re
from array import array
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, StringConstraints

_NAME = r"[A-Za-z0-9_.\-]+"
_NAME_RE = re.compile(_NAME)
GROUP_ID_PATTERN = rf"{_NAME}:{_NAME}"
"""The full-match pattern of a ``group_id``: ``tenant:session``."""


class AvroFloat32:
    """Marks a float vector that travels as Avro ``float`` (32 bit) instead of ``double``."""


def _as_utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def _check_group_id(value: str) -> str:
    tenant, sep, session = value.partition(":")
    if not sep or not _NAME_RE.fullmatch(tenant) or not _NAME_RE.fullmatch(session):
        raise ValueError(
            f"group_id must be 'tenant:session' with both parts non-empty and made of "
            f"[A-Za-z0-9_.-], got {value!r}"
        )
    return value


def _as_float32(values: list[float]) -> list[float]:
    # Round to what the wire can carry so that decode(encode(e)) == e holds exactly.
    if not all(math.isfinite(v) for v in values):
        raise ValueError("vector contains NaN or infinite values")
    return array("f", values).tolist()


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_as_utc)]
"""A timezone-aware instant, normalised to UTC. Naive datetimes are rejected."""

TenantId = Annotated[str, StringConstraints(pattern=f"^{_NAME}$", max_length=128)]
"""A tenant name: letters, digits, ``_``, ``.``, ``-``."""

GroupId = Annotated[str, AfterValidator(_check_group_id)]
"""The memory isolation key ``tenant:session`` (seed 003)."""

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A lowercase hex SHA-256 digest."""

Vector = Annotated[list[float], AvroFloat32(), AfterValidator(_as_float32)]
"""An embedding: finite float32 values."""


def utcnow() -> datetime:
    """The current instant in UTC (the default ``occurred_at``)."""
    return datetime.now(UTC)
