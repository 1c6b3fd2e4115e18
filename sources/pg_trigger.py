"""The DDL event trigger: PostgreSQL tells the source the moment a schema changes.

Two event triggers (``ddl_command_end`` for CREATE/ALTER/COMMENT, ``sql_drop`` for
DROP) call one function that sends ``pg_notify('tribal_ddl', json)``. The source
LISTENs and re-introspects; the notification is only a doorbell, the catalog stays
the truth. Installing is idempotent and needs a superuser (event triggers do); when
it fails the source keeps polling.
"""

from __future__ import annotations

from typing import Any

from sources.pg_catalog import TRIGGER_SCHEMA

CHANNEL = "tribal_ddl"
FUNCTION = f"{TRIGGER_SCHEMA}.notify_ddl"
TRIGGERS = {"tribal_ddl_command_end": "ddl_command_end", "tribal_sql_drop": "sql_drop"}
_MAX_OBJECTS = 20  # keeps the payload well under pg_notify's 8000 bytes

FUNCTION_SQL = f"""
CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS event_trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  objects json;
BEGIN
  IF TG_EVENT = 'sql_drop' THEN
    SELECT json_agg(json_build_object('type', o.object_type, 'identity', o.object_identity))
      INTO objects
      FROM (SELECT * FROM pg_event_trigger_dropped_objects()
            WHERE schema_name IS DISTINCT FROM '{TRIGGER_SCHEMA}'
            LIMIT {_MAX_OBJECTS}) o;
  ELSE
    SELECT json_agg(json_build_object('type', o.object_type, 'identity', o.object_identity))
      INTO objects
      FROM (SELECT * FROM pg_event_trigger_ddl_commands()
            WHERE schema_name IS DISTINCT FROM '{TRIGGER_SCHEMA}'
            LIMIT {_MAX_OBJECTS}) o;
  END IF;
  IF objects IS NOT NULL THEN
    PERFORM pg_notify('{CHANNEL}', json_build_object(
      'event', TG_EVENT, 'tag', TG_TAG, 'objects', objects)::text);
  END IF;
END
$fn$
"""


async def install_trigger(conn: Any) -> None:
    """Create the schema, function and both event triggers unless they exist."""
    async with conn.transaction():
        # Two sources installing at once would race on CREATE EVENT TRIGGER.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('tribal_ddl_trigger'))")
        await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {TRIGGER_SCHEMA}")
        await conn.execute(FUNCTION_SQL)
        existing = {r["evtname"] for r in await conn.fetch("SELECT evtname FROM pg_event_trigger")}
        for name, event in TRIGGERS.items():
            if name not in existing:
                await conn.execute(
                    f"CREATE EVENT TRIGGER {name} ON {event} EXECUTE FUNCTION {FUNCTION}()"
                )


async def uninstall_trigger(conn: Any) -> None:
    """Remove the event triggers and the function (the schema stays)."""
    async with conn.transaction():
        for name in TRIGGERS:
            await conn.execute(f"DROP EVENT TRIGGER IF EXISTS {name}")
        await conn.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}()")
