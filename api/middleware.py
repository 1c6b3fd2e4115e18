"""Every request gets a request id (logs, response header) and lands in the API metrics."""

from __future__ import annotations

import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from runtime.observability.logs import request_id
from runtime.observability.metrics import API_LATENCY, API_REQUESTS
from runtime.observability.tracing import span


class ObservabilityMiddleware:
    """Request id (``X-Request-ID`` in and out), a span, latency and count per route."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode() or None
        rid = incoming or uuid.uuid4().hex
        token = request_id.set(rid)
        status = {"code": 500}
        t0 = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = int(message["status"])
                headers = list(message.get("headers") or [])
                headers.append((b"x-request-id", rid.encode()))
                message = {**message, "headers": headers}
            await send(message)

        path = scope.get("path", "")
        # Group by route prefix, not by raw path: /v1/tables/{fqn} must not explode labels.
        route = "/".join(path.split("/")[:3]) or "/"
        try:
            with span(f"api {scope.get('method', '')} {route}", request_id=rid):
                await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(token)
            labels = {
                "route": route,
                "method": scope.get("method", ""),
                "status": str(status["code"]),
            }
            API_LATENCY.labels(**labels).observe((time.perf_counter() - t0) * 1000)
            API_REQUESTS.labels(**labels).inc()
