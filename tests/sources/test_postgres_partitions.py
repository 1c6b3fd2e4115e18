"""Partitioned tables, against a real PostgreSQL 18: one table, its partitions folded in."""

from __future__ import annotations

from events.schema import Column, ForeignKey, IncomingForeignKey, Index, Partition, TableObserved
from runtime.databases import execute
from sources.checkpoint import MemoryCheckpoint
from sources.postgres import PostgresSource
from sources.schema_snapshot import with_hash
from sources.sink import MemorySink
from tests.sources import test_postgres_source as pg
from tests.sources.test_postgres_source import by_table

database = pg.database  # the same fixture: a fresh, empty database of its own

# The foreign key to users is declared on each partition only, never on events itself.
EVENTS = """
CREATE TABLE users (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE events (
    id int NOT NULL, user_id int NOT NULL, at date NOT NULL, kind text,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
ALTER TABLE events_2024 ADD CONSTRAINT events_2024_user_fk
    FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE events_2025 ADD CONSTRAINT events_2025_user_fk
    FOREIGN KEY (user_id) REFERENCES users (id);
CREATE INDEX events_2024_by_user ON events_2024 (user_id);
CREATE TABLE event_notes (
    id int PRIMARY KEY, event_id int NOT NULL, event_at date NOT NULL, body text,
    FOREIGN KEY (event_id, event_at) REFERENCES events (id, at)
);
"""
USERS, EVENTS_FQN, NOTES = "app.public.users", "app.public.events", "app.public.event_notes"


async def observe(dsn: str, schemas: list[str] | None = None) -> dict[str, TableObserved]:
    sink = MemorySink()
    await PostgresSource("app", dsn, schemas=schemas).sync_once(sink, MemoryCheckpoint())
    return by_table(sink)


async def test_partitions_are_part_of_their_table_not_tables_of_their_own(database: str) -> None:
    await execute(database, EVENTS)
    tables = await observe(database)
    assert set(tables) == {USERS, EVENTS_FQN, NOTES}
    events = tables[EVENTS_FQN]
    assert events.object_type == "table"
    assert events.partition_key == "RANGE (at)"
    assert events.partitions == (
        Partition(
            name="app.public.events_2024",
            bound="FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
        ),
        Partition(
            name="app.public.events_2025",
            bound="FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
        ),
    )
    assert (tables[USERS].partitions, tables[USERS].partition_key) == ((), None)


async def test_foreign_keys_declared_on_partitions_belong_to_the_partitioned_table(
    database: str,
) -> None:
    await execute(database, EVENTS)
    tables = await observe(database)
    # Declared twice, once per partition: one key of the parent, named after the first.
    assert tables[EVENTS_FQN].foreign_keys == (
        ForeignKey(
            name="events_2024_user_fk",
            columns=("user_id",),
            references_table=USERS,
            references_columns=("id",),
        ),
    )
    assert tables[USERS].referenced_by == (
        IncomingForeignKey(
            name="events_2024_user_fk",
            from_table=EVENTS_FQN,
            from_columns=("user_id",),
            columns=("id",),
        ),
    )
    assert [r.from_table for r in tables[EVENTS_FQN].referenced_by] == [NOTES]


async def test_a_foreign_key_to_a_partition_points_at_its_partitioned_table(
    database: str,
) -> None:
    await execute(
        database,
        EVENTS
        + """
        CREATE TABLE event_flags (
            id int PRIMARY KEY, event_id int, event_at date,
            FOREIGN KEY (event_id, event_at) REFERENCES events_2024 (id, at));
        """,
    )
    tables = await observe(database)
    [flag_key] = tables["app.public.event_flags"].foreign_keys
    assert (flag_key.references_table, flag_key.references_columns) == (EVENTS_FQN, ("id", "at"))
    assert [r.from_table for r in tables[EVENTS_FQN].referenced_by] == [
        "app.public.event_flags",
        NOTES,
    ]


async def test_keys_and_indexes_declared_on_one_partition_stay_that_partitions(
    database: str,
) -> None:
    await execute(
        database,
        EVENTS + "ALTER TABLE events_2025 ADD CONSTRAINT events_2025_kind UNIQUE (kind);",
    )
    events = (await observe(database))[EVENTS_FQN]
    assert events.primary_key == ("id", "at")
    assert [(i.name, i.columns, i.unique) for i in events.indexes] == [
        ("events_pkey", ("id", "at"), True)
    ]


async def test_sub_partitions_in_other_schemas_are_folded_into_the_top_table(
    database: str,
) -> None:
    await execute(
        database,
        """
        CREATE SCHEMA archive;
        CREATE TABLE users (id int PRIMARY KEY);
        CREATE TABLE kinds (code text PRIMARY KEY);
        CREATE TABLE events (id int NOT NULL, user_id int, kind text, at date NOT NULL)
            PARTITION BY RANGE (at);
        CREATE TABLE archive.events_old PARTITION OF events
            FOR VALUES FROM ('2000-01-01') TO ('2024-01-01') PARTITION BY LIST (kind);
        CREATE TABLE archive.events_old_a PARTITION OF archive.events_old FOR VALUES IN ('a');
        CREATE TABLE archive.events_old_rest PARTITION OF archive.events_old DEFAULT;
        CREATE TABLE events_new PARTITION OF events DEFAULT;
        -- Same name on two partitions, two different keys: both kept, told apart.
        ALTER TABLE archive.events_old_a ADD CONSTRAINT ref_fk
            FOREIGN KEY (user_id) REFERENCES users (id);
        ALTER TABLE events_new ADD CONSTRAINT ref_fk FOREIGN KEY (kind) REFERENCES kinds (code);
        INSERT INTO users VALUES (1);
        INSERT INTO events SELECT g, 1, 'a', '2020-01-01'::date + g FROM generate_series(1, 300) g;
        INSERT INTO events SELECT g, NULL, NULL, '2023-01-01'::date + g
            FROM generate_series(1, 200) g;
        ANALYZE archive.events_old_a, archive.events_old_rest, events_new;
        """,
    )
    tables = await observe(database, schemas=["public"])
    assert set(tables) == {USERS, "app.public.kinds", EVENTS_FQN}
    events = tables[EVENTS_FQN]
    assert [(p.name, p.parent, p.bound) for p in events.partitions] == [
        (
            "app.archive.events_old",
            None,
            "FOR VALUES FROM ('2000-01-01') TO ('2024-01-01')",
        ),
        ("app.archive.events_old_a", "app.archive.events_old", "FOR VALUES IN ('a')"),
        ("app.archive.events_old_rest", "app.archive.events_old", "DEFAULT"),
        ("app.public.events_new", None, "DEFAULT"),
    ]
    assert [(k.name, k.columns, k.references_table) for k in events.foreign_keys] == [
        ("events_new.ref_fk", ("kind",), "app.public.kinds"),
        ("ref_fk", ("user_id",), USERS),
    ]
    assert [r.from_table for r in tables[USERS].referenced_by] == [EVENTS_FQN]
    # Autovacuum analyzes partitions, not their parent: the estimate is their sum.
    assert events.row_count_approx == 500


async def test_a_new_partition_observes_its_table_again_and_nothing_else(database: str) -> None:
    await execute(database, EVENTS)
    checkpoint = MemoryCheckpoint()
    source = PostgresSource("app", database)
    await source.sync_once(MemorySink(), checkpoint)
    await execute(
        database,
        "CREATE TABLE events_2026 PARTITION OF events "
        "FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
    )
    sink = MemorySink()
    assert await source.sync_once(sink, checkpoint) == 1
    [again] = by_table(sink).values()
    assert again.fully_qualified_name == EVENTS_FQN
    assert again.partitions[-1].name == "app.public.events_2026"
    assert await source.sync_once(MemorySink(), checkpoint) == 0


# What metadata_hash gave this snapshot before partitions existed: checkpoints written
# then must still match, or upgrading would observe every table again.
HASH_BEFORE_PARTITIONS = "0e4e0f9a94a6a18dbba6928db5829a3bcd1499d94b0c954158b72e9abd7dd8d4"


def test_a_table_that_is_not_partitioned_hashes_as_before_partitions_existed() -> None:
    orders = TableObserved(
        database="app", schema_name="public", table_name="orders", database_type="postgres",
        columns=(Column(name="id", type="integer", nullable=False),
                 Column(name="user_id", type="integer")),
        primary_key=("id",),
        foreign_keys=(ForeignKey(name="orders_user_fk", columns=("user_id",),
                                 references_table=USERS, references_columns=("id",)),),
        referenced_by=(IncomingForeignKey(name="items_order_fk", from_table="app.public.items",
                                          from_columns=("order_id",), columns=("id",)),),
        indexes=(Index(name="orders_pkey", columns=("id",), unique=True),),
        comment="Orders", row_count_approx=5, metadata_hash="",
    )  # fmt: skip
    assert with_hash(orders).metadata_hash == HASH_BEFORE_PARTITIONS
    partitioned = orders.model_copy(
        update={
            "partition_key": "HASH (id)",
            "partitions": (Partition(name="app.public.orders_0", bound="FOR VALUES WITH ..."),),
        }
    )
    assert with_hash(partitioned).metadata_hash != HASH_BEFORE_PARTITIONS
