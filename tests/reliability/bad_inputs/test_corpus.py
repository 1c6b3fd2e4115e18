"""Every case of the bad-input corpus, through the real code path of its surface.

HTTP cases hit the real route functions (memory writes against an in-memory sink, so
a refusal is also proven to have emitted nothing); MCP cases go through the MCP SDK's
own client to the real server; registry cases through the registry routes over a file
registry; raw records through the worker's per-record handler; help-desk articles,
files and schema snapshots through the sources' own functions.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, get_args
from urllib.parse import quote

import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from api.mcp_server import build_mcp
from api.memory import memory_routes
from api.routes import v1_routes
from api.schema_registry import create_schema_registry_app
from api.services.context import ServiceContext
from events.base import Event
from events.deadletter import DeadLettered
from events.files import FileChanged, FileSkipped
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.memory import MemoryForgotten, SystemEventRecorded, TurnRecorded
from events.registry.file import FileSchemaRegistry
from events.schema import TableObserved
from events.serde import EventSerde
from events.text import normalize_values
from runtime.settings import TribalSettings
from sources.checkpoint import MemoryCheckpoint
from sources.files import FilesSource
from sources.kb import KbState, plan
from sources.kb_client import KbListing
from sources.schema_snapshot import with_hash
from sources.sink import MemorySink
from sources.turns import MemoryIngestor
from streams.chunker.kb import chunk_kb_article
from streams.wiring import Handler
from tests.reliability.bad_inputs.corpus import (
    CORPUS,
    Absent,
    Case,
    Degraded,
    HostFile,
    Http,
    Kept,
    Mcp,
    Normalized,
    Raw,
    Refused,
    Registry,
    Skipped,
    Surface,
    by_surface,
)
from tests.reliability.bad_inputs.corpus import DeadLetter as DeadLetterOutcome
from tests.reliability.bad_inputs.poison import corpus as poison_corpus

KB_TOPIC = "tribal.kb.articles"
TURNS_TOPIC = "tribal.memory.turns"
MEMORY = ("/v1/memory/turns", "/v1/memory/events", "/v1/memory/forget")


def cases(surface: Surface) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("case", by_surface(surface), ids=lambda c: c.name)


def test_the_corpus_holds_at_least_a_hundred_uniquely_named_cases_on_every_surface() -> None:
    names = [case.name for case in CORPUS]
    assert len(names) >= 100
    assert len(set(names)) == len(names), [n for n in names if names.count(n) > 1]
    assert {case.surface for case in CORPUS} == set(get_args(Surface))


def _control_left(value: Any) -> list[str]:
    return normalize_values(value)[1]


def _round_trips(event: Event, topic: str, tmp_path: Path) -> None:
    serde = EventSerde(FileSchemaRegistry(tmp_path / "roundtrip"))
    assert serde.decode(serde.encode(event, topic)) == event


# -- HTTP ---------------------------------------------------------------------------------


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


@pytest.fixture
def context(sink: MemorySink, tmp_path: Path) -> ServiceContext:
    ctx = ServiceContext(TribalSettings(kafka_bootstrap="", postgres_dsn="", data_dir=tmp_path))
    ctx.ingestor = MemoryIngestor(sink)
    return ctx


@pytest.fixture
def http(context: ServiceContext, tmp_path: Path) -> Iterator[TestClient]:
    """The real memory, read and registry routes (no stores: nothing valid gets far)."""
    registry = create_schema_registry_app(FileSchemaRegistry(tmp_path / "schemas"))
    app = Starlette(
        routes=[
            *memory_routes(lambda: context.ingestor),
            *v1_routes(lambda: context),
            Mount("/schema-registry", app=registry),
        ]
    )
    with TestClient(app) as client:
        yield client


def _send(client: TestClient, request: Http) -> Any:
    return client.request(
        request.method,
        request.path,
        content=request.content(),
        params=request.params,
        headers={"content-type": "application/json"},
    )


@cases("http")
def test_a_bad_http_request_is_refused_with_its_code_and_records_nothing(
    case: Case, http: TestClient, sink: MemorySink
) -> None:
    assert isinstance(case.input, Http)
    resp = _send(http, case.input)
    expect = case.expect
    if isinstance(expect, Degraded):  # seed 002: /v1/retrieve never answers an error
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert (body["coverage"], body["sources_consulted"]) == ("none", [])
        assert any(expect.gap in gap for gap in body["gaps"]), body["gaps"]
        return
    assert isinstance(expect, Refused)
    assert resp.status_code == expect.status, resp.text
    error = resp.json()["error"]
    assert error["code"] == expect.code, error
    assert error["recoverable"] is False
    if expect.code == "INVALID_TEXT":  # names the field and the character
        field, _, problem = error["message"].partition(": ")
        assert field, error["message"]
        assert "control character U+" in problem, error["message"]
    assert sink.emitted == []


def test_the_nul_turn_from_the_issue_is_refused_as_invalid_text_and_nothing_is_emitted(
    http: TestClient, sink: MemorySink
) -> None:
    resp = http.post(
        "/v1/memory/turns",
        content=b'{"group_id":"acme:s1","user_message":"a\\u0000b"}',
        headers={"content-type": "application/json"},
    )
    assert resp.status_code == 422
    error = resp.json()["error"]
    assert error["code"] == "INVALID_TEXT"
    assert error["message"].startswith("user_message: control character U+0000 (NUL) at index 1")
    assert sink.emitted == []


@pytest.mark.parametrize(
    "text",
    ["tab\there", "line\nfeed", "carriage\r\nreturn", "émoji 🚀", "עברית", "\u200bzero-width"],
)
def test_text_that_only_looks_odd_is_accepted(
    http: TestClient, sink: MemorySink, text: str
) -> None:
    resp = http.post(
        "/v1/memory/turns",
        json={"group_id": "acme:s1", "user_message": text, "metadata": {"k": text}},
    )
    assert resp.status_code == 202, resp.text
    [emitted] = sink.events()
    assert isinstance(emitted, TurnRecorded)
    assert emitted.user_message == text


# -- MCP ----------------------------------------------------------------------------------


@cases("mcp")
async def test_a_bad_mcp_tool_call_answers_the_same_agent_error_as_http(
    case: Case, context: ServiceContext, sink: MemorySink
) -> None:
    assert isinstance(case.input, Mcp)
    async with Client(build_mcp(lambda: context)) as client:
        result = await client.call_tool(case.input.tool, case.input.arguments)
    assert not result.is_error, result  # an answer the agent can read, not a protocol error
    body = result.structured_content
    assert body is not None
    expect = case.expect
    if isinstance(expect, Degraded):
        assert body["coverage"] == "none"
        assert any(expect.gap in gap for gap in body["gaps"]), body["gaps"]
        return
    assert isinstance(expect, Refused)
    assert body["success"] is False
    assert body["error"]["code"] == expect.code, body["error"]
    assert sink.emitted == []


# -- schema registry ----------------------------------------------------------------------


@cases("schema_registry")
def test_a_bad_schema_registration_is_refused_with_a_confluent_error_code(
    case: Case, tmp_path: Path
) -> None:
    request = case.input
    assert isinstance(request, Registry)
    assert isinstance(case.expect, Refused)
    registry = FileSchemaRegistry(tmp_path / "schemas")
    with TestClient(create_schema_registry_app(registry)) as client:
        if request.before is not None:
            import json

            ok = client.post(
                f"/subjects/{quote(request.subject, safe='')}/versions",
                content=json.dumps({"schema": json.dumps(request.before)}),
            )
            assert ok.status_code == 200, ok.text
        if request.path is not None:
            resp = client.request(request.method, request.path)
        else:
            resp = client.post(
                f"/subjects/{quote(request.subject, safe='')}/versions", content=request.body
            )
    assert resp.status_code == case.expect.status, resp.text
    assert resp.json()["error_code"] == case.expect.code, resp.text
    kept = [request.subject] if request.before is not None else []
    assert registry.subjects() == kept


# -- raw records --------------------------------------------------------------------------


@pytest.fixture
def serde(tmp_path: Path) -> EventSerde:
    return EventSerde(FileSchemaRegistry(tmp_path / "schemas"))


def _handlers(serde: EventSerde, tmp_path: Path) -> tuple[Handler, Handler]:
    settings = TribalSettings(data_dir=tmp_path, topic_prefix="tribal.")
    kb = Handler(
        "kb_chunker", chunk_kb_article, (KbArticleUpserted, KbArticleDeleted), serde, settings
    )
    memory = Handler(
        "episoder",
        lambda event: [],
        (TurnRecorded, SystemEventRecorded, MemoryForgotten),
        serde,
        settings,
    )
    return kb, memory


@cases("raw_record")
async def test_a_hostile_raw_record_is_dead_lettered_with_its_code_and_its_bytes(
    case: Case, serde: EventSerde, tmp_path: Path
) -> None:
    raw = case.input
    assert isinstance(raw, Raw)
    assert isinstance(case.expect, DeadLetterOutcome)
    kb, memory = _handlers(serde, tmp_path)
    if raw.poison is not None:  # poison.py's case, on the help-desk chunker's topic
        registry = FileSchemaRegistry(tmp_path / "schemas")
        poisons = {p.name: p for p in poison_corpus(serde, registry, KB_TOPIC, TURNS_TOPIC)}
        value, handler, topic = poisons[raw.poison].value, kb, KB_TOPIC
        assert poisons[raw.poison].code == case.expect.code
    else:
        assert raw.build is not None
        value, handler, topic = raw.build(serde), memory, TURNS_TOPIC
    [record] = await handler.handle(topic, 0, 7, case.name.encode(), value)
    assert record.topic == "tribal.deadletter"
    letter = serde.decode(record.value)
    assert isinstance(letter, DeadLettered)
    assert letter.error_code == case.expect.code, letter.error_message
    assert letter.payload == value


async def test_a_clean_raw_turn_passes_the_same_handler(serde: EventSerde, tmp_path: Path) -> None:
    _, memory = _handlers(serde, tmp_path)
    turn = TurnRecorded(group_id="acme:s1", user_message="tab\tok", agent_response="")
    assert await memory.handle(TURNS_TOPIC, 0, 0, b"acme:s1", serde.encode(turn, TURNS_TOPIC)) == []


# -- help-desk articles -------------------------------------------------------------------


@cases("kb_article")
def test_a_hostile_article_is_normalized_with_a_note_kept_or_left_out(
    case: Case, tmp_path: Path
) -> None:
    raw: dict[str, Any] = case.input
    listing = KbListing(articles={raw.get("id", "?"): raw}, total=1, updated_at=None, complete=True)
    events, state = plan(KbState({}), listing, full=True)
    upserts = [e for e in events if isinstance(e, KbArticleUpserted)]
    if isinstance(case.expect, Absent):
        assert upserts == []
        return
    [event] = upserts
    _round_trips(event, KB_TOPIC, tmp_path)
    assert _control_left(event.model_dump()) == []
    assert list(state.hashes) == [event.article_id]
    if isinstance(case.expect, Kept):
        assert event.notes == ()
        assert (event.title, event.content) == (raw["title"], raw["content"])
    else:
        assert isinstance(case.expect, Normalized)
        assert any(case.expect.note in note for note in event.notes), event.notes


def test_an_article_listed_under_a_control_character_id_is_not_deleted_by_the_next_pass() -> None:
    raw: dict[str, Any] = {"id": "kb-\x07h", "title": "t", "url": "u", "content": "c",
           "metadata": {"last_updated": "2026-01-01T00:00:00Z"}}  # fmt: skip
    listing = KbListing(articles={raw["id"]: raw}, total=1, updated_at=None, complete=True)
    first, state = plan(KbState({}), listing, full=True)
    again, _ = plan(state, listing, full=True)
    assert [type(e).__name__ for e in first] == ["KbArticleUpserted"]
    assert again == []


# -- files --------------------------------------------------------------------------------


def _write(root: Path, spec: HostFile) -> None:
    name = os.fsencode(spec.name) if isinstance(spec.name, str) else spec.name
    target = os.path.join(os.fsencode(root), name)
    with open(target, "wb") as f:
        f.write(spec.data)
        if spec.size:
            f.truncate(spec.size)


@cases("file")
async def test_a_hostile_file_is_normalized_with_a_note_skipped_kept_or_left_out(
    case: Case, tmp_path: Path
) -> None:
    spec = case.input
    assert isinstance(spec, HostFile)
    root = tmp_path / "tree"
    root.mkdir()
    (root / "normal.py").write_text("x = 1\n")
    _write(root, spec)
    sink = MemorySink()
    await FilesSource(name="hostile", root=root, repo="demo").sync_once(sink, MemoryCheckpoint())
    found = {
        e.event.path: e for e in sink.emitted if isinstance(e.event, FileChanged | FileSkipped)
    }
    assert isinstance(found.pop("normal.py").event, FileChanged)
    if isinstance(case.expect, Absent):
        assert found == {}
        return
    assert isinstance(spec.name, str)
    path = spec.path or spec.name
    emitted = found[path]
    event = emitted.event
    assert isinstance(event, FileChanged | FileSkipped)
    assert emitted.key == f"demo:{path}"
    _round_trips(event, "tribal.files.changes", tmp_path)
    if isinstance(case.expect, Skipped):
        assert isinstance(event, FileSkipped)
        assert event.reason == case.expect.reason
        return
    assert isinstance(event, FileChanged)
    assert _control_left(event.model_dump()) == []
    assert event.size_bytes == len(spec.data)  # what is on disk, not what is emitted
    if isinstance(case.expect, Kept):
        assert event.notes == ()
        assert event.content == spec.data.decode("utf-8")
    else:
        assert isinstance(case.expect, Normalized)
        assert any(case.expect.note in note for note in event.notes), event.notes


# -- schema and column names --------------------------------------------------------------

BASE: dict[str, Any] = {
    "database": "shop", "schema_name": "public", "table_name": "orders",
    "database_type": "postgres", "columns": [{"name": "id", "type": "int"}],
    "metadata_hash": "",
}  # fmt: skip


@cases("schema_names")
def test_hostile_schema_names_are_kept_as_data_and_control_characters_are_noted(
    case: Case, tmp_path: Path
) -> None:
    observed = TableObserved.model_validate(BASE | case.input)
    event = with_hash(observed)
    assert len(event.metadata_hash) == 64
    _round_trips(event, "tribal.schema.changes", tmp_path)
    assert _control_left(event.model_dump()) == []
    if isinstance(case.expect, Kept):
        assert event.notes == ()
        assert event.model_copy(update={"metadata_hash": ""}) == observed
    else:
        assert isinstance(case.expect, Normalized)
        assert any(case.expect.note in note for note in event.notes), event.notes


def test_a_snapshot_without_notes_hashes_as_it_did_before_notes_existed() -> None:
    import hashlib

    from sources.schema_snapshot import _EXCLUDE, metadata_hash

    event = TableObserved.model_validate(BASE)
    legacy = event.model_dump_json(exclude={**_EXCLUDE, "notes": True})
    assert metadata_hash(event) == hashlib.sha256(legacy.encode()).hexdigest()


SALES = '"Sales ""EU"""."order"'  # a schema with quotes and a space; a reserved word
HOSTILE_DDL = ";\n".join(
    [
        'CREATE SCHEMA "Sales ""EU"""',
        f'CREATE TABLE {SALES} ("select" int PRIMARY KEY, "o\'clock" text, '
        '"naïve 🚀" text, "客户" text)',
        f"COMMENT ON TABLE {SALES} IS E'Orders\\x1b[31m (red)'",
        f"COMMENT ON COLUMN {SALES}.\"o'clock\" IS E'When\\x07'",
        f"COMMENT ON COLUMN {SALES}.\"客户\" IS '''; DROP TABLE x; --'",
    ]
)


@pytest.fixture
async def hostile_database(postgres_dsn: str) -> AsyncIterator[str]:
    from runtime.databases import temporary_database

    async with temporary_database(postgres_dsn, "hostile", HOSTILE_DDL) as dsn:
        yield dsn


@pytest.mark.postgres
async def test_quoted_reserved_and_unicode_names_from_postgres_are_kept_and_comments_cleaned(
    hostile_database: str,
) -> None:
    import asyncpg

    from sources.pg_catalog import introspect

    conn = await asyncpg.connect(hostile_database)
    try:
        [table] = await introspect(conn, "shop", include_samples=True)
    finally:
        await conn.close()
    assert (table.schema_name, table.table_name) == ('Sales "EU"', "order")
    assert [c.name for c in table.columns] == ["select", "o'clock", "naïve 🚀", "客户"]
    assert table.primary_key == ("select",)
    assert table.comment == "Orders[31m (red)"
    assert [c.comment for c in table.columns] == [None, "When", None, "'; DROP TABLE x; --"]
    assert table.notes == (
        "columns[1].comment: removed 1 control character (U+0007)",
        "comment: removed 1 control character (U+001B)",
    )
