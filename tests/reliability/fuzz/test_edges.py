"""Fuzzed edges, in process: generated hostile input at every write surface's real code.

HTTP requests hit the real memory and retrieve routes (writes into an in-memory sink, so
an acceptance is proven to record exactly one event and a refusal none); the schema
registry its real routes over a file registry; MCP tool calls go through the SDK's own
client to the real server; raw records through the worker's per-record handler. The
property everywhere: an answer (2xx, or a 4xx with an error code and a message), never a
5xx, never a protocol error, never a hang; and what is accepted is well formed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from mcp import Client
from starlette.applications import Starlette
from starlette.testclient import TestClient

from api.mcp_server import build_mcp
from api.memory import memory_routes
from api.routes import v1_routes
from api.schema_registry import create_schema_registry_app
from api.services.context import ServiceContext
from devstack.fuzz.answers import Sent, classify_http, classify_mcp, classify_registry
from devstack.fuzz.inputs import HttpCall, McpCall, Raw, RegistryCall, encode_recipe
from devstack.fuzz.ledger import InRegistry
from events.base import Event
from events.deadletter import DeadLettered
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.memory import MemoryForgotten, SystemEventRecorded, TurnRecorded
from events.registry.file import FileSchemaRegistry
from events.serde import DecodeError, EventSerde
from runtime.settings import TribalSettings
from sources.sink import MemorySink
from sources.turns import MemoryIngestor
from streams.chunker.kb import chunk_kb_article
from streams.wiring import Handler
from tests.reliability.fuzz.profile import EDGE
from tests.reliability.fuzz.strategies import (
    conversations,
    hostile_events,
    hostile_forgets,
    hostile_mcp_calls,
    hostile_registrations,
    hostile_retrieves,
    hostile_turns,
    imports,
    raw_recipes,
    valid_mcp_memories,
    valid_registrations,
    valid_turns,
)

TENANTS = [f"edge{n}" for n in range(5)]
TURNS = "tribal.memory.turns"
KB = "tribal.kb.articles"
JSON = {"content-type": "application/json"}
WRITES: dict[str, type] = {
    "/v1/memory/turns": TurnRecorded,
    "/v1/memory/import": TurnRecorded,
    "/v1/memory/messages": TurnRecorded,
    "/v1/memory/events": SystemEventRecorded,
    "/v1/memory/forget": MemoryForgotten,
}


@dataclass
class Edge:
    """The real routes over an in-memory sink, and the serde a worker would decode with."""

    client: TestClient
    sink: MemorySink
    context: ServiceContext
    serde: EventSerde


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    root = tmp_path_factory.mktemp("fuzz-edge")
    sink = MemorySink()
    context = ServiceContext(TribalSettings(kafka_bootstrap="", postgres_dsn="", data_dir=root))
    context.ingestor = MemoryIngestor(sink)
    app = Starlette(routes=[*memory_routes(lambda: context.ingestor), *v1_routes(lambda: context)])
    with TestClient(app) as client:
        yield Edge(client, sink, context, EventSerde(FileSchemaRegistry(root / "schemas")))


def _sent(resp: Any) -> Sent:
    try:
        body: Any = resp.json()
    except ValueError:
        body = resp.text[:300]
    return Sent(resp.status_code, body, None)


def written(edge: Edge, call: HttpCall) -> tuple[Any, list[Any]] | None:
    """Send a write; None when it was refused with an agent error (having recorded
    nothing), else its answer (a 202) and the records it wrote."""
    before = len(edge.sink.emitted)
    resp = edge.client.request(call.method, call.path, content=call.body, headers=JSON)
    entry = classify_http(call.surface, _sent(resp))
    assert entry.problem is None, entry.problem
    event(f"{call.surface}: {entry.outcome} {entry.code or ''}")
    emitted = edge.sink.emitted[before:]
    if entry.outcome == "rejected":
        assert 400 <= resp.status_code < 500
        assert emitted == [], "a refused write recorded something"
        return None
    assert resp.status_code == 202, resp.text
    return resp, emitted


@EDGE
@given(call=st.one_of(valid_turns(TENANTS), hostile_turns(), hostile_events(), hostile_forgets()))
def test_a_memory_write_records_exactly_one_valid_event_or_is_refused_with_an_agent_error(
    edge: Edge, call: HttpCall
) -> None:
    sent = written(edge, call)
    if sent is None:
        return
    resp, [record] = sent
    assert isinstance(record.event, WRITES[call.path])
    assert isinstance(record.event, TurnRecorded | SystemEventRecorded | MemoryForgotten)
    # What the worker reads back is the very event accepted: the edge let nothing through
    # that the event model (checked again at decode) would refuse.
    assert edge.serde.decode(edge.serde.encode(record.event, TURNS)) == record.event
    assert resp.json()["event_id"] == str(record.event.event_id)
    assert record.key == record.event.group_id


def recorded_whole(edge: Edge, call: HttpCall, items: str, *, merged: bool = False) -> None:
    """Send a batch write of ``items``: refused, it records nothing; accepted, it records a
    valid turn keyed by its group for each item, named by one receipt each (fewer turns
    than items when ``merged``: an agent's message answers the one before it)."""
    sent = written(edge, call)
    if sent is None:
        return
    resp, emitted = sent
    for record in emitted:
        assert isinstance(record.event, TurnRecorded)
        assert edge.serde.decode(edge.serde.encode(record.event, TURNS)) == record.event
        assert record.key == record.event.group_id
    receipts = resp.json()["receipts"]
    assert {r["event_id"] for r in receipts} == {str(r.event.event_id) for r in emitted}
    items_sent = len(json.loads(call.body or b"{}")[items])
    assert 1 <= len(emitted) == len(receipts) <= items_sent
    if not merged:
        assert len(emitted) == items_sent


@EDGE
@given(call=imports(TENANTS))
def test_a_history_import_records_each_of_its_turns_or_is_refused_whole(
    edge: Edge, call: HttpCall
) -> None:
    recorded_whole(edge, call, "turns")


@EDGE
@given(call=conversations(TENANTS))
def test_a_conversation_as_messages_records_its_turns_or_is_refused_whole(
    edge: Edge, call: HttpCall
) -> None:
    recorded_whole(edge, call, "messages", merged=True)


@EDGE
@given(call=hostile_retrieves())
def test_retrieve_answers_200_in_the_seed_002_shape_whatever_the_body(
    edge: Edge, call: HttpCall
) -> None:
    resp = edge.client.request(call.method, call.path, content=call.body, headers=JSON)
    entry = classify_http(call.surface, _sent(resp))
    assert entry.problem is None, entry.problem
    body = resp.json()
    assert set(body) == {"sources_consulted", "coverage", "gaps", "retrieval_time_ms"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    path = tmp_path_factory.mktemp("fuzz-registry")
    with TestClient(create_schema_registry_app(FileSchemaRegistry(path))) as client:
        yield client


@EDGE
@given(call=st.one_of(hostile_registrations(), valid_registrations()))
def test_the_schema_registry_keeps_what_it_accepts_and_refuses_the_rest_with_a_code(
    registry: TestClient, call: RegistryCall
) -> None:
    resp = registry.request(call.method, call.path, content=call.body)
    entry = classify_registry(call, _sent(resp))
    assert entry.problem is None, f"{call.method} {call.path[:120]}: {entry.problem}"
    event(f"{call.surface}: {entry.outcome} {entry.code or ''}")
    for expected in entry.expect:
        assert isinstance(expected, InRegistry)
        stored = registry.get(f"/schemas/ids/{expected.schema_id}")
        assert stored.status_code == 200, stored.text
        sent = json.loads(json.loads(call.body or b"{}")["schema"])
        assert json.loads(stored.json()["schema"]) == sent


@EDGE
@given(call=st.one_of(hostile_mcp_calls(), valid_mcp_memories(TENANTS)))
async def test_an_mcp_tool_answers_its_output_or_an_agent_error_never_a_protocol_error(
    edge: Edge, call: McpCall
) -> None:
    before = len(edge.sink.emitted)
    async with Client(build_mcp(lambda: edge.context)) as client:
        result = await client.call_tool(call.tool, call.arguments)
    entry = classify_mcp(call, result, TURNS)
    assert entry.problem is None, f"{call.tool} {str(call.arguments)[:200]}: {entry.problem}"
    event(f"{call.surface}: {entry.outcome} {entry.code or ''}")
    emitted = edge.sink.emitted[before:]
    if entry.outcome == "accepted":
        [record] = emitted
        assert isinstance(record.event, TurnRecorded)
        assert edge.serde.decode(edge.serde.encode(record.event, TURNS)) == record.event
    else:
        assert emitted == [], "a refused tool call recorded something"


@pytest.fixture(scope="module")
def handlers(tmp_path_factory: pytest.TempPathFactory) -> tuple[EventSerde, dict[str, Handler]]:
    root = tmp_path_factory.mktemp("fuzz-raw")
    serde = EventSerde(FileSchemaRegistry(root / "schemas"))
    settings = TribalSettings(data_dir=root, topic_prefix="tribal.")
    return serde, {
        KB: Handler(
            "kb_chunker", chunk_kb_article, (KbArticleUpserted, KbArticleDeleted), serde, settings
        ),
        TURNS: Handler(
            "episoder",
            lambda event: [],
            (TurnRecorded, SystemEventRecorded, MemoryForgotten),
            serde,
            settings,
        ),
    }


@EDGE
@given(raw=st.one_of(raw_recipes("kb.articles", TENANTS), raw_recipes("memory.turns", TENANTS)))
async def test_a_raw_record_is_processed_or_dead_lettered_with_its_bytes_and_a_reason(
    handlers: tuple[EventSerde, dict[str, Handler]], raw: Raw
) -> None:
    serde, by_topic = handlers
    topic = f"tribal.{raw.topic}"
    value = encode_recipe(raw.recipe, serde, topic)
    records = await by_topic[topic].handle(topic, 0, 7, raw.key, value)
    letters = [serde.decode(r.value) for r in records if r.topic == "tribal.deadletter"]
    decoded, refused = _decoded(serde, value)
    if refused is not None:
        [letter] = letters
        assert isinstance(letter, DeadLettered)
        assert letter.error_code == refused
        assert letter.payload == value, "the original bytes are kept for a re-drive"
        return
    if topic == KB and isinstance(decoded, KbArticleUpserted):
        assert letters == []
        [chunked] = records
        assert chunked.topic == "tribal.chunks"
    elif topic == TURNS and isinstance(decoded, TurnRecorded | SystemEventRecorded):
        assert records == []
    else:  # a valid event of another topic
        [letter] = letters
        assert isinstance(letter, DeadLettered)
        assert letter.error_code == "UNEXPECTED_EVENT_TYPE"
        assert letter.payload == value


def _decoded(serde: EventSerde, value: bytes) -> tuple[Event | None, str | None]:
    """The event in ``value``, or the code its refusal carries."""
    try:
        return serde.decode(value), None
    except DecodeError as exc:
        return None, exc.code


def test_the_generators_reach_every_surface_of_the_app() -> None:
    """Every write route and MCP tool the app serves is one the generators aim at."""
    from api.mcp_server import TOOLS
    from devstack.fuzz.inputs import MCP_TEXT

    assert set(MCP_TEXT) == {name for name, *_ in TOOLS}
    app_routes = {getattr(r, "path", "") for r in memory_routes(lambda: None)}
    assert app_routes == set(WRITES)
