"""What the documenter asks the LLM port: output types and prompts (untrusted text fenced).

Table and column names, comments and sample values come from the database, so the
whole metadata block is fenced as data. ``context`` carries the same inputs as
values, for the local templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from events.schema import TableObserved
from streams.documenter.planner import Incoming, TableSpec
from streams.llm import StructuredRequest
from streams.llm.base import FENCE_RULE, fence

T = TypeVar("T", bound=BaseModel)

TABLE_TASK = "document_table"
DOMAIN_TASK = "document_domain"

SYSTEM = (
    "You write concise documentation of database tables for analysts and AI agents "
    "who must find the right table and join it correctly. Be factual: describe what "
    "one row represents and how the table is used; do not invent columns. Existing "
    "database comments are authoritative. " + FENCE_RULE
)


class ColumnNote(BaseModel):
    name: str = Field(description="The column name, exactly as given.")
    description: str = Field(description="One sentence: what the column holds.")


class TableDoc(BaseModel):
    description: str = Field(description="2-4 sentences: what one row is and how it is used.")
    columns: list[ColumnNote] = Field(description="One entry per column, in order.")
    key_columns: list[str] = Field(description="Keys first, then the most queried columns.")
    keywords: list[str] = Field(description="5-12 lower-case search terms, synonyms welcome.")


class DomainDoc(BaseModel):
    title: str = Field(description="A short human title for the business domain.")
    description: str = Field(description="2-4 sentences: what the domain covers.")


Neighbour = tuple[str, str, tuple[str, ...]]
"""(FQN, 'references' | 'referenced_by', via columns)."""


def neighbours(table: TableObserved, incoming: Incoming) -> list[Neighbour]:
    """Tables this one references or is referenced by, among the known ones."""
    out: list[Neighbour] = [
        (fk.references_table, "references", fk.columns) for fk in table.foreign_keys
    ]
    fqn = table.fully_qualified_name
    out.extend(
        (other.fully_qualified_name, "referenced_by", fk.columns)
        for other, fk in incoming.get(fqn, [])
        if other.fully_qualified_name != fqn
    )
    return out


def _column_line(table: TableObserved, index: int) -> str:
    c = table.columns[index]
    flags = [c.type, "null" if c.nullable else "not null"]
    if c.name in table.primary_key:
        flags.append("PK")
    flags += [f"FK→{fk.references_table}" for fk in table.foreign_keys if c.name in fk.columns]
    if c.default_value:
        flags.append(f"default {c.default_value}")
    line = f"- {c.name} ({', '.join(flags)})"
    if c.comment:
        line += f" — comment: {c.comment}"
    if c.sample_values:
        line += f" — samples: {', '.join(c.sample_values[:5])}"
    return line


def _partition_lines(table: TableObserved) -> list[str]:
    """Nothing for a table that is not partitioned, so its prompt (and hash) stays as it was."""
    if not table.partitions:
        return []
    lines = [
        f"partitioned by: {table.partition_key or 'unknown'} (its partitions are part of "
        "this table, not tables of their own)"
    ]
    lines += [f"- partition {p.name}: {p.bound or ''}".rstrip(": ") for p in table.partitions]
    return lines


def table_request(
    table: TableObserved, spec: TableSpec, incoming: Incoming
) -> StructuredRequest[TableDoc]:
    """The request that documents one table."""
    near = neighbours(table, incoming)
    meta = [
        f"table: {table.fully_qualified_name} ({table.object_type}, {table.database_type})",
        f"domain: {spec.domain}; rows ≈ {spec.row_count_approx}",
        f"primary key: {', '.join(table.primary_key) or 'none'}",
        *_partition_lines(table),
        f"comment: {table.comment or 'none'}",
        "columns:",
        *(_column_line(table, i) for i in range(len(table.columns))),
        "indexes: "
        + "; ".join(
            f"{i.name}({', '.join(i.columns)}){' unique' if i.unique else ''}"
            for i in table.indexes
        ),
        "related tables:",
        *(f"- {direction} {other} via {', '.join(cols)}" for other, direction, cols in near),
    ]
    return _request(
        TABLE_TASK,
        "Document the table described below. Give every column a description; "
        "key_columns lists the primary key, foreign keys and the columns people filter "
        "on most.",
        ("table metadata", meta),
        TableDoc,
        {"table": table, "spec": spec, "neighbours": near},
        max_tokens=2048,
    )


def domain_request(
    domain: str,
    members: Sequence[TableObserved],
    centre: str,
    joins: Sequence[str],
) -> StructuredRequest[DomainDoc]:
    """The request that names and describes one domain."""
    lines = [f"domain key: {domain}", f"central table: {centre}", "tables:"]
    lines += [f"- {t.fully_qualified_name}: {t.comment or ''}".rstrip(": ") for t in members]
    lines += ["joins:", *(f"- {j}" for j in joins)]
    return _request(
        DOMAIN_TASK,
        "Give this group of related tables a short business title and describe the "
        "domain they form.",
        ("domain metadata", lines),
        DomainDoc,
        {"domain": domain, "members": list(members), "centre": centre},
        max_tokens=1024,
    )


def _request(
    task: str,
    instruction: str,
    metadata: tuple[str, Sequence[str]],
    output_type: type[T],
    context: dict[str, Any],
    max_tokens: int,
) -> StructuredRequest[T]:
    """``instruction``, then the ``metadata`` lines fenced as data under their title."""
    title, lines = metadata
    return StructuredRequest(
        task=task,
        system=SYSTEM,
        prompt=f"{instruction}\n\n" + fence(title, "\n".join(lines)),
        output_type=output_type,
        context=context,
        max_tokens=max_tokens,
    )
