"""From a state and its changes to ``TableDocumented`` / ``DomainDocumented`` events.

This is the only part that asks the LLM port. Each table and domain is one request;
they run concurrently up to ``concurrency``. A failure documents nothing for that item
and is reported, so the caller can dead-letter it; the state is unaffected.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from events.base import Event
from events.documents import DomainDocumented, TableDocumented
from events.schema import TableObserved
from streams.documenter import mermaid, prompts, render, templates
from streams.documenter.planner import Incoming, incoming_index
from streams.documenter.state import Changes, SchemaState
from streams.llm import LLMProvider, LocalProvider, StructuredResult, provider_from_settings

DOCUMENTED = "tables.documented"
R = TypeVar("R")
_SAME_NAMED = ("tenant", "fully_qualified_name", "database", "schema_name", "table_name",
               "metadata_hash", "database_type", "row_count_approx")  # fmt: skip
"""Fields a table's documentation copies from its snapshot under the same name."""


def make_provider(env: dict[str, str] | None = None) -> LLMProvider:
    """``anthropic`` (falling back to local templates) with a key, else local templates."""
    return provider_from_settings(templates.register(LocalProvider()), env)


def domain_key(database: str, domain: str) -> str:
    """The topic key of a domain's documentation."""
    return f"{database}.{domain}"


@dataclass
class Documented:
    """Keyed events for ``tables.documented``, and what could not be documented."""

    events: list[tuple[str, Event]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)


def _provenance(result: StructuredResult[Any]) -> dict[str, Any]:
    return {
        "generated_by": result.generated_by,
        "model": result.model,
        "provider": result.provider,
        "prompt_hash": result.prompt_hash,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "fallback_reason": result.fallback_reason,
    }


def _from_snapshot(table: TableObserved) -> dict[str, Any]:
    """What a table's documentation keeps of the snapshot it documents."""
    fields = {name: getattr(table, name) for name in _SAME_NAMED}
    return {**fields, "existing_comment": table.comment}


class Documenter:
    """Documents what :func:`~streams.documenter.state.advance` says changed."""

    def __init__(self, provider: LLMProvider, concurrency: int = 8) -> None:
        self.provider = provider
        self._limit = asyncio.Semaphore(concurrency)

    async def _guard(self, what: str, work: Awaitable[R], out: Documented) -> R | None:
        async with self._limit:
            try:
                return await work
            except Exception as exc:  # one bad item must not lose the others
                out.failures.append((what, f"{type(exc).__name__}: {exc}"))
                return None

    async def document(self, state: SchemaState, changes: Changes) -> Documented:
        """Events for every changed table, then every changed or retired domain."""
        out = Documented()
        if state.plan is None:
            return out
        incoming = incoming_index(state.tables)
        tables = await asyncio.gather(
            *(
                self._guard(f, self.table(state, state.tables[f], incoming), out)
                for f in changes.tables
            )
        )
        domains = await asyncio.gather(
            *(self._guard(d, self.domain(state, d, incoming), out) for d in changes.domains)
        )
        for event in [*tables, *domains]:
            if isinstance(event, TableDocumented):
                out.events.append((event.fully_qualified_name, event))
            elif isinstance(event, DomainDocumented):
                out.events.append((domain_key(event.database, event.domain), event))
        for d in changes.retired:
            retired = DomainDocumented(
                tenant=_tenant(state),
                domain=d,
                database=state.database,
                description="This domain no longer exists.",
                tables=(),
                generated_by="template",
                model="none",
                content="",
            )
            out.events.append((domain_key(state.database, d), retired))
        return out

    async def table(
        self, state: SchemaState, table: TableObserved, incoming: Incoming
    ) -> TableDocumented:
        assert state.plan is not None
        spec = state.plan.tables[table.fully_qualified_name]
        request = prompts.table_request(table, spec, incoming)
        result = await self.provider.structured(request)
        doc = result.value
        names = [c.name for c in table.columns]
        generated = {c.name: c.description for c in doc.columns if c.name in names}
        columns = {
            c.name: c.comment or generated.get(c.name) or templates.describe_column(table, c)
            for c in table.columns
        }
        from_comments = tuple(c.name for c in table.columns if c.comment)
        keys = tuple(dict.fromkeys(k for k in doc.key_columns if k in names)) or tuple(
            templates.key_columns(table)
        )
        content = render.table_markdown(
            table,
            spec.domain,
            spec.priority,
            doc.description,
            columns,
            from_comments,
            keys,
            result.generated_by,
        )
        related = tuple(dict.fromkeys(f for f, _, _ in prompts.neighbours(table, incoming)))
        return TableDocumented(
            **_from_snapshot(table),
            domain=spec.domain,
            description=doc.description,
            column_descriptions=columns,
            keywords=tuple(doc.keywords),
            priority=spec.priority,
            key_columns=keys,
            columns_from_comments=from_comments,
            related_tables=related,
            content=content,
            **_provenance(result),
        )

    async def domain(self, state: SchemaState, domain: str, incoming: Incoming) -> DomainDocumented:
        assert state.plan is not None
        members = [state.tables[f] for f in state.plan.domains[domain]]
        centre = state.plan.centres[domain]
        joins = mermaid.common_joins(members, state.tables, incoming)
        result = await self.provider.structured(
            prompts.domain_request(domain, members, centre, joins)
        )
        diagram = mermaid.er_diagram(members, state.tables, incoming)
        doc = result.value
        return DomainDocumented(
            tenant=_tenant(state),
            domain=domain,
            database=state.database,
            description=doc.description,
            tables=tuple(t.fully_qualified_name for t in members),
            er_diagram=diagram,
            common_joins=tuple(joins),
            title=doc.title,
            graph_hash=state.plan.domain_hashes[domain],
            content=render.domain_markdown(
                domain, doc.title, doc.description, members, diagram, joins, result.generated_by
            ),
            **_provenance(result),
        )


def _tenant(state: SchemaState) -> str:
    return next(iter(state.tables.values())).tenant if state.tables else "default"
