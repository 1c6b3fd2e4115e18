"""What graph queries return, and the guard every query applies to ``group_id`` first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from events.types import GROUP_ID_PATTERN

_GROUP_ID = re.compile(GROUP_ID_PATTERN)


class InvalidGroupIdError(ValueError):
    """A graph query was asked without a well-formed ``tenant:session`` group id."""

    code = "INVALID_GROUP_ID"


def require_group_id(group_id: object) -> str:
    """``group_id`` if it is a well-formed ``tenant:session``; raises otherwise.

    Every graph query calls this before touching the database (seed 003: filter by
    ``group_id``, never return another group's data, validate its format).
    """
    if not isinstance(group_id, str) or not _GROUP_ID.fullmatch(group_id):
        raise InvalidGroupIdError(
            f"group_id must be 'tenant:session' made of [A-Za-z0-9_.-], got {group_id!r}"
        )
    return group_id


def require_aware(name: str, value: datetime | None) -> datetime | None:
    """Point-in-time arguments must carry a timezone: naive ones are ambiguous."""
    if value is not None and value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got {value!r}")
    return value


@dataclass(frozen=True)
class Provenance:
    """Which event recorded a version, from which episode, and where it is in the log."""

    change: str
    episode_id: UUID | None
    event_id: UUID
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class Fact:
    """One version of a relationship, with both ends resolved to surviving entities."""

    relationship_id: UUID
    version: int
    source_entity_id: UUID
    source_name: str | None
    relation_type: str
    target_entity_id: UUID
    target_name: str | None
    fact: str | None
    attributes: dict[str, str]
    confidence: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    expired_at: datetime | None
    invalidated_by: UUID | None
    reason: str | None
    provenance: Provenance
    episode_ids: tuple[UUID, ...] = ()
    """The episodes whose statements asserted this fact (and its corrections), first first."""


@dataclass(frozen=True)
class EntityState:
    """What was said of an entity: its name, type and attributes, and when it held."""

    entity_id: UUID
    name: str
    entity_type: str
    attributes: dict[str, str]
    confidence: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime


@dataclass(frozen=True)
class EntityRecord(EntityState):
    """An entity as it stands now, with the names of duplicates merged into it."""

    updated_at: datetime
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class EntityVersion(EntityState):
    """The entity right after one extraction or merge touched it."""

    extracted_id: UUID
    provenance: Provenance


@dataclass(frozen=True)
class Alias:
    """An entity id merged into this one."""

    alias_id: UUID
    name: str | None
    stage: str
    score: float | None
    recorded_at: datetime
    provenance: Provenance


@dataclass(frozen=True)
class EntityHistory:
    """Everything known about an entity: now, every version, every relationship version."""

    entity: EntityRecord
    aliases: tuple[Alias, ...]
    versions: tuple[EntityVersion, ...]
    relationships: tuple[Fact, ...]
