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

EPISODES_CREATED = Counter(
    "tribal_episodes_created", "Episodes recorded", ["content_type", "source"]
)
ENTITIES_EXTRACTED = Counter("tribal_entities_extracted", "Entities extracted", ["entity_type"])
RELATIONSHIPS_CREATED = Counter(
    "tribal_relationships_created", "Relationships asserted", ["relation_type"]
)
SUMMARIES_CREATED = Counter("tribal_summaries_created", "Summaries written", ["summary_type"])
INGESTION_LATENCY = Histogram(
    "tribal_ingestion_latency_milliseconds",
    "Ingestion latency",
    ["operation"],
    buckets=_MS_BUCKETS,
)
EXTRACTION_LATENCY = Histogram(
    "tribal_extraction_latency_milliseconds",
    "Extraction latency",
    ["operation"],
    buckets=_MS_BUCKETS,
)
DEDUPLICATION_MATCHES = Counter(
    "tribal_deduplication_matches", "Entity dedup matches by stage", ["stage"]
)

EVENTS_PROCESSED = Counter(
    "tribal_events_processed", "Records handled by an agent", ["agent", "topic"]
)
EVENTS_EMITTED = Counter("tribal_events_emitted", "Derived records produced", ["topic"])
DEAD_LETTERS = Counter("tribal_dead_letters", "Records sent to the dead-letter topic", ["code"])
PROCESSING_LATENCY = Histogram(
    "tribal_processing_latency_milliseconds",
    "Per-record agent latency",
    ["agent"],
    buckets=_MS_BUCKETS,
)
PROJECTION_APPLIED = Counter(
    "tribal_projection_events_applied", "Events applied by a projection", ["projection"]
)
PROJECTION_LAG = Gauge(
    "tribal_projection_lag_messages",
    "Messages a projection has yet to apply",
    ["projection"],
    multiprocess_mode="livemax",
)
STAGE_STUCK = Gauge(
    "tribal_stage_stuck",
    "1 while a stage has work and has not advanced for TRIBAL_STUCK_AFTER_S",
    ["stage"],
    multiprocess_mode="livemax",
)
STAGE_FAILURES = Counter(
    "tribal_stage_failures", "Failed applies of a projection by kind", ["stage", "kind"]
)
RETRIEVE_FALLBACKS = Counter(
    "tribal_retrieve_fallbacks",
    "retrieve_knowledge answers that were seed 002's fallback body, by why",
    ["reason"],
)
API_LATENCY = Histogram(
    "tribal_api_latency_milliseconds",
    "HTTP request latency",
    ["route", "method", "status"],
    buckets=_MS_BUCKETS,
)
API_REQUESTS = Counter("tribal_api_requests", "HTTP requests", ["route", "method", "status"])


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
