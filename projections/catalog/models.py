"""What catalog queries return, with seed 001's field names (``TableSchema``, ``JoinStep``…).

Plain frozen dataclasses: ``dataclasses.asdict`` turns any of them into the JSON the
HTTP API and the MCP tools answer with. Those of more than four fields are keyword-only:
the queries build them by name, so two fields of one type cannot trade places.
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


@dataclass(frozen=True, kw_only=True)
class ColumnDetail:
    """A column as observed, described by its documentation (else its comment)."""

    name: str
    type: str
    nullable: bool
    default_value: str | None
    description: str
    is_primary_key: bool = False
    is_foreign_key: bool = False
    samples: tuple[str, ...] | None = None
    """Sample values, when asked for (None: not asked)."""


@dataclass(frozen=True)
class ForeignKeyDetail:
    """A foreign key this table declares."""

    name: str
    columns: tuple[str, ...]
    references_table: str
    references_columns: tuple[str, ...]


@dataclass(frozen=True)
class IndexDetail:
    """An index on the table."""

    name: str
    columns: tuple[str, ...]
    unique: bool


@dataclass(frozen=True)
class RelatedTable:
    """A table at the other end of one of this table's foreign keys."""

    name: str
    relationship: Literal["references", "referenced_by"]
    via_columns: tuple[str, ...]
    """The referencing table's columns, whichever end this table is."""
    description: str


@dataclass(frozen=True, kw_only=True)
class TableSummary:
    """A table found by name, or listed in a domain."""

    name: str
    database: str
    schema: str
    table: str
    domain: str
    description: str
    row_count: int
    object_type: str


@dataclass(frozen=True, kw_only=True)
class TableSchema(TableSummary):
    """``get_table_schema``: the snapshot merged with its documentation."""

    columns: tuple[ColumnDetail, ...]
    primary_key: tuple[str, ...]
    foreign_keys: tuple[ForeignKeyDetail, ...]
    indexes: tuple[IndexDetail, ...]
    related_tables: tuple[RelatedTable, ...] | None
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
class DomainInfo:
    """A business domain: what it is, how many tables it has, in which databases."""

    name: str
    description: str
    """The first database's overview of it ("" before the documenter wrote one)."""
    table_count: int
    databases: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class DomainOverview:
    """``get_domain_overview``."""

    domain: str
    title: str
    """The overview's title (the domain's name while none was written)."""
    description: str
    """Every database's overview of it, a paragraph each."""
    databases: tuple[str, ...]
    tables: tuple[TableSummary, ...]
    er_diagram: str | None = None
    """A Mermaid ER diagram of its tables (None while the documenter drew none)."""
    common_joins: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class JoinStep:
    """One join of a :class:`JoinPath`, in the order the ``SELECT`` makes them."""

    step: int
    from_table: str
    to_table: str
    join_type: JoinType
    on_clause: str
    """``start.col = end.col`` for each column of the key, joined by AND."""
    foreign_key: str
    """The name of the foreign key it follows."""
    direction: Literal["child_to_parent", "parent_to_child"]


@dataclass(frozen=True, kw_only=True)
class JoinPath:
    """``get_join_path``: the shortest FK path and a runnable ``SELECT``."""

    source: str
    """The table the ``SELECT`` starts ``FROM``."""
    target: str
    path_found: bool
    """False when no path of at most ``max_hops`` joins the two tables."""
    path: tuple[JoinStep, ...] = ()
    sql_snippet: str | None = None

    @property
    def hop_count(self) -> int | None:
        """How many joins the path takes; None when there is no path."""
        return len(self.path) if self.path_found else None
