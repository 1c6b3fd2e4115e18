"""A local OTLP/HTTP trace receiver: every process exports its spans here for real.

The processes under test use the real OpenTelemetry SDK and OTLP exporter; this server
decodes the protobuf requests with ``opentelemetry-proto`` and keeps the spans.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from devstack.served import UvicornThread


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str


class OtlpReceiver:
    """Keeps every span exported to ``POST /v1/traces``; ``endpoint`` once it is served."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.endpoint = ""
        self.app = Starlette(routes=[Route("/v1/traces", self.traces, methods=["POST"])])

    async def traces(self, request: Request) -> Response:
        req = ExportTraceServiceRequest()
        req.ParseFromString(await request.body())
        for rs in req.resource_spans:
            service = next(
                (a.value.string_value for a in rs.resource.attributes if a.key == "service.name"),
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


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    with UvicornThread(receiver.app) as served:
        receiver.endpoint = served.url
        yield receiver
