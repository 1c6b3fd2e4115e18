"""Per-database state as a pure fold: ``advance(state, events) -> (state, changes)``.

The state is the latest snapshot of every table of one database plus the domain plan
derived from them. ``changes`` says what to (re)document:

- a table whose ``metadata_hash`` changed, that is new, or whose domain or priority
  moved: renaming one column re-documents that table only;
- a domain whose tables, keys or foreign keys changed (its ``domain_hashes`` entry),
  and domains that vanished (retired). Domains are re-planned only when the FK graph
  (tables, primary keys, foreign keys) changed; otherwise the plan is kept.

Nothing here depends on what the LLM answered, so the state after any prefix of the
event log is a function of that prefix alone, and a restarted worker rebuilds it by
folding the log again without asking the LLM anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from events.schema import TableDropped, TableObserved
from streams.documenter.planner import (
    DatabasePlan,
    TableSpec,
    graph_signature,
    plan_database,
    stable_hash,
)

SchemaEvent = TableObserved | TableDropped


@dataclass(frozen=True)
class SchemaState:
    """The latest snapshot of every table of one database, and its plan."""

    database: str
    tables: Mapping[str, TableObserved] = field(default_factory=dict)
    plan: DatabasePlan | None = None
    graph_hash: str = ""


@dataclass(frozen=True)
class Changes:
    """What a step asks to (re)document."""

    tables: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    retired: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tables or self.domains or self.retired)


def lane_key(event: SchemaEvent) -> str:
    """The state key and lane (partition) key of an event: ``tenant/database``."""
    return f"{event.tenant}/{event.database}"


def advance(state: SchemaState, events: Sequence[SchemaEvent]) -> tuple[SchemaState, Changes]:
    """Apply ``events`` (all of ``state.database``, in log order) and diff the result."""
    tables = dict(state.tables)
    for event in events:
        fqn = event.fully_qualified_name
        if isinstance(event, TableDropped):
            tables.pop(fqn, None)
        else:
            tables[fqn] = event
    graph_hash = stable_hash(sorted(graph_signature(t) for t in tables.values()))
    old = state.plan or DatabasePlan(state.database)
    if state.plan is not None and graph_hash == state.graph_hash:
        plan = replace(old, tables={f: _refresh(old, f, t) for f, t in tables.items()})
    else:
        plan = plan_database(state.database, tables)
    changed = tuple(
        sorted(
            f
            for f, t in tables.items()
            if f not in state.tables
            or state.tables[f].metadata_hash != t.metadata_hash
            or (f not in old.tables)
            or (old.tables[f].domain, old.tables[f].priority)
            != (plan.tables[f].domain, plan.tables[f].priority)
        )
    )
    domains = tuple(
        sorted(d for d, h in plan.domain_hashes.items() if old.domain_hashes.get(d) != h)
    )
    retired = tuple(sorted(set(old.domains) - set(plan.domains)))
    return SchemaState(state.database, tables, plan, graph_hash), Changes(changed, domains, retired)


def _refresh(plan: DatabasePlan, fqn: str, table: TableObserved) -> TableSpec:
    spec = plan.tables[fqn]
    return replace(
        spec,
        column_count=len(table.columns),
        row_count_approx=max(table.row_count_approx or 0, 0),
        metadata_hash=table.metadata_hash,
        existing_comment=table.comment,
    )


def advance_lane(
    states: Mapping[str, SchemaState], events: Sequence[SchemaEvent]
) -> tuple[dict[str, SchemaState], dict[str, Changes]]:
    """Advance every database that ``events`` touch; others are left as they are."""
    out = dict(states)
    by_key: dict[str, list[SchemaEvent]] = {}
    for event in events:
        by_key.setdefault(lane_key(event), []).append(event)
    changes: dict[str, Changes] = {}
    for key, batch in by_key.items():
        current = out.get(key) or SchemaState(batch[0].database)
        out[key], changes[key] = advance(current, batch)
    return out, changes
