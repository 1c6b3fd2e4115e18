"""``tribal export-docs``: documentation events → a docs tree and its manifest (seed 001).

Layout under the output directory: ``{database}/README.md`` (overview),
``{database}/{domain}/README.md`` (domain overview) and
``{database}/{domain}/{table}.md``, plus ``documentation-manifest.json`` listing every
file as an ``IndexableFile`` with its sha256 and size.

The latest event per table and per domain wins (by ``occurred_at``). A table is
exported when the latest overview of its domain lists it, so dropped or moved tables
disappear; a domain whose latest overview lists no table is retired.

Documentation the local templates wrote says so under its title (also when it was
recorded before pages said so), and the manifest gives every file's ``generated_by``
('template' or 'llm') and, when templates wrote any, a note saying how many.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from events.base import Event
from events.documents import DomainDocumented, TableDocumented
from runtime.settings import TribalSettings
from streams.documenter.render import TEMPLATE_NOTICE, by_templates, with_notice

MANIFEST = "documentation-manifest.json"


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def latest(
    events: Iterable[Event],
) -> tuple[dict[str, TableDocumented], dict[tuple[str, str], DomainDocumented]]:
    """The newest documentation of every table (by FQN) and domain (by database, key)."""
    tables: dict[str, TableDocumented] = {}
    domains: dict[tuple[str, str], DomainDocumented] = {}
    for e in events:
        if isinstance(e, TableDocumented):
            old = tables.get(e.fully_qualified_name)
            if old is None or e.occurred_at >= old.occurred_at:
                tables[e.fully_qualified_name] = e
        elif isinstance(e, DomainDocumented):
            key = (e.database, e.domain)
            if key not in domains or e.occurred_at >= domains[key].occurred_at:
                domains[key] = e
    return tables, domains


def _generator(generated_by: str) -> str:
    return "template" if by_templates(generated_by) else "llm"


def _overview(database: str, domains: list[DomainDocumented]) -> str:
    lines = [f"# {database}", "", "| Domain | Tables | Description |", "|---|---|---|"]
    if all(by_templates(d.generated_by) for d in domains):
        lines[1:1] = ["", TEMPLATE_NOTICE]
    for d in domains:
        text = d.description.replace("|", "\\|").replace("\n", " ")
        lines.append(
            f"| [{d.title or d.domain}]({d.domain}/README.md) | {len(d.tables)} | {text} |"
        )
    return "\n".join(lines) + "\n"


def write_docs(events: Iterable[Event], out: Path, now: datetime | None = None) -> dict[str, Any]:
    """Write the docs tree and manifest under ``out``; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    tables, domains = latest(events)
    listed = {(db, f): d for (db, d), doc in domains.items() for f in doc.tables}
    files: list[tuple[str, str, dict[str, Any], datetime]] = []  # path, content, meta, time
    by_db: dict[str, list[DomainDocumented]] = defaultdict(list)
    for (db, name), doc in sorted(domains.items()):
        if doc.tables:
            by_db[db].append(doc)
            meta = {
                "type": "domain", "database": db, "domain": name,
                "generated_by": _generator(doc.generated_by),
            }  # fmt: skip
            content = with_notice(doc.content, doc.generated_by)
            files.append((f"{db}/{name}/README.md", content, meta, doc.occurred_at))
    for fqn, t in sorted(tables.items()):
        domain = listed.get((t.database, fqn))
        has_domain_docs = any(db == t.database for db, _ in domains)
        if domain is None and has_domain_docs:
            continue  # dropped, or moved and not yet re-documented
        domain = domain or t.domain
        meta = {
            "type": "table", "database": t.database, "schema": t.schema_name,
            "table": t.table_name, "domain": domain, "generated_by": _generator(t.generated_by),
        }  # fmt: skip
        content = with_notice(t.content, t.generated_by)
        files.append((f"{t.database}/{domain}/{t.table_name}.md", content, meta, t.occurred_at))
    for db, docs in sorted(by_db.items()):
        when = max(d.occurred_at for d in docs)
        generators = {_generator(d.generated_by) for d in docs}
        meta = {
            "type": "overview", "database": db,
            "generated_by": generators.pop() if len(generators) == 1 else "mixed",
        }  # fmt: skip
        files.append((f"{db}/README.md", _overview(db, docs), meta, when))
    indexable = []
    for path, content, meta, when in files:
        data = content.encode("utf-8")
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        indexable.append(
            {"path": path, **meta, "content_hash": _sha(data), "size_bytes": len(data),
             "modified_at": _iso(when)}
        )  # fmt: skip
    manifest = _manifest(tables, by_db, indexable, now or datetime.now(UTC))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _manifest(
    tables: dict[str, TableDocumented],
    by_db: dict[str, list[DomainDocumented]],
    indexable: list[dict[str, Any]],
    now: datetime,
) -> dict[str, Any]:
    units = []
    for db, docs in sorted(by_db.items()):
        for d in docs:
            mine = [f for f in indexable if f["database"] == db and f.get("domain") == d.domain]
            units.append(
                {
                    "id": f"{db}_{d.domain}",
                    "status": "completed",
                    "output_directory": f"{db}/{d.domain}",
                    "files_generated": len(mine),
                    "output_hash": _sha("".join(f["content_hash"] for f in mine).encode()),
                    "reprocessable": True,
                }
            )
    databases = []
    for db in sorted({t.database for t in tables.values()} | set(by_db)):
        kinds = {t.database_type for t in tables.values() if t.database == db and t.database_type}
        databases.append(
            {
                "name": db,
                "type": min(kinds) if kinds else "postgres",
                "docs_directory": db,
                "tables_documented": sum(
                    1 for f in indexable if f["database"] == db and f["type"] == "table"
                ),
                "tables_failed": 0,
                "domains": [d.domain for d in by_db.get(db, [])],
            }
        )
    plan = "".join(d.graph_hash for docs in by_db.values() for d in docs)
    templated = sum(1 for f in indexable if f["generated_by"] == "template")
    notes = (
        [f"{TEMPLATE_NOTICE.strip('_').rstrip('.')}: {templated} of {len(indexable)} files."]
        if templated
        else []
    )
    return {
        "schema_version": "1.0",
        "completed_at": _iso(now),
        "plan_hash": _sha(plan.encode()),
        "status": "complete",
        "databases": databases,
        "work_units": units,
        "total_files": len(indexable),
        "indexable_files": indexable,
        "notes": notes,
    }


async def export_from_topic(settings: TribalSettings, out: Path) -> dict[str, Any]:
    """Read ``tables.documented`` to its current end and :func:`write_docs` it."""
    from events.registry import registry_from_settings
    from events.serde import DecodeError, EventSerde
    from runtime.kafka_log import read_topic
    from runtime.topics import topic

    serde = EventSerde(registry_from_settings(settings))
    records = await read_topic(settings.kafka_bootstrap, topic("tables.documented", settings))
    events: list[Event] = []
    for r in records:
        try:
            events.append(serde.decode(r.value or b""))
        except DecodeError:
            continue  # the projections dead-letter these; an export just skips them
    return write_docs(events, out)
