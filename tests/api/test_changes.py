"""``GET /v1/memory/changes``: new and invalidated facts pushed as server-sent events."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import httpx

from devstack.deployment import ACME, ALICE, AUTH, GROUP, Demo, fact
from devstack.served import ThreadedServer
from events.facts import RelationshipInvalidated


async def read_events(response: httpx.Response, want: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if not line.strip():
            if "data" in current:
                events.append(current)
                if len(events) == want:
                    return events
            current = {}
            continue
        field, _, value = line.partition(":")
        current[field] = value.strip()
    return events


async def test_the_change_feed_delivers_new_and_invalidated_facts(
    server: ThreadedServer, demo: Demo
) -> None:
    rel = uuid4()
    now = datetime.now(UTC)
    async with (
        httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=60) as c,
        c.stream("GET", "/v1/memory/changes", params={"group_id": GROUP}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        reader = asyncio.create_task(read_events(response, 2))
        await asyncio.sleep(0.5)  # the feed starts after the request: only new facts
        asserted = fact(rel, ALICE, ACME, "works_at", "Alice works at Acme")
        asserted = asserted.model_copy(update={"occurred_at": now})
        invalidated = RelationshipInvalidated(
            group_id=GROUP, relationship_id=rel, valid_to=now, reason="left Acme",
            occurred_at=now,
        )  # fmt: skip
        await demo.pipeline.produce("memory.facts", [(GROUP, asserted), (GROUP, invalidated)])
        await demo.project(["graph"])
        events = await asyncio.wait_for(reader, 30)
    assert [e["event"] for e in events] == ["asserted", "invalidated"]
    first, second = (json.loads(e["data"]) for e in events)
    assert first["fact"] == "Alice works at Acme"
    assert first["relationship_id"] == str(rel)
    assert second["reason"] == "left Acme"
    assert second["valid_to"]
    assert int(events[0]["id"]) < int(events[1]["id"])  # offsets: resumable with Last-Event-ID


async def test_the_change_feed_resumes_after_an_offset(server: ThreadedServer) -> None:
    async with (
        httpx.AsyncClient(base_url=server.url, headers=AUTH, timeout=60) as c,
        c.stream("GET", "/v1/memory/changes", params={"group_id": GROUP, "after": -1}) as r,
    ):
        events = await asyncio.wait_for(read_events(r, 1), 10)
    assert events[0]["event"] == "asserted"  # history replays from the start


async def test_the_change_feed_rejects_malformed_groups(server: ThreadedServer) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers=AUTH) as c:
        r = await c.get("/v1/memory/changes", params={"group_id": "no-colon"})
        assert r.status_code == 422
