"""A local HTTP server that answers the Anthropic Messages API.

Not a mock of the SDK: the real ``anthropic`` client sends real HTTP requests here,
so its request building, retries, timeouts and response parsing all run. Each
scenario decides what ``POST /v1/messages`` answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from devstack.served import UvicornThread

Reply = Callable[[dict[str, Any]], tuple[int, dict[str, Any]] | float]
"""Given the request body: (status, json body), or a float = seconds to hang."""


def tool_reply(body: dict[str, Any], payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """A well-formed Messages API answer that calls the forced tool with ``payload``."""
    name = body["tool_choice"]["name"]
    return 200, {
        "id": "msg_local_1",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": payload}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 34},
    }


class MessagesServer:
    """Answers ``POST /v1/messages`` with ``reply`` and keeps every request it was sent."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self.app = Starlette(routes=[Route("/v1/messages", self.messages, methods=["POST"])])

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({"headers": dict(request.headers), "body": body})
        answer = self.reply(body)
        if isinstance(answer, float):
            await asyncio.sleep(answer)
            answer = tool_reply(body, {})
        status, data = answer
        return JSONResponse(data, status_code=status)


@contextmanager
def messages_api(reply: Reply) -> Iterator[MessagesServer]:
    server = MessagesServer(reply)
    with UvicornThread(server.app) as served:
        server.url = served.url
        yield server
