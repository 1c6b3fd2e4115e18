"""Database schema events on ``tribal.schema.changes`` (key ``db.schema.table``).

Field names follow seed 001 (``ColumnDetail``, ``ForeignKeyDetail``, ``IndexDetail``,
``TableSpec``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import NOTES_DOC, TenantEvent, Value


class Column(Value):
    """One column of a table, in ordinal order."""

    name: str
    type: str = Field(description="Database type as the catalog reports it, e.g. 'varchar(64)'.")
    nullable: bool = True
    default_value: str | None = None
    comment: str | None = Field(default=None, description="The database comment, if any.")
    sample_values: tuple[str, ...] = Field(
        default=(),
        description="A few distinct non-null values (opt-in; never for sensitive names).",
    )


class ForeignKey(Value):
    """A foreign key from this table to ``references_table``."""

    name: str
    columns: tuple[str, ...]
    references_table: str = Field(description="Fully qualified name database.schema.table.")
    references_columns: tuple[str, ...]


class IncomingForeignKey(Value):
    """A foreign key on another table that points at this one (seed 001 'referenced_by')."""

    name: str
    from_table: str = Field(description="Fully qualified name of the referencing table.")
    from_columns: tuple[str, ...] = Field(description="The referencing table's columns.")
    columns: tuple[str, ...] = Field(description="This table's referenced columns.")


class Index(Value):
    """An index on this table."""

    name: str
    columns: tuple[str, ...]
    unique: bool = False


class Partition(Value):
    """A partition of a partitioned table: part of its parent, never a table of its own."""

    name: str = Field(description="Fully qualified name database.schema.table.")
    bound: str | None = Field(
        default=None,
        description="Its partition bound, e.g. \"FOR VALUES FROM ('2024-01-01') TO "
        "('2025-01-01')\" or 'DEFAULT'.",
    )
    parent: str | None = Field(
        default=None,
        description="The partition it is a sub-partition of; None for a direct partition.",
    )


def qualified_name(database: str, schema: str, table: str) -> str:
    """``database.schema.table``: the name a table goes by in every event, document and
    search result, and the key of its events on the topic."""
    return f"{database}.{schema}.{table}"


class _TableEvent(TenantEvent):
    database: str
    schema_name: str
    table_name: str

    @property
    def fully_qualified_name(self) -> str:
        """``database.schema.table``, the topic key."""
        return qualified_name(self.database, self.schema_name, self.table_name)


class TableObserved(_TableEvent):
    """A table exists with this shape: the full snapshot after any change."""

    avro_name: ClassVar[str] = "tribal.schema.TableObserved"

    database_type: str = Field(description="'postgres' or 'snowflake'.")
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    indexes: tuple[Index, ...] = ()
    comment: str | None = Field(default=None, description="The table comment, if any.")
    row_count_approx: int | None = Field(default=None, description="Planner row estimate.")
    metadata_hash: str = Field(description="Hash of the snapshot, for change detection.")
    object_type: str = Field(
        default="table",
        description="'table', 'view', 'materialized_view' or 'foreign_table'.",
    )
    referenced_by: tuple[IncomingForeignKey, ...] = Field(
        default=(), description="Foreign keys of other tables that reference this one."
    )
    notes: tuple[str, ...] = Field(default=(), description=NOTES_DOC)
    partition_key: str | None = Field(
        default=None,
        description="How a partitioned table is split, e.g. 'RANGE (created_at)'; None when "
        "it is not partitioned.",
    )
    partitions: tuple[Partition, ...] = Field(
        default=(),
        description="The partitions of a partitioned table, at every level. They are not "
        "observed as tables: foreign keys declared on them, or pointing at them, are "
        "reported as this table's.",
    )


class TableDropped(_TableEvent):
    """A table no longer exists."""

    avro_name: ClassVar[str] = "tribal.schema.TableDropped"
