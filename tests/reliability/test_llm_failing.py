"""The anthropic path fails (garbage, timeouts, errors): documentation falls back to
the templates, says so on every event, and no table goes undocumented.

The real ``anthropic`` SDK talks to a local Messages API (:mod:`devstack.messages_api`)
so its retries, timeouts and parsing all run.
"""

from __future__ import annotations

from typing import Any

import pytest

from devstack.messages_api import Reply, messages_api, tool_reply
from events.documents import DomainDocumented, TableDocumented
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from tests.documenter.test_planner import shop


def _garbage_tool_input(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return tool_reply(body, {"description": 42, "columns": "not a list", "keywords": {"x": 1}})


def _prose_instead_of_tool(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 200, {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": "Sure! Here is some documentation: ¯\\_(ツ)_/¯"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _not_a_message(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 200, {"hello": "world"}


def _server_error(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return 500, {"type": "error", "error": {"type": "api_error", "message": "boom"}}


def _hang(body: dict[str, Any]) -> float:
    return 5.0


CASES: dict[str, Reply] = {
    "garbage_tool_input": _garbage_tool_input,
    "prose_instead_of_tool": _prose_instead_of_tool,
    "not_a_message": _not_a_message,
    "server_error": _server_error,
    "timeout": _hang,
}


@pytest.mark.parametrize(
    "case",
    list(CASES),
)
async def test_a_failing_llm_yields_template_documentation_marked_as_such(case: str) -> None:
    tables = shop()[:3]
    with messages_api(CASES[case]) as server:
        provider = make_provider(
            env={
                "ANTHROPIC_API_KEY": "k",
                "ANTHROPIC_BASE_URL": server.url,
                "TRIBAL_LLM_TIMEOUT_S": "0.5",
            }
        )
        lane = DocumenterLane(Documenter(provider))
        events = [e.event for e in await lane.process(tables)]
    docs = [e for e in events if isinstance(e, TableDocumented)]
    domains = [e for e in events if isinstance(e, DomainDocumented)]
    # nothing lost: every table is documented once
    assert sorted(d.fully_qualified_name for d in docs) == sorted(
        f"{t.database}.{t.schema_name}.{t.table_name}" for t in tables
    )
    assert {d.generated_by for d in docs} == {"template"}
    assert all(d.provider == "local" and d.fallback_reason for d in docs)
    assert all(d.description for d in docs)
    assert all(d.generated_by == "template" for d in domains)
    assert server.requests, "the anthropic path was tried first"
