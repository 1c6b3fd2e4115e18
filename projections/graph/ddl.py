"""The graph's tables. Every table leads with ``group_id``: isolation is the index."""

from __future__ import annotations

_PROVENANCE = (
    'event_id uuid NOT NULL, topic text NOT NULL, partition integer NOT NULL, "offset" bigint '
    "NOT NULL"
)
"""The columns saying which event recorded a row and where it stands in the log."""

_STATEMENTS = (
    # Current state of each entity; merged duplicates leave it (their history stays).
    """CREATE TABLE IF NOT EXISTS {s}.entities (
        group_id text NOT NULL, entity_id uuid NOT NULL,
        name text NOT NULL, entity_type text NOT NULL, attributes jsonb NOT NULL,
        confidence text NOT NULL, valid_from timestamptz NOT NULL, valid_to timestamptz,
        recorded_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
        PRIMARY KEY (group_id, entity_id))""",
    """CREATE TABLE IF NOT EXISTS {s}.entity_versions (
        group_id text NOT NULL, entity_id uuid NOT NULL, change text NOT NULL,
        extracted_id uuid NOT NULL, name text NOT NULL, entity_type text NOT NULL,
        attributes jsonb NOT NULL, confidence text NOT NULL,
        valid_from timestamptz NOT NULL, valid_to timestamptz,
        recorded_at timestamptz NOT NULL, episode_id uuid, {provenance},
        PRIMARY KEY (group_id, entity_id, topic, partition, "offset", extracted_id))""",
    # alias_id -> the entity it was merged into (always the surviving one).
    """CREATE TABLE IF NOT EXISTS {s}.aliases (
        group_id text NOT NULL, alias_id uuid NOT NULL, entity_id uuid NOT NULL,
        alias_name text, stage text NOT NULL, score double precision,
        recorded_at timestamptz NOT NULL, episode_id uuid, {provenance},
        PRIMARY KEY (group_id, alias_id))""",
    "CREATE INDEX IF NOT EXISTS aliases_entity ON {s}.aliases (group_id, entity_id)",
    # One row per version; the current one has expired_at IS NULL.
    """CREATE TABLE IF NOT EXISTS {s}.relationships (
        group_id text NOT NULL, relationship_id uuid NOT NULL, version integer NOT NULL,
        source_entity_id uuid NOT NULL, target_entity_id uuid NOT NULL,
        relation_type text NOT NULL, fact text, attributes jsonb NOT NULL,
        confidence text NOT NULL, valid_from timestamptz NOT NULL, valid_to timestamptz,
        recorded_at timestamptz NOT NULL, expired_at timestamptz,
        change text NOT NULL, episode_id uuid, invalidated_by uuid, reason text,
        {provenance},
        PRIMARY KEY (group_id, relationship_id, version))""",
    "CREATE INDEX IF NOT EXISTS relationships_source "
    "ON {s}.relationships (group_id, source_entity_id)",
    "CREATE INDEX IF NOT EXISTS relationships_target "
    "ON {s}.relationships (group_id, target_entity_id)",
    # What was forgotten and when: facts recorded before it are never applied again,
    # whatever order a replay delivers the two topics in.
    """CREATE TABLE IF NOT EXISTS {s}.forgotten (
        scope text NOT NULL, key text NOT NULL, forgotten_at timestamptz NOT NULL,
        PRIMARY KEY (scope, key))""",
)

TABLES = tuple(statement.replace("{provenance}", _PROVENANCE) for statement in _STATEMENTS)
"""The graph's tables, ``{s}`` standing for its schema."""
