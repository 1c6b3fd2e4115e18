"""One FileChanged event, followed from its source to the index in one trace."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from devstack.otlp import otlp_receiver
from devstack.pipeline import REPO, Pipeline, eventually, isolated_settings, settings_env
from events.files import FileChanged
from runtime.embedded.process import ChildProcess
from sources.sink import KafkaSink
from tests.projections.test_runner import fresh_database

pytestmark = pytest.mark.slow


async def test_a_file_change_is_one_trace_from_source_through_agents_to_the_index(
    tansu_bootstrap: str, postgres_dsn: str, tmp_path: Path
) -> None:
    dsn = await fresh_database(postgres_dsn)
    settings = isolated_settings(tansu_bootstrap, tmp_path, postgres_dsn=dsn)
    pipeline = Pipeline(settings)
    await pipeline.create_topics()
    with otlp_receiver() as receiver:
        provider = TracerProvider(resource=Resource.create({"service.name": "test-source"}))
        provider.add_span_processor(
            SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces"))
        )
        trace.set_tracer_provider(provider)
        env = settings_env(settings)
        env.update(
            TRIBAL_POSTGRES_DSN=dsn,
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_BSP_SCHEDULE_DELAY="100",
        )
        children = [
            ChildProcess(
                name,
                [sys.executable, "-m", "cli", *args],
                env=env,
                log_path=tmp_path / f"{name}.log",
                cwd=REPO,
            )
            for name, args in (("worker", ["worker"]), ("project", ["project", "--only", "index"]))
        ]
        for child in children:
            child.start()
        try:
            content = "def traced():\n    return 'followed'\n"
            event = FileChanged(
                repo="demo",
                path="traced.py",
                content=content,
                sha256=hashlib.sha256(content.encode()).hexdigest(),
                language="python",
                size_bytes=len(content),
            )
            async with KafkaSink(tansu_bootstrap, pipeline.serde, settings.topic_prefix) as sink:
                await sink.emit("files.changes", "demo:traced.py", event)
                await sink.flush()
            [root] = [s for s in receiver.spans if s.name == "produce.files.changes"]

            async def traced_to_the_index() -> bool:
                names = {s.name for s in receiver.spans if s.trace_id == root.trace_id}
                return "projection.index" in names and "agent.embedder" in names

            await eventually(traced_to_the_index, timeout=180)
        finally:
            for child in children:
                child.stop()
            # The global provider outlives this test (OpenTelemetry sets it once per
            # process): shut its exporter, or every later span would wait on a receiver
            # that is gone, retrying for seconds each.
            provider.shutdown()
    in_trace = [s for s in receiver.spans if s.trace_id == root.trace_id]
    by_id = {s.span_id: s for s in in_trace}
    # every span in the trace descends from the source's produce span
    for s in in_trace:
        node = s
        while node.parent_id and node.parent_id in by_id:
            node = by_id[node.parent_id]
        assert node.span_id == root.span_id, f"{s.name} is not under the source span"
    services = {s.service for s in in_trace}
    assert {"test-source", "tribal-worker", "tribal-projections"} <= services
    names = {s.name for s in in_trace}
    assert {
        "produce.files.changes",
        "agent.file_chunker",
        "agent.embedder",
        "projection.index",
    } <= names
