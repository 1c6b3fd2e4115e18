"""Generated documentation on ``tribal.tables.documented`` (key: table FQN or domain)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from events.base import TenantEvent


class _Generated(TenantEvent):
    generated_by: str = Field(description="LLM provider, e.g. 'local' or 'anthropic'.")
    model: str
    content: str = Field(description="The Markdown document.")


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


class DomainDocumented(_Generated):
    """A business domain's overview was (re)generated."""

    avro_name: ClassVar[str] = "tribal.documents.DomainDocumented"

    domain: str
    database: str
    description: str
    tables: tuple[str, ...] = Field(description="Fully qualified names of its tables.")
    er_diagram: str | None = Field(default=None, description="Mermaid syntax.")
    common_joins: tuple[str, ...] = ()
