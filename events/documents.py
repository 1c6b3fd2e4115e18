"""Generated documentation on ``tribal.tables.documented`` (key: table FQN or domain).

A ``DomainDocumented`` whose ``tables`` is empty retires that domain (all its tables
were dropped or moved elsewhere); readers such as ``tribal export-docs`` skip it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import TenantEvent


class _Generated(TenantEvent):
    generated_by: str = Field(
        description="'llm' or 'template' (older events: the provider name, e.g. 'local')."
    )
    model: str
    content: str = Field(description="The Markdown document.")
    provider: str = Field(default="", description="LLM provider, e.g. 'local' or 'anthropic'.")
    prompt_hash: str = Field(default="", description="sha256 of the prompt that was asked.")
    input_tokens: int = 0
    output_tokens: int = 0
    fallback_reason: str | None = Field(
        default=None, description="Why the LLM was not used although configured, if it failed."
    )


class TableDocumented(_Generated):
    """A table's documentation was (re)generated from its latest snapshot."""

    avro_name: ClassVar[str] = "tribal.documents.TableDocumented"

    fully_qualified_name: str = Field(description="database.schema.table (the topic key).")
    database: str
    schema_name: str
    table_name: str
    domain: str
    description: str
    column_descriptions: dict[str, str] = Field(default_factory=dict)
    keywords: tuple[str, ...] = ()
    metadata_hash: str = Field(description="metadata_hash of the TableObserved documented.")
    priority: int = Field(default=2, description="1 core, 2 standard, 3 system (seed 001).")
    key_columns: tuple[str, ...] = Field(
        default=(), description="The columns that matter most: keys first."
    )
    existing_comment: str | None = Field(
        default=None, description="The table's database comment, kept verbatim."
    )
    columns_from_comments: tuple[str, ...] = Field(
        default=(),
        description="Columns whose description is their database comment, kept verbatim.",
    )
    database_type: str = ""
    row_count_approx: int | None = None
    related_tables: tuple[str, ...] = Field(
        default=(), description="FQNs this table references or is referenced by."
    )


def table_document_id(fully_qualified_name: str) -> str:
    """The search document (and chunk) id of a table's documentation."""
    return f"table:{fully_qualified_name}"


def table_search_text(event: TableDocumented) -> str:
    """What a table is found by (indexed and embedded): its name, description, keywords,
    related tables and column notes."""
    columns = "\n".join(f"{name}: {text}" for name, text in event.column_descriptions.items())
    keywords = ", ".join(event.keywords)
    parts = [event.fully_qualified_name, event.description, keywords, columns]
    return "\n\n".join(p for p in parts if p)


class DomainDocumented(_Generated):
    """A business domain's overview was (re)generated."""

    avro_name: ClassVar[str] = "tribal.documents.DomainDocumented"

    domain: str
    database: str
    description: str
    tables: tuple[str, ...] = Field(description="Fully qualified names of its tables.")
    er_diagram: str | None = Field(default=None, description="Mermaid syntax.")
    common_joins: tuple[str, ...] = ()
    title: str = Field(default="", description="Display name (from the LLM when available).")
    graph_hash: str = Field(
        default="", description="Hash of the domain's tables, keys and foreign keys."
    )
