"""A local OTLP/HTTP trace receiver: every process exports its spans here for real.

The processes under test use the real OpenTelemetry SDK and OTLP exporter; this server
decodes the protobuf requests with ``opentelemetry-proto`` and keeps the spans.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from runtime.embedded.process import free_port


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str


class OtlpReceiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.port = free_port()

        async def traces(request: Request) -> Response:
            req = ExportTraceServiceRequest()
            req.ParseFromString(await request.body())
            for rs in req.resource_spans:
                service = next(
                    (
                        a.value.string_value
                        for a in rs.resource.attributes
                        if a.key == "service.name"
                    ),
                    "",
                )
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            ReceivedSpan(
                                service,
                                s.name,
                                s.trace_id.hex(),
                                s.span_id.hex(),
                                s.parent_span_id.hex(),
                            )
                        )
            return Response(
                ExportTraceServiceResponse().SerializeToString(),
                media_type="application/x-protobuf",
            )

        app = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error")
        )

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    thread = threading.Thread(target=receiver.server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not receiver.server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield receiver
    finally:
        receiver.server.should_exit = True
        thread.join(5)
