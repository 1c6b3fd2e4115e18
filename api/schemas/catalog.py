"""Seed 001 §6: ``search_tables``, ``get_table_schema``, ``get_join_path``,
``get_domain_overview`` and ``list_domains``.

Where an answer shows a catalog record as the catalog holds it (a foreign key, an index, a
related table, a domain), it is that record (:mod:`projections.catalog.models`), not a copy
of its fields."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from api.schemas.common import Budgeted, Paged, PagedResponse, Response
from events.limits import FQN_MAX, NAME_FILTER_MAX, QUERY_MAX
from events.text import CleanText
from projections.catalog.models import DomainInfo, ForeignKeyDetail, IndexDetail, RelatedTable

Fqn = str
_FQN = Field(min_length=3, max_length=FQN_MAX, description="database.schema.table")


class _Out(BaseModel):
    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


class SearchTablesInput(Paged):
    query: CleanText = Field(
        min_length=1, max_length=QUERY_MAX, description="Natural language query."
    )
    database: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    domain: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    limit: int = Field(default=5, ge=1, le=20)
    min_score: float = Field(default=0.0, ge=0.0, le=1.0)


class ColumnSummary(_Out):
    name: str
    type: str
    description: str
    is_primary_key: bool
    is_foreign_key: bool


class _TableHeading(_Out):
    """What a search hit and a full schema both start with: where the table is, what it is."""

    name: Fqn
    database: str
    schema_name: str = Field(alias="schema")
    table: str
    domain: str
    description: str


class TableSearchResult(_TableHeading):
    key_columns: list[ColumnSummary]
    row_count: int
    relevance_score: float = Field(ge=0.0, le=1.0)


class QueryInterpretation(_Out):
    original_query: str
    concepts: list[str]
    expanded_terms: list[str]
    domain_hint: str | None
    is_relationship_query: bool


class SearchTablesOutput(PagedResponse):
    tables: list[TableSearchResult] = Field(default_factory=list)
    total_matches: int = 0
    query_interpretation: QueryInterpretation | None = None


class GetTableSchemaInput(Budgeted):
    table: CleanText = _FQN
    include_samples: bool = False
    include_relationships: bool = True


class ColumnDetail(_Out):
    name: str
    type: str
    nullable: bool
    default_value: str | None
    description: str
    samples: list[str] | None = None


class TableSchema(_TableHeading):
    row_count: int
    columns: list[ColumnDetail]
    primary_key: list[str]
    foreign_keys: list[ForeignKeyDetail]
    indexes: list[IndexDetail]
    related_tables: list[RelatedTable] | None = None


class GetTableSchemaOutput(Response):
    table_schema: TableSchema | None = Field(default=None, alias="schema")


class GetJoinPathInput(Budgeted):
    source_table: CleanText = _FQN
    target_table: CleanText = _FQN
    max_hops: int = Field(default=3, ge=0, le=6)


class JoinStep(_Out):
    step: int
    from_table: Fqn
    to_table: Fqn
    join_type: Literal["INNER", "LEFT", "RIGHT"]
    on_clause: str


class GetJoinPathOutput(Response):
    path_found: bool = False
    source: Fqn = ""
    target: Fqn = ""
    hop_count: int | None = None
    path: list[JoinStep] | None = None
    sql_snippet: str | None = None


class GetDomainOverviewInput(Paged):
    domain: CleanText = Field(min_length=1, max_length=NAME_FILTER_MAX)
    database: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    limit: int = Field(default=50, ge=1, le=200, description="Tables per page.")


class DomainTableSummary(_Out):
    name: Fqn
    description: str
    row_count: int


class GetDomainOverviewOutput(PagedResponse):
    domain: str = ""
    description: str = ""
    databases: list[str] = Field(default_factory=list)
    tables: list[DomainTableSummary] = Field(default_factory=list)
    er_diagram: str | None = None
    common_joins: list[str] | None = None


class ListDomainsInput(Paged):
    database: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    limit: int = Field(default=50, ge=1, le=200)


class ListDomainsOutput(PagedResponse):
    domains: list[DomainInfo] = Field(default_factory=list)
