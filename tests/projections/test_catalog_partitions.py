"""Join paths through a partitioned table whose foreign keys live on its partitions only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from projections.catalog import catalog_projection
from projections.catalog import queries as q
from sources.pg_catalog import introspect
from tests.projections.feed import opened
from tests.projections.test_catalog_join_path import observed, run
from tests.projections.test_runner import fresh_database
from tests.sources.test_postgres_partitions import EVENTS as PARTITIONED

# The source tests' partitioned events (foreign keys on the partitions only), a table
# referencing one partition, and rows.
EVENTS = (
    PARTITIONED
    + """
CREATE TABLE event_flags (
    id int PRIMARY KEY, event_id int, event_at date,
    FOREIGN KEY (event_id, event_at) REFERENCES events_2025 (id, at)
);
INSERT INTO users VALUES (1, 'Ada'), (2, 'Bob');
INSERT INTO events VALUES (10, 1, '2024-05-01'), (11, 2, '2025-02-01'), (12, 1, '2025-03-01');
INSERT INTO event_notes VALUES (100, 10, '2024-05-01'), (101, 11, '2025-02-01'),
    (102, 11, '2025-02-01');
INSERT INTO event_flags VALUES (200, 12, '2025-03-01'), (201, NULL, NULL);
"""
)
USERS, EVENTS_FQN = "app.public.users", "app.public.events"
NOTES, FLAGS = "app.public.event_notes", "app.public.event_flags"


@pytest.fixture
async def catalog(postgres_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    dsn = await fresh_database(postgres_dsn)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(EVENTS)
        tables = await introspect(conn, "app")
    finally:
        await conn.close()
    async with opened(catalog_projection(dsn)) as projection:
        await observed(projection, tables)
        yield projection.pool


async def test_the_join_path_runs_through_the_partitioned_table(catalog: asyncpg.Pool) -> None:
    path = await q.join_path(catalog, NOTES, USERS)
    assert path.path_found
    assert path.hop_count == 2
    assert [(s.from_table, s.to_table, s.join_type, s.foreign_key) for s in path.path] == [
        (NOTES, EVENTS_FQN, "INNER", "event_notes_event_id_event_at_fkey"),
        (EVENTS_FQN, USERS, "INNER", "events_2024_user_fk"),
    ]
    assert path.path[1].on_clause == '"public"."events"."user_id" = "public"."users"."id"'
    rows = await run(catalog, path)
    # Every note kept once, with its user: r[0] is the note's id, the first column.
    assert sorted((r[0], r["name"]) for r in rows) == [(100, "Ada"), (101, "Bob"), (102, "Bob")]


async def test_a_key_to_a_partition_joins_through_the_partitioned_table(
    catalog: asyncpg.Pool,
) -> None:
    path = await q.join_path(catalog, FLAGS, USERS)
    assert path.hop_count == 2
    assert [(s.to_table, s.join_type) for s in path.path] == [
        (EVENTS_FQN, "LEFT"),  # the flag's key is nullable
        (USERS, "LEFT"),
    ]
    assert len(await run(catalog, path)) == 2  # the flag without an event is kept


async def test_partitions_are_neither_found_nor_known_as_tables(catalog: asyncpg.Pool) -> None:
    assert await q.search_tables_by_name(catalog, "events_20") == []
    assert [t.name for t in await q.search_tables_by_name(catalog, "events")] == [EVENTS_FQN]
    assert await q.get_table(catalog, "app.public.events_2024") is None
    events = await q.get_table(catalog, EVENTS_FQN)
    assert events is not None
    assert [fk.references_table for fk in events.foreign_keys] == [USERS]
