"""OpenTelemetry spans, with trace context carried in Kafka headers.

A producer injects ``traceparent`` into a record's headers; the agent or projection
that consumes it continues the same trace, so one trace shows an event's whole path
(source → agents → projections). Spans are exported by OTLP when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; tests install an in-memory exporter.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Span, Status, StatusCode

Headers = Sequence[tuple[str, bytes]]

_configured = {"done": False}


def configure_tracing(service: str) -> None:
    """A tracer provider for this process; OTLP export only when an endpoint is set."""
    if _configured["done"]:
        return
    _configured["done"] = True
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def tracer() -> trace.Tracer:
    return trace.get_tracer("tribal")


def inject_headers(headers: list[tuple[str, bytes]] | None = None) -> list[tuple[str, bytes]]:
    """Headers carrying the current trace context (``traceparent``)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    out = list(headers or [])
    out.extend((k, v.encode()) for k, v in carrier.items())
    return out


def extract_context(headers: Headers | None) -> context.Context:
    """The trace context a record's headers carry (empty if none)."""
    carrier = {k: v.decode("latin-1") for k, v in (headers or []) if isinstance(v, bytes)}
    return propagate.extract(carrier)


@contextmanager
def span(name: str, headers: Headers | None = None, **attributes: Any) -> Iterator[Span]:
    """A span, child of the record's trace when ``headers`` carry one."""
    parent = extract_context(headers) if headers else None
    with tracer().start_as_current_span(name, context=parent) as current:
        for key, value in attributes.items():
            if value is not None:
                current.set_attribute(
                    key, value if isinstance(value, (str, int, float, bool)) else str(value)
                )
        try:
            yield current
        except Exception as exc:
            current.set_status(Status(StatusCode.ERROR, str(exc)))
            raise
