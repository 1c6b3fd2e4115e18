"""``export-docs``: the docs tree and a manifest valid against seed 001's JSON Schema."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from events.base import Event
from events.documents import DomainDocumented, TableDocumented
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.export import MANIFEST, write_docs
from streams.documenter.lane import DocumenterLane
from streams.documenter.render import TEMPLATE_NOTICE
from tests.documenter.test_planner import shop

HOUR = timedelta(hours=1)
SCHEMA = json.loads((Path(__file__).parent / "documentation-manifest.schema.json").read_text())
# Seed 001 §4.4 IndexableFile, checked on top of the condensed §7.2 schema.
INDEXABLE = {
    "type": "object",
    "required": ["path", "type", "database", "content_hash", "size_bytes", "modified_at"],
    "properties": {
        "type": {"enum": ["table", "domain", "overview", "relationship"]},
        "content_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "size_bytes": {"type": "integer", "minimum": 0},
        "modified_at": {"type": "string", "format": "date-time"},
    },
}


async def _documented() -> list[Event]:
    lane = DocumenterLane(Documenter(make_provider(env={})))
    return [e.event for e in await lane.process(shop())]


def _validate(manifest: dict[str, object]) -> None:
    checker = jsonschema.FormatChecker()
    jsonschema.validate(manifest, SCHEMA, format_checker=checker)
    for item in manifest["indexable_files"]:  # type: ignore[attr-defined]
        jsonschema.validate(item, INDEXABLE, format_checker=checker)


async def test_the_manifest_lists_every_file_with_its_hash_and_size(tmp_path: Path) -> None:
    events = await _documented()
    manifest = write_docs(events, tmp_path)
    _validate(manifest)
    assert json.loads((tmp_path / MANIFEST).read_text()) == manifest
    files = manifest["indexable_files"]
    assert manifest["total_files"] == len(files)
    for f in files:
        data = (tmp_path / f["path"]).read_bytes()
        assert f["content_hash"] == hashlib.sha256(data).hexdigest()
        assert f["size_bytes"] == len(data)
    tables = [f for f in files if f["type"] == "table"]
    assert len(tables) == len(shop())
    orders = next(f for f in tables if f["table"] == "orders")
    assert orders["path"] == f"shop/{orders['domain']}/orders.md"
    assert {f["type"] for f in files} == {"table", "domain", "overview"}
    [db] = manifest["databases"]
    assert db["tables_documented"] == len(shop())
    assert sorted(db["domains"]) == sorted({f["domain"] for f in tables})
    assert {u["id"] for u in manifest["work_units"]} == {f"shop_{d}" for d in db["domains"]}


async def test_latest_documentation_wins_and_retired_domains_disappear(tmp_path: Path) -> None:
    events = await _documented()
    domain = next(e for e in events if isinstance(e, DomainDocumented) and e.domain == "auth")
    retired = domain.model_copy(update={"tables": (), "occurred_at": domain.occurred_at + HOUR})
    table = next(e for e in events if isinstance(e, TableDocumented))
    older = table.model_copy(update={"content": "stale", "occurred_at": table.occurred_at - HOUR})
    manifest = write_docs([*events, retired, older], tmp_path)
    _validate(manifest)
    paths = {f["path"] for f in manifest["indexable_files"]}
    assert not any(p.startswith("shop/auth/") for p in paths)
    assert "auth" not in manifest["databases"][0]["domains"]
    written = next(f for f in manifest["indexable_files"] if f.get("table") == table.table_name)
    assert (tmp_path / written["path"]).read_text() == table.content


def test_an_invalid_manifest_is_rejected_by_the_schema() -> None:
    with pytest.raises(jsonschema.ValidationError):
        _validate({"schema_version": "2.0", "completed_at": "now", "status": "done"})


def _pages(root: Path) -> dict[str, str]:
    """Every Markdown page written under ``root``, by path."""
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.md")}


def _without_notice(e: Event) -> Event:
    """``e`` as it was recorded before pages said templates wrote them."""
    assert isinstance(e, TableDocumented | DomainDocumented)
    content = e.content.replace(f"\n\n{TEMPLATE_NOTICE}", "")
    return e.model_copy(update={"content": content})


async def test_template_documentation_says_so_on_every_page_and_in_the_manifest(
    tmp_path: Path,
) -> None:
    events = await _documented()
    assert {e.generated_by for e in events if isinstance(e, TableDocumented)} == {"template"}
    manifest = write_docs(events, tmp_path)
    _validate(manifest)
    files = manifest["indexable_files"]
    for f in files:
        lines = (tmp_path / f["path"]).read_text().split("\n")
        assert lines[0].startswith("# ")
        assert lines[1:4] == ["", TEMPLATE_NOTICE, ""], f["path"]
        assert f["generated_by"] == "template"
    assert manifest["notes"] == [
        "Documentation generated from the schema by templates, not by a language model: "
        f"{len(files)} of {len(files)} files."
    ]


async def test_documentation_recorded_before_the_notice_gets_it_on_export(
    tmp_path: Path,
) -> None:
    events = [_without_notice(e) for e in await _documented()]
    old = [e.model_copy(update={"generated_by": "local"}) for e in events]  # the old name
    write_docs(old, tmp_path)
    pages = _pages(tmp_path)
    assert pages
    for path, text in pages.items():
        assert text.count(TEMPLATE_NOTICE) == 1, path


async def test_documentation_a_language_model_wrote_carries_no_template_notice(
    tmp_path: Path,
) -> None:
    events = [
        _without_notice(e).model_copy(update={"generated_by": "llm", "model": "claude"})
        for e in await _documented()
    ]
    manifest = write_docs(events, tmp_path)
    assert manifest["notes"] == []
    assert {f["generated_by"] for f in manifest["indexable_files"]} == {"llm"}
    assert not any(TEMPLATE_NOTICE in text for text in _pages(tmp_path).values())
