"""Markdown for a documented table and a domain overview."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from events.schema import TableObserved

PRIORITY_NAMES = {1: "core", 2: "standard", 3: "system"}
TEMPLATE_NOTICE = "_Documentation generated from the schema by templates, not by a language model._"
_TEMPLATE_GENERATORS = frozenset({"template", "local"})  # "local": events before 'template'


def by_templates(generated_by: str) -> bool:
    """True when documentation came from the local templates, not from a language model."""
    return generated_by in _TEMPLATE_GENERATORS


def with_notice(content: str, generated_by: str) -> str:
    """``content`` saying, under its title, that templates wrote it (when they did).

    Idempotent, so documentation rendered before the notice existed gets it on export.
    """
    if not by_templates(generated_by) or TEMPLATE_NOTICE in content:
        return content
    lines = content.split("\n")
    if not lines[0].startswith("# "):
        return "\n".join([TEMPLATE_NOTICE, "", content])
    rest = lines[2:] if len(lines) > 1 and not lines[1] else lines[1:]
    return "\n".join([lines[0], "", TEMPLATE_NOTICE, "", *rest])


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ").strip()


def table_markdown(
    table: TableObserved,
    domain: str,
    priority: int,
    description: str,
    columns: Mapping[str, str],
    from_comments: Sequence[str],
    key_columns: Sequence[str],
    generated_by: str,
) -> str:
    """The page ``docs/{database}/{domain}/{table}.md``; ``generated_by`` is 'llm' or
    'template' (then the page says so under its title)."""
    fk_cols = {c for fk in table.foreign_keys for c in fk.columns}
    rows = f"≈ {table.row_count_approx} rows" if table.row_count_approx is not None else "rows n/a"
    out = [
        f"# {table.table_name}",
        "",
        f"`{table.fully_qualified_name}` · {table.object_type} · domain `{domain}` · "
        f"priority {priority} ({PRIORITY_NAMES.get(priority, '?')}) · {rows}",
        "",
    ]
    if table.comment:
        out += [f"> Database comment (kept verbatim): {_cell(table.comment)}", ""]
    out += [description, "", "## Columns", "", "| Column | Type | Null | Key | Description |"]
    out.append("|---|---|---|---|---|")
    for c in table.columns:
        key = "/".join(
            k for k, on in (("PK", c.name in table.primary_key), ("FK", c.name in fk_cols)) if on
        )
        text = _cell(columns.get(c.name, ""))
        if c.name in from_comments:
            text += " _(database comment)_"
        null = "yes" if c.nullable else "no"
        out.append(f"| {_cell(c.name)} | {_cell(c.type)} | {null} | {key} | {text} |")
    out += ["", f"Key columns: {', '.join(f'`{k}`' for k in key_columns) or 'none'}", ""]
    if table.foreign_keys:
        out += ["## Foreign keys", ""]
        out += [
            f"- ({', '.join(fk.columns)}) → `{fk.references_table}` "
            f"({', '.join(fk.references_columns)})"
            for fk in table.foreign_keys
        ]
        out.append("")
    if table.referenced_by:
        out += ["## Referenced by", ""]
        out += [f"- `{r.from_table}` ({', '.join(r.from_columns)})" for r in table.referenced_by]
        out.append("")
    if table.indexes:
        out += ["## Indexes", ""]
        out += [
            f"- {i.name}: ({', '.join(i.columns)}){' unique' if i.unique else ''}"
            for i in table.indexes
        ]
        out.append("")
    if table.partitions:
        out += ["## Partitions", ""]
        key = f" by `{_cell(table.partition_key)}`" if table.partition_key else ""
        out += [
            f"Partitioned{key}. The partitions are part of this table, not tables of their "
            "own: query this table, and its foreign keys cover theirs.",
            "",
        ]
        for p in table.partitions:
            bound = f": {_cell(p.bound)}" if p.bound else ""
            under = f" (in `{p.parent}`)" if p.parent else ""
            out.append(f"- `{p.name}`{under}{bound}")
        out.append("")
    return with_notice("\n".join(out), generated_by)


def domain_markdown(
    domain: str,
    title: str,
    description: str,
    members: Sequence[TableObserved],
    er_diagram: str,
    joins: Sequence[str],
    generated_by: str,
) -> str:
    """The overview page ``docs/{database}/{domain}/README.md``."""
    out = [f"# {title}", "", f"Domain `{domain}`.", "", description, "", "## Tables", ""]
    for t in members:
        note = f" — {_cell(t.comment)}" if t.comment else ""
        out.append(f"- [`{t.fully_qualified_name}`]({t.table_name}.md){note}")
    out += ["", "## Entity relationships", "", "```mermaid", er_diagram.rstrip(), "```", ""]
    if joins:
        out += ["## Common joins", "", *(f"- `{j}`" for j in joins), ""]
    return with_notice("\n".join(out), generated_by)
