"""Memory writes over HTTP and MCP: a turn's time and speaker, and history imports.

The endpoints run against an in-memory sink, so what they record is read straight
back, and a refused request is proven to have recorded nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.testclient import TestClient

from api.mcp_server import build_mcp
from api.services.context import ServiceContext
from events.memory import SystemEventRecorded, TurnRecorded, episode_id_for
from runtime.settings import TribalSettings
from sources.sink import MemorySink
from sources.turns import MemoryIngestor
from tests.api import writes

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


sink, client = writes.sink, writes.client  # the same fixtures: acme's client of the memory routes


def turns(sink: MemorySink) -> list[TurnRecorded]:
    return [e for e in sink.events("memory.turns") if isinstance(e, TurnRecorded)]


def past(n: int, who: str = "Caroline", group: str = "acme:chat") -> dict[str, Any]:
    return {"group_id": group, "user_message": f"message {n}", "speaker": who,
            "occurred_at": (SAID + timedelta(hours=n)).isoformat()}  # fmt: skip


def test_a_turn_keeps_the_time_it_was_said_and_who_said_it(
    client: TestClient, sink: MemorySink
) -> None:
    r = client.post("/v1/memory/turns", json=past(0))
    assert r.status_code == 202, r.text
    [turn] = turns(sink)
    assert (turn.occurred_at, turn.speaker) == (SAID, "Caroline")
    assert r.json()["episode_id"] == str(episode_id_for(turn.event_id))


def test_a_system_event_keeps_the_time_it_happened(client: TestClient, sink: MemorySink) -> None:
    body = {"group_id": "acme:chat", "event_type": "tool_run", "content": "refund issued",
            "occurred_at": "2023-05-08T14:00:00+02:00"}  # fmt: skip
    assert client.post("/v1/memory/events", json=body).status_code == 202
    [event] = sink.events()
    assert isinstance(event, SystemEventRecorded)
    assert event.occurred_at == datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "when",
    [
        "2023-05-08T13:56:00",
        (datetime.now(UTC) + timedelta(days=2)).isoformat(),
        "yesterday",
        "0001-01-01T00:00:00+00:01",
    ],
    ids=["no-timezone", "future", "not-a-time", "before-the-first-utc-instant"],
)
def test_a_time_without_timezone_in_the_future_unreadable_or_out_of_range_is_refused(
    client: TestClient, sink: MemorySink, when: str
) -> None:
    turn = {"group_id": "acme:chat", "user_message": "hi", "occurred_at": when}
    event = {"group_id": "acme:chat", "event_type": "t", "content": "ran", "occurred_at": when}
    for path, body in [
        ("/v1/memory/turns", turn),
        ("/v1/memory/events", event),
        ("/v1/memory/import", {"turns": [turn]}),
    ]:
        r = client.post(path, json=body)
        assert r.status_code == 422, (path, r.text)
        assert "occurred_at" in r.json()["error"]["message"]
    assert sink.emitted == []


def test_an_import_records_every_turn_each_group_in_the_order_they_were_said(
    client: TestClient, sink: MemorySink
) -> None:
    body = [past(3), past(1, "Melanie"), past(2, group="acme:other"), past(0), past(2)]
    r = client.post("/v1/memory/import", json={"turns": body})
    assert r.status_code == 202, r.text
    recorded = turns(sink)
    assert [(t.group_id, t.user_message) for t in recorded if t.group_id == "acme:chat"] == [
        ("acme:chat", f"message {n}") for n in (0, 1, 2, 3)
    ]
    assert r.json()["accepted"] == 5
    by_event = {str(t.event_id): t for t in recorded}
    receipts = r.json()["receipts"]
    assert [by_event[x["event_id"]].user_message for x in receipts] == [
        b["user_message"] for b in body
    ]
    assert all(x["episode_id"] == str(episode_id_for(by_event[x["event_id"]].event_id))
               for x in receipts)  # fmt: skip
    assert {t.speaker for t in recorded} == {"Caroline", "Melanie"}


def test_importing_the_same_turns_again_records_the_very_same_events(
    client: TestClient, sink: MemorySink
) -> None:
    body = {"turns": [past(0), past(1), past(0)]}  # the same words twice: two turns
    first = client.post("/v1/memory/import", json=body).json()["receipts"]
    again = client.post("/v1/memory/import", json=body).json()["receipts"]
    assert first == again
    assert len({x["event_id"] for x in first}) == 3


def test_an_import_with_bad_turns_records_nothing_and_names_each_one(
    client: TestClient, sink: MemorySink
) -> None:
    body = {"turns": [past(0), {**past(1), "group_id": "acme"}, past(2),
                      {**past(3), "turn_id": "not-a-uuid"}]}  # fmt: skip
    r = client.post("/v1/memory/import", json=body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "INVALID_GROUP_ID"
    assert [p["field"] for p in error["context"]["problems"]] == ["turns.1", "turns.3"]
    assert sink.emitted == []


def test_an_import_touching_another_tenant_is_forbidden_whole(
    client: TestClient, sink: MemorySink
) -> None:
    r = client.post("/v1/memory/import", json={"turns": [past(0), past(1, group="globex:s1")]})
    assert r.status_code == 403
    assert r.json()["error"]["code"] == "FORBIDDEN"
    assert sink.emitted == []


def test_an_import_is_bounded_in_turns(client: TestClient, sink: MemorySink) -> None:
    many = [{"group_id": "acme:chat", "user_message": "x"}] * 1001
    assert client.post("/v1/memory/import", json={"turns": many}).status_code == 422
    assert client.post("/v1/memory/import", json={"turns": []}).status_code == 422
    assert sink.emitted == []


async def test_add_memory_over_mcp_takes_the_speaker_and_the_time(
    sink: MemorySink, tmp_path: Path
) -> None:
    ctx = ServiceContext(TribalSettings(data_dir=tmp_path), ingestor=MemoryIngestor(sink))
    args = {"group_id": "acme:chat", "user_message": "I moved to Bristol.",
            "speaker": "Caroline", "occurred_at": SAID.isoformat()}  # fmt: skip
    async with Client(build_mcp(lambda: ctx)) as mcp:
        result = await mcp.call_tool("add_memory", args)
        late = await mcp.call_tool("add_memory", {**args, "occurred_at": "2999-01-01T00:00:00Z"})
    out = result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert out["success"] is True, out
    [turn] = turns(sink)
    assert (turn.speaker, turn.occurred_at) == ("Caroline", SAID)
    refused = late.structured_content or {}
    assert refused["success"] is False
    assert refused["error"]["code"] == "INVALID_REQUEST"


def test_a_conversation_given_as_messages_becomes_turns_each_with_its_speaker(
    client: TestClient, sink: MemorySink
) -> None:
    body = {
        "group_id": "acme:chat",
        "occurred_at": SAID.isoformat(),
        "messages": [
            {"speaker": "Caroline", "content": "I moved to Bristol."},
            {"speaker": "Melanie", "content": "Since when?"},
            {"role": "user", "content": "Can you note my new address?"},
            {"role": "assistant", "content": "Noted: Bristol."},
            {"role": "assistant", "content": "Anything else?"},
        ],
    }
    r = client.post("/v1/memory/messages", json=body)
    assert r.status_code == 202, r.text
    assert r.json()["accepted"] == 4
    said = turns(sink)
    assert [(t.speaker, t.user_message, t.agent_response) for t in said] == [
        ("Caroline", "I moved to Bristol.", ""),
        ("Melanie", "Since when?", ""),
        (None, "Can you note my new address?", "Noted: Bristol."),
        ("Agent", "Anything else?", ""),
    ]
    assert {t.occurred_at for t in said} == {SAID}


def test_messages_with_one_bad_message_record_nothing_and_name_it(
    client: TestClient, sink: MemorySink
) -> None:
    body = {
        "group_id": "acme:chat",
        "messages": [
            {"speaker": "Caroline", "content": "hello"},
            {"speaker": "Melanie", "content": "later", "occurred_at": "2999-01-01T00:00:00Z"},
        ],
    }
    r = client.post("/v1/memory/messages", json=body)
    assert r.status_code == 422, r.text
    [problem] = r.json()["error"]["context"]["problems"]
    assert problem["field"] == "messages.1"
    assert sink.emitted == []
