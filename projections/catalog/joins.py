"""Join paths over the foreign-key graph: pure functions over plain values.

Every foreign key is an edge usable in both directions: from the referencing (child)
table to the referenced (parent) one, and back. :func:`shortest_path` is a
breadth-first search, so the path has the fewest hops; ties go to child-to-parent
hops, then to table and constraint names, so the answer is deterministic.

The join type rule: the snippet starts ``FROM`` the source table and must keep
every one of its rows, neither dropping nor duplicating them by surprise.

* A hop is ``INNER`` when it follows an enforced foreign key from child to parent
  whose columns are all ``NOT NULL``: every child row then has exactly one parent,
  so the inner join keeps each row once.
* Every other hop is ``LEFT``: going from parent to child (a parent may have no
  children), a nullable foreign key (the child may have no parent), or a
  Snowflake key (declared but not enforced).
* Once a hop is ``LEFT``, all later hops are ``LEFT`` too: an ``INNER`` join on a
  column of a left-joined table would drop the rows the ``LEFT`` join kept.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from projections.catalog.models import JoinStep, JoinType
from sources.pg_catalog import quote_ident

UNENFORCED_KEYS = frozenset({"snowflake"})


@dataclass(frozen=True)
class TableRef:
    """Where a table lives, enough to name it in SQL."""

    fqn: str
    database: str
    schema: str
    table: str
    database_type: str

    def sql(self) -> str:
        """The quoted, schema-qualified name (database-qualified on Snowflake)."""
        parts = [self.schema, self.table]
        if self.database_type == "snowflake":
            parts.insert(0, self.database)
        return ".".join(quote_ident(p) for p in parts)


@dataclass(frozen=True)
class Edge:
    """A foreign key from ``child`` (its ``child_columns``) to ``parent``."""

    name: str
    """The foreign key's constraint name."""
    child: TableRef
    child_columns: tuple[str, ...]
    parent: TableRef
    parent_columns: tuple[str, ...]
    required: bool
    """All child columns are NOT NULL."""

    @property
    def enforced(self) -> bool:
        """Whether the database enforces the key (Snowflake only declares it)."""
        return self.child.database_type not in UNENFORCED_KEYS


@dataclass(frozen=True)
class Hop:
    """One edge walked from ``start`` to ``end``."""

    edge: Edge
    forward: bool
    """True when walked from child to parent."""

    @property
    def start(self) -> TableRef:
        return self.edge.child if self.forward else self.edge.parent

    @property
    def end(self) -> TableRef:
        return self.edge.parent if self.forward else self.edge.child


def _neighbours(edges: Iterable[Edge]) -> dict[str, list[Hop]]:
    out: dict[str, list[Hop]] = {}
    for edge in edges:
        if edge.child.fqn == edge.parent.fqn:
            continue  # a self-reference never shortens a path between two tables
        out.setdefault(edge.child.fqn, []).append(Hop(edge, True))
        out.setdefault(edge.parent.fqn, []).append(Hop(edge, False))
    for hops in out.values():
        hops.sort(key=lambda h: (not h.forward, h.end.fqn, h.edge.name))
    return out


def shortest_path(
    edges: Iterable[Edge], source: str, target: str, max_hops: int
) -> list[Hop] | None:
    """The fewest hops from ``source`` to ``target`` (at most ``max_hops``), or None."""
    if source == target:
        return []
    graph = _neighbours(edges)
    came_from: dict[str, Hop | None] = {source: None}
    frontier = deque([(source, 0)])
    while frontier:
        node, depth = frontier.popleft()
        if depth == max_hops:
            continue
        for hop in graph.get(node, ()):
            nxt = hop.end.fqn
            if nxt in came_from:
                continue
            came_from[nxt] = hop
            if nxt == target:
                return _unwind(came_from, target)
            frontier.append((nxt, depth + 1))
    return None


def _unwind(came_from: dict[str, Hop | None], target: str) -> list[Hop]:
    path: list[Hop] = []
    hop = came_from[target]
    while hop is not None:
        path.append(hop)
        hop = came_from[hop.start.fqn]
    return path[::-1]


def join_types(path: Sequence[Hop]) -> list[JoinType]:
    """INNER while every hop so far is a required, enforced child-to-parent key."""
    types: list[JoinType] = []
    inner = True
    for hop in path:
        inner = inner and hop.forward and hop.edge.required and hop.edge.enforced
        types.append("INNER" if inner else "LEFT")
    return types


def on_clause(hop: Hop) -> str:
    """``start.col = end.col`` for every column pair of the key, joined by AND."""
    start_cols, end_cols = (
        (hop.edge.child_columns, hop.edge.parent_columns)
        if hop.forward
        else (hop.edge.parent_columns, hop.edge.child_columns)
    )
    return " AND ".join(
        f"{hop.start.sql()}.{quote_ident(a)} = {hop.end.sql()}.{quote_ident(b)}"
        for a, b in zip(start_cols, end_cols, strict=True)
    )


def join_steps(path: Sequence[Hop]) -> list[JoinStep]:
    """Seed 001's ``JoinStep`` for every hop."""
    return [
        JoinStep(
            step=n,
            from_table=hop.start.fqn,
            to_table=hop.end.fqn,
            join_type=kind,
            on_clause=on_clause(hop),
            foreign_key=hop.edge.name,
            direction="child_to_parent" if hop.forward else "parent_to_child",
        )
        for n, (hop, kind) in enumerate(zip(path, join_types(path), strict=True), start=1)
    ]


def sql_snippet(source: TableRef, path: Sequence[Hop]) -> str:
    """``SELECT * FROM source JOIN … ON …`` following ``path``."""
    lines = ["SELECT *", f"FROM {source.sql()}"]
    for hop, kind in zip(path, join_types(path), strict=True):
        lines.append(f"{kind} JOIN {hop.end.sql()} ON {on_clause(hop)}")
    return "\n".join(lines)
