"""A strict structural check of Mermaid ``erDiagram`` text, after Mermaid's grammar.

``@mermaid-js/mermaid-cli`` needs the npm registry and a headless browser, neither of
which the test machines have; this follows ``erDiagram.jison`` for the subset the
documenter writes and rejects anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NAME = r"[A-Za-z_][A-Za-z0-9_-]*"
ATTR_WORD = r"[A-Za-z_*][A-Za-z0-9_\-\[\]()]*"
COMMENT = r'"[^"\n]*"'
LEFT = r"(?:\|o|\|\||\}o|\}\|)"
RIGHT = r"(?:o\||\|\||o\{|\|\{)"


def _line(pattern: str) -> re.Pattern[str]:
    """A line after ``erDiagram``: indented, then ``pattern`` and nothing else."""
    return re.compile(rf"^\s+{pattern}$")


ENTITY_OPEN = _line(rf"({NAME})\s*\{{")
ENTITY_ALONE = _line(rf"({NAME})")
ATTRIBUTE = _line(
    rf"{ATTR_WORD}\s+{ATTR_WORD}(?:\s+(?:PK|FK|UK)(?:\s*,\s*(?:PK|FK|UK))*)?(?:\s+{COMMENT})?"
)
CLOSE = _line(r"\}")
RELATION = _line(
    rf"({NAME})\s+({LEFT}(?:--|\.\.){RIGHT})\s+({NAME})\s*:\s*(?:{COMMENT}|[A-Za-z0-9_]+)"
)


@dataclass
class Diagram:
    entities: dict[str, int] = field(default_factory=dict)
    """Declared entity → attribute count."""
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    """(left entity, operator, right entity)."""


def parse_er(text: str) -> Diagram:
    """The diagram's entities and relationships; ``ValueError`` on any invalid line."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or lines[0].strip() != "erDiagram":
        raise ValueError("the first line must be 'erDiagram'")
    out = Diagram()
    open_entity: str | None = None
    for n, line in enumerate(lines[1:], start=2):
        if open_entity is not None:
            if CLOSE.match(line):
                open_entity = None
            elif ATTRIBUTE.match(line):
                out.entities[open_entity] += 1
            else:
                raise ValueError(f"line {n}: not an attribute: {line!r}")
        elif m := ENTITY_OPEN.match(line):
            open_entity = m.group(1)
            out.entities.setdefault(open_entity, 0)
        elif m := RELATION.match(line):
            out.relations.append((m.group(1), m.group(2), m.group(3)))
        elif m := ENTITY_ALONE.match(line):
            out.entities.setdefault(m.group(1), 0)
        else:
            raise ValueError(f"line {n}: not erDiagram syntax: {line!r}")
    if open_entity is not None:
        raise ValueError(f"entity {open_entity} is never closed")
    return out
