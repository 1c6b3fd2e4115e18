"""`/metrics` exposes seed 003's metrics (under ``tribal_``) and the pipeline's own."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from api.app import create_app
from devstack.pipeline import isolated_settings
from runtime.observability import metrics

REQUIRED = (
    "tribal_episodes_created_total",
    "tribal_entities_extracted_total",
    "tribal_relationships_created_total",
    "tribal_summaries_created_total",
    "tribal_ingestion_latency_milliseconds",
    "tribal_extraction_latency_milliseconds",
    "tribal_deduplication_matches_total",
    "tribal_events_processed_total",
    "tribal_dead_letters_total",
    "tribal_projection_lag_messages",
    "tribal_api_latency_milliseconds",
)


def test_metrics_exposes_every_seed_and_pipeline_metric(tmp_path: Path) -> None:
    # one observation each, so labelled families have a sample to show
    metrics.EPISODES_CREATED.labels(content_type="message", source="user").inc()
    metrics.DEDUPLICATION_MATCHES.labels(stage="fuzzy").inc()
    metrics.INGESTION_LATENCY.labels(operation="ingest_turn").observe(3.0)
    with TestClient(create_app(isolated_settings("", tmp_path))) as client:
        body = client.get("/metrics").text
    for name in REQUIRED:
        assert f"# TYPE {name.removesuffix('_total')}" in body or f"# TYPE {name}" in body, name
    assert 'tribal_episodes_created_total{content_type="message",source="user"}' in body
    assert 'tribal_deduplication_matches_total{stage="fuzzy"}' in body
