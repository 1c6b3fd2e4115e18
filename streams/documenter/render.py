"""Markdown for a documented table and a domain overview."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from events.schema import TableObserved

PRIORITY_NAMES = {1: "core", 2: "standard", 3: "system"}


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
) -> str:
    """The page ``docs/{database}/{domain}/{table}.md``."""
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
    return "\n".join(out)


def domain_markdown(
    domain: str,
    title: str,
    description: str,
    members: Sequence[TableObserved],
    er_diagram: str,
    joins: Sequence[str],
) -> str:
    """The overview page ``docs/{database}/{domain}/README.md``."""
    out = [f"# {title}", "", f"Domain `{domain}`.", "", description, "", "## Tables", ""]
    for t in members:
        note = f" — {_cell(t.comment)}" if t.comment else ""
        out.append(f"- [`{t.fully_qualified_name}`]({t.table_name}.md){note}")
    out += ["", "## Entity relationships", "", "```mermaid", er_diagram.rstrip(), "```", ""]
    if joins:
        out += ["## Common joins", "", *(f"- `{j}`" for j in joins), ""]
    return "\n".join(out)
