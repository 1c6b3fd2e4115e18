"""Conversation turns and system events into `tribal.memory.turns` (seed 003)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from api.app import create_app
from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from events.memory import MemoryForgotten, SystemEventRecorded, TurnRecorded, episode_id_for
from sources.sink import KafkaSink, MemorySink
from sources.turns import IngestionError, MemoryIngestor, Session, Turn, turn_event


async def test_a_turn_is_recorded_under_its_group_id_with_a_stable_episode_id() -> None:
    sink = MemorySink()
    receipt = await MemoryIngestor(sink).ingest_turn(
        Turn(user_message="my order 123 is late", agent_response="sorry!"),
        Session(tenant_id="acme", id="s1"),
    )
    [emitted] = sink.emitted
    assert (emitted.topic, emitted.key) == ("memory.turns", "acme:s1")
    assert isinstance(emitted.event, TurnRecorded)
    assert receipt.group_id == "acme:s1"
    assert receipt.episode_id == episode_id_for(emitted.event.event_id)
    assert sink.flushes == 1


@pytest.mark.parametrize("group_id", ["acme", "acme:", ":s1", "a:b:c", "acme:s 1", "", "ac/me:s"])
async def test_an_invalid_group_id_is_refused_with_a_clear_error(group_id: str) -> None:
    sink = MemorySink()
    with pytest.raises(IngestionError) as info:
        await MemoryIngestor(sink).ingest_event("tool_run", "ran", group_id)
    assert info.value.code == "INVALID_GROUP_ID"
    assert repr(group_id) in info.value.message
    assert sink.emitted == []


S1 = Session(tenant_id="acme", id="s1")


def _turn(**fields: Any) -> Any:
    return lambda i: i.ingest_turn(Turn(**fields), S1)


@pytest.mark.parametrize(
    ("call", "code", "field"),
    [
        (_turn(user_message="a\x00b"), "INVALID_TEXT", "user_message"),
        (_turn(user_message="hi", agent_response="\x1b[0m"), "INVALID_TEXT", "agent_response"),
        (_turn(user_message="hi", metadata={"k": "\x7f"}), "INVALID_TEXT", "metadata"),
        (_turn(user_message="hi", metadata={f"k{n}": "v" for n in range(33)}),
         "INVALID_REQUEST", "metadata"),
        (_turn(user_message="x" * 100_001), "INVALID_REQUEST", "user_message"),
        (lambda i: i.ingest_turn(Turn(user_message="hi"), Session(tenant_id="a", id="s" * 10_000)),
         "INVALID_GROUP_ID", "group_id"),
        (lambda i: i.ingest_event("tool\x00", "ran", "acme:s1"), "INVALID_TEXT", "event_type"),
        (lambda i: i.ingest_event("tool", "ran\ud800", "acme:s1"), "INVALID_TEXT", "content"),
        (lambda i: i.ingest_event("tool", "ran", "acme:s1", {"ids": list(range(1000))}),
         "INVALID_REQUEST", "metadata"),
        (lambda i: i.forget_group("acme:s1", reason="gdpr\x00"), "INVALID_TEXT", "reason"),
        (lambda i: i.forget_tenant("t" * 129), "INVALID_TENANT", "tenant"),
    ],
    ids=["nul_message", "esc_response", "del_metadata", "too_much_metadata", "message_too_long",
         "session_too_long", "nul_event_type", "surrogate_content", "metadata_value_too_long",
         "nul_reason", "tenant_too_long"],
)  # fmt: skip
async def test_a_library_caller_gets_an_ingestion_error_naming_the_problem(
    call: Any, code: str, field: str
) -> None:
    sink = MemorySink()
    with pytest.raises(IngestionError) as info:
        await call(MemoryIngestor(sink))
    assert info.value.code == code
    assert field in info.value.message
    assert sink.emitted == []


async def test_a_system_event_keeps_its_type_and_stringified_metadata() -> None:
    sink = MemorySink()
    await MemoryIngestor(sink).ingest_event("tool_run", "lookup ok", "acme:s1", {"ms": 12})
    [event] = sink.events()
    assert isinstance(event, SystemEventRecorded)
    assert (event.event_type, event.metadata) == ("tool_run", {"ms": "12"})


async def test_forgetting_a_tenant_is_scoped_to_the_tenant() -> None:
    sink = MemorySink()
    ingestor = MemoryIngestor(sink)
    await ingestor.forget_tenant("acme", reason="gdpr")
    await ingestor.forget_group("acme:s1")
    tenant, group = sink.events()
    assert isinstance(tenant, MemoryForgotten)
    assert tenant.scope == "tenant"
    assert tenant.tenant == "acme"
    assert isinstance(group, MemoryForgotten)
    assert group.scope == "group"
    with pytest.raises(IngestionError):
        await ingestor.forget_tenant("ac:me")


async def test_a_thousand_turns_from_ten_groups_arrive_in_per_group_order(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    async with KafkaSink(broker.bootstrap, pipeline.serde, pipeline.settings.topic_prefix) as sink:
        ingestor = MemoryIngestor(sink)

        async def conversation(g: int) -> None:
            for n in range(100):
                await ingestor.ingest_turn(
                    Turn(user_message=f"message {n}", metadata={"n": str(n)}),
                    Session(tenant_id="acme", id=f"s{g}"),
                )

        await asyncio.gather(*(conversation(g) for g in range(10)))
    records = await pipeline.keyed("memory.turns")
    assert len(records) == 1000
    by_group: dict[str, list[int]] = {}
    for key, event in records:  # offset order within each partition
        assert isinstance(event, TurnRecorded)
        assert key == event.group_id
        by_group.setdefault(event.group_id, []).append(int(event.metadata["n"]))
    assert sorted(by_group) == sorted(f"acme:s{g}" for g in range(10))
    assert all(ns == list(range(100)) for ns in by_group.values())


def test_http_turns_are_accepted_and_bad_requests_get_agent_errors(
    broker: Broker, tmp_path: Path
) -> None:
    settings = isolated_settings(broker.bootstrap, tmp_path)
    asyncio.run(Pipeline(settings).create_topics())
    with TestClient(create_app(settings)) as client:
        ok = client.post(
            "/v1/memory/turns",
            json={"group_id": "acme:s1", "user_message": "hi", "agent_response": "hello"},
        )
        assert ok.status_code == 202, ok.text
        assert ok.json()["success"] is True
        assert ok.json()["group_id"] == "acme:s1"

        bad = client.post("/v1/memory/turns", json={"group_id": "acme", "user_message": "hi"})
        assert bad.status_code == 422
        error = bad.json()["error"]
        assert error["code"] == "INVALID_GROUP_ID"
        assert {"code", "message", "severity", "timestamp", "recoverable"} <= set(error)

        missing = client.post("/v1/memory/events", json={"group_id": "acme:s1"})
        assert missing.status_code == 422
        assert missing.json()["error"]["code"] == "INVALID_REQUEST"

        garbage = client.post("/v1/memory/turns", content=b"\xff\xfe{")
        assert garbage.status_code == 400
        assert garbage.json()["error"]["code"] == "INVALID_JSON"

        both = client.post("/v1/memory/forget", json={"group_id": "acme:s1", "tenant": "acme"})
        assert both.status_code == 422
    records = asyncio.run(Pipeline(settings).read_all("memory.turns"))
    assert len(records) == 1


def test_without_a_broker_memory_endpoints_answer_503_not_500(tmp_path: Path) -> None:
    settings = isolated_settings("", tmp_path)
    with TestClient(create_app(settings)) as client:
        r = client.post("/v1/memory/turns", json={"group_id": "acme:s1", "user_message": "hi"})
    assert r.status_code == 503
    assert r.json()["error"]["recoverable"] is True


@pytest.mark.parametrize(
    ("metadata", "said"),
    [
        ({"user_name": "Caroline", "session_date": "1:56 pm on 8 May, 2023"},
         "2023-05-08T13:56:00+00:00"),
        ({"user_name": "Caroline", "timestamp": "2023-05-08T15:56:00+02:00"},
         "2023-05-08T13:56:00+00:00"),
        ({"user_name": "Caroline", "created_at": "2023-05-08 13:56"}, "2023-05-08T13:56:00+00:00"),
    ],
)  # fmt: skip
def test_a_transcript_turn_takes_its_speaker_and_time_from_its_metadata(
    metadata: dict[str, str], said: str
) -> None:
    event = turn_event(Turn(user_message="Caroline: Hey Mel!", metadata=metadata), S1)
    assert (event.speaker, event.user_message) == ("Caroline", "Hey Mel!")
    assert event.occurred_at.isoformat() == said


def test_a_turns_own_speaker_and_time_win_over_its_metadata() -> None:
    own = datetime(2024, 1, 2, 3, 4, tzinfo=UTC)
    event = turn_event(
        Turn(user_message="Caroline: hi", speaker="Mel", occurred_at=own,
             metadata={"user_name": "Caroline", "session_date": "8 May 2023"}),
        S1,
    )  # fmt: skip
    assert (event.speaker, event.user_message, event.occurred_at) == ("Mel", "Caroline: hi", own)


@pytest.mark.parametrize("value", ["yesterday", "soon", "not a date"])
def test_a_metadata_time_that_is_not_absolute_is_left_alone(value: str) -> None:
    before = datetime.now(UTC)
    event = turn_event(Turn(user_message="hi", metadata={"session_date": value}), S1)
    assert event.occurred_at >= before
    assert event.speaker is None
