"""What an edge answered, sorted by the suite's property into a ledger entry.

An answer is *accepted* (a 2xx to a write), *answered* (a 2xx to a read; seed 002's
retrieve always answers 200), or *rejected* (a 4xx); a rejection must carry an error code
and a message (an AgentError, or the registry's Confluent ``error_code``). Anything else
(a 5xx, a 4xx without a code, no answer, an MCP protocol error) is a *problem*.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from devstack.fuzz.inputs import McpCall, RegistryCall
from devstack.fuzz.ledger import (
    Entry,
    Expectation,
    InIndex,
    InRegistry,
    at,
    event_ids,
    expectations,
)
from events.serde import DecodeError, EventSerde
from projections.index.port import Kind


@dataclass
class Sent:
    status: int | None
    body: Any
    problem: str | None


READS = ("http:retrieve", "http:search")


def agent_error(body: Any) -> tuple[str, str] | None:
    """``(code, message)`` of an ``{"success": false, "error": AgentError}`` body."""
    if not isinstance(body, dict) or body.get("success") is not False:
        return None
    error = body.get("error")
    if not isinstance(error, dict):
        return None
    code, message = error.get("code"), error.get("message")
    if isinstance(code, str) and code and isinstance(message, str) and message:
        return code, message
    return None


def classify_http(surface: str, sent: Sent) -> Entry:
    if sent.status is None:
        return Entry(surface, "answered", problem=sent.problem)
    status, body = sent.status, sent.body
    if status >= 500:
        return Entry(surface, "answered", status, problem=f"{status}: {str(body)[:300]}")
    if surface == "http:retrieve":  # seed 002: always 200, degraded at worst
        if status != 200 or not isinstance(body, dict) or "coverage" not in body:
            return Entry(surface, "answered", status, problem=f"not seed 002: {str(body)[:300]}")
        return Entry(surface, "answered", status)
    if 200 <= status < 300:
        return Entry(surface, "answered" if surface in READS else "accepted", status)
    error = agent_error(body)
    if error is None:
        return Entry(
            surface,
            "rejected",
            status,
            problem=f"{status} without an AgentError: {str(body)[:200]}",
        )
    return Entry(surface, "rejected", status, code=error[0], message=error[1])


def receipt_entry(entry: Entry, receipt: Any, topic: str) -> None:
    """What an accepted memory write owes: its episode, recognised by its ids."""
    group = str(receipt.get("group_id", ""))
    episode, event = receipt.get("episode_id"), receipt.get("event_id")
    entry.expect = (InIndex(Kind.EPISODE, group.partition(":")[0], str(episode)),)
    ids = {f"episode:{episode}", f"event:{event}"}
    if receipt.get("partition") is not None:
        ids.add(at(topic, int(receipt["partition"]), int(receipt["offset"])))
    entry.ids = frozenset(ids)


def classify_mcp(call: McpCall, result: Any, topic: str) -> Entry:
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)[:300]
        return Entry(call.surface, "answered", problem=f"protocol error: {text}")
    body = result.structured_content
    if body is None:
        try:
            body = json.loads(result.content[0].text)
        except (ValueError, IndexError, AttributeError):
            return Entry(call.surface, "answered", problem="no structured answer")
    if call.tool == "retrieve_knowledge":
        if "coverage" not in body:
            return Entry(call.surface, "answered", problem=f"not seed 002: {str(body)[:200]}")
        return Entry(call.surface, "answered")
    if body.get("success") is False:
        error = agent_error(body)
        if error is None:
            return Entry(call.surface, "rejected", problem=f"no error code: {str(body)[:200]}")
        return Entry(call.surface, "rejected", code=error[0], message=error[1])
    if call.tool == "add_memory":
        entry = Entry(call.surface, "accepted")
        receipt_entry(entry, body, topic)
        return entry
    return Entry(call.surface, "answered")


def classify_registry(call: RegistryCall, sent: Sent) -> Entry:
    if sent.status is None:
        return Entry(call.surface, "answered", problem=sent.problem)
    status, body = sent.status, sent.body
    if status >= 500:
        return Entry(call.surface, "answered", status, problem=f"{status}: {str(body)[:300]}")
    if 200 <= status < 300:
        if call.method == "POST" and isinstance(body, dict) and isinstance(body.get("id"), int):
            return Entry(call.surface, "accepted", status, expect=(InRegistry(body["id"]),))
        return Entry(call.surface, "answered", status)
    code = body.get("error_code") if isinstance(body, dict) else None
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(code, int) or not isinstance(message, str) or not message:
        return Entry(
            call.surface,
            "rejected",
            status,
            problem=f"{status} without error_code and message: {str(body)[:200]}",
        )
    return Entry(call.surface, "rejected", status, code=str(code), message=message)


def raw_entry(surface: str, value: bytes, serde: EventSerde, where: str) -> Entry:
    """A produced record owes a read-store object if it is a valid event, else (or if a
    stage refuses it) a dead letter at its offset."""
    ids = {where}
    expect: tuple[Expectation, ...] = ()
    try:
        decoded = serde.decode(value)
    except DecodeError:
        pass
    else:
        ids |= event_ids(decoded)
        expect = expectations(decoded)
    return Entry(surface, "accepted", expect=expect, ids=frozenset(ids))
