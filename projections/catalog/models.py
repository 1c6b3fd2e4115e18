"""What catalog queries return, with seed 001's field names (``TableSchema``, ``JoinStep``…).

Plain frozen dataclasses: ``dataclasses.asdict`` turns any of them into the JSON the
HTTP API and the MCP tools answer with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

JoinType = Literal["INNER", "LEFT"]


class TableNotFoundError(LookupError):
    """A fully qualified name the catalog does not know."""

    code = "TABLE_NOT_FOUND"

    def __init__(self, fqn: str) -> None:
        super().__init__(f"table not found: {fqn}")
        self.fqn = fqn


@dataclass(frozen=True)
class ColumnDetail:
    name: str
    type: str
    nullable: bool
    default_value: str | None
    description: str
    is_primary_key: bool = False
    is_foreign_key: bool = False
    samples: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ForeignKeyDetail:
    name: str
    columns: tuple[str, ...]
    references_table: str
    references_columns: tuple[str, ...]


@dataclass(frozen=True)
class IndexDetail:
    name: str
    columns: tuple[str, ...]
    unique: bool


@dataclass(frozen=True)
class RelatedTable:
    name: str
    relationship: Literal["references", "referenced_by"]
    via_columns: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class TableSchema:
    """``get_table_schema``: the snapshot merged with its documentation."""

    name: str
    database: str
    schema: str
    table: str
    domain: str
    description: str
    row_count: int
    columns: tuple[ColumnDetail, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[ForeignKeyDetail, ...]
    indexes: tuple[IndexDetail, ...]
    related_tables: tuple[RelatedTable, ...] | None
    object_type: str
    database_type: str
    comment: str | None
    keywords: tuple[str, ...]
    priority: int
    key_columns: tuple[str, ...]
    metadata_hash: str
    documented: bool
    documentation_stale: bool
    """Documented from an older snapshot than the one observed last."""


@dataclass(frozen=True)
class TableSummary:
    name: str
    database: str
    schema: str
    table: str
    domain: str
    description: str
    row_count: int
    object_type: str


@dataclass(frozen=True)
class DomainInfo:
    """``list_domains`` entry."""

    name: str
    description: str
    table_count: int
    databases: tuple[str, ...]


@dataclass(frozen=True)
class DomainTableSummary:
    name: str
    description: str
    row_count: int


@dataclass(frozen=True)
class DomainOverview:
    """``get_domain_overview``."""

    domain: str
    title: str
    description: str
    databases: tuple[str, ...]
    tables: tuple[DomainTableSummary, ...]
    er_diagram: str | None
    common_joins: tuple[str, ...]


@dataclass(frozen=True)
class JoinStep:
    step: int
    from_table: str
    to_table: str
    join_type: JoinType
    on_clause: str
    foreign_key: str
    direction: Literal["child_to_parent", "parent_to_child"]


@dataclass(frozen=True)
class JoinPath:
    """``get_join_path``: the shortest FK path and a runnable ``SELECT``."""

    source: str
    target: str
    path_found: bool
    hop_count: int | None = None
    path: tuple[JoinStep, ...] = ()
    sql_snippet: str | None = None
