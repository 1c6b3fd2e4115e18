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
