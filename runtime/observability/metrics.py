"""Prometheus metrics (seed 003's, under ``tribal_``) plus pipeline and API metrics.

Embedded mode runs several processes; ``tribal up`` points them all at one
``PROMETHEUS_MULTIPROC_DIR`` so the API's ``/metrics`` shows the whole pipeline. A
standalone worker serves its own ``/metrics`` when ``TRIBAL_METRICS_PORT`` is set.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

_MS_BUCKETS = (1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
# Labels that metrics read side by side share, so that their series join on them
# (api.middleware labels both request metrics with one dict).
_BY_PROJECTION = ("projection",)
_BY_STAGE = ("stage",)
_BY_REQUEST = ("route", "method", "status")


def _counter(name: str, documentation: str, *labels: str) -> Counter:
    return Counter(name, documentation, labels)


def _milliseconds(name: str, documentation: str, *labels: str) -> Histogram:
    """A latency histogram, in milliseconds."""
    return Histogram(name, documentation, labels, buckets=_MS_BUCKETS)


def _live_max(name: str, documentation: str, *labels: str) -> Gauge:
    """A gauge that shows, across processes, the largest value of those alive."""
    return Gauge(name, documentation, labels, multiprocess_mode="livemax")


# Seed 003's metrics.
EPISODES_CREATED = _counter(
    "tribal_episodes_created", "Episodes recorded", "content_type", "source"
)
ENTITIES_EXTRACTED = _counter("tribal_entities_extracted", "Entities extracted", "entity_type")
RELATIONSHIPS_CREATED = _counter(
    "tribal_relationships_created", "Relationships asserted", "relation_type"
)
SUMMARIES_CREATED = _counter("tribal_summaries_created", "Summaries written", "summary_type")
INGESTION_LATENCY = _milliseconds(
    "tribal_ingestion_latency_milliseconds", "Ingestion latency", "operation"
)
EXTRACTION_LATENCY = _milliseconds(
    "tribal_extraction_latency_milliseconds", "Extraction latency", "operation"
)
DEDUPLICATION_MATCHES = _counter(
    "tribal_deduplication_matches", "Entity dedup matches by stage", "stage"
)
# The pipeline's and the API's.
EVENTS_PROCESSED = _counter(
    "tribal_events_processed", "Records handled by an agent", "agent", "topic"
)
EVENTS_EMITTED = _counter("tribal_events_emitted", "Derived records produced", "topic")
DEAD_LETTERS = _counter("tribal_dead_letters", "Records sent to the dead-letter topic", "code")
PROCESSING_LATENCY = _milliseconds(
    "tribal_processing_latency_milliseconds", "Per-record agent latency", "agent"
)
PROJECTION_APPLIED = _counter(
    "tribal_projection_events_applied", "Events applied by a projection", *_BY_PROJECTION
)
PROJECTION_LAG = _live_max(
    "tribal_projection_lag_messages", "Messages a projection has yet to apply", *_BY_PROJECTION
)
STAGE_STUCK = _live_max(
    "tribal_stage_stuck",
    "1 while a stage has work and has not advanced for TRIBAL_STUCK_AFTER_S",
    *_BY_STAGE,
)
STAGE_FAILURES = _counter(
    "tribal_stage_failures", "Failed applies of a projection by kind", *_BY_STAGE, "kind"
)
RETRIEVE_FALLBACKS = _counter(
    "tribal_retrieve_fallbacks",
    "retrieve_knowledge answers that were seed 002's fallback body, by why",
    "reason",
)
API_LATENCY = _milliseconds("tribal_api_latency_milliseconds", "HTTP request latency", *_BY_REQUEST)
API_REQUESTS = _counter("tribal_api_requests", "HTTP requests", *_BY_REQUEST)


def exposition() -> tuple[bytes, str]:
    """The text exposition of every process's metrics (or this process's alone)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


def serve_metrics_if_configured() -> None:
    """Serve ``/metrics`` on ``TRIBAL_METRICS_PORT`` (workers in distributed mode)."""
    port = os.environ.get("TRIBAL_METRICS_PORT")
    if port:
        from prometheus_client import start_http_server

        start_http_server(int(port), addr=os.environ.get("TRIBAL_METRICS_HOST", "127.0.0.1"))
