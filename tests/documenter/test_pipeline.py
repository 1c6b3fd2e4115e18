"""A real worker documents the demo schema on Apache Kafka and on Tansu, across restarts."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import (
    REPO,
    Pipeline,
    WorkerProcess,
    eventually,
    isolated_settings,
    settings_env,
)
from events.documents import DomainDocumented, TableDocumented
from events.schema import TableObserved
from tests.documenter.conftest import DemoDatabase
from tests.documenter.test_export import _validate

pytestmark = pytest.mark.slow


@pytest.fixture
def pipeline(broker: Broker, tmp_path: Path) -> Pipeline:
    return Pipeline(isolated_settings(broker.bootstrap, tmp_path))


async def _docs(pipeline: Pipeline) -> tuple[list[TableDocumented], list[DomainDocumented]]:
    events = await pipeline.decoded("tables.documented")
    return (
        [e for e in events if isinstance(e, TableDocumented)],
        [e for e in events if isinstance(e, DomainDocumented)],
    )


async def _produce(pipeline: Pipeline, tables: list[TableObserved]) -> None:
    await pipeline.produce("schema.changes", [(t.fully_qualified_name, t) for t in tables])


async def test_worker_documents_the_schema_and_recovers_its_state_after_restart(
    pipeline: Pipeline, demo_db: DemoDatabase, tmp_path: Path
) -> None:
    await pipeline.create_topics()
    observed = await demo_db.observe()
    await _produce(pipeline, observed)
    with WorkerProcess(pipeline.settings, tmp_path / "worker1.log") as worker:

        async def all_documented() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            tables, _ = await _docs(pipeline)
            return {t.fully_qualified_name for t in tables} == {
                o.fully_qualified_name for o in observed
            }

        await eventually(all_documented, timeout=120)
        await eventually(lambda: _settled(pipeline), timeout=30)
    tables, domains = await _docs(pipeline)
    live = {d.domain for d in domains if d.tables} - {"system"}
    assert len(live) >= 3
    assert await pipeline.read_all("deadletter") == []

    # A new worker starts with no state: it must rebuild it from the lane, so one
    # renamed column re-documents one table and no domain.
    await demo_db.execute("ALTER TABLE payments RENAME COLUMN provider_ref TO gateway_ref")
    changed = [t for t in await demo_db.observe() if t.table_name == "payments"]
    await _produce(pipeline, changed)
    seen = {e.event_id for e in [*tables, *domains]}
    with WorkerProcess(pipeline.settings, tmp_path / "worker2.log") as worker:

        async def payments_again() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            t, _ = await _docs(pipeline)
            return len(t) > len(tables)

        await eventually(payments_again, timeout=120)
        await eventually(lambda: _settled(pipeline), timeout=30)
    after, domains_after = await _docs(pipeline)
    new = [t for t in after if t.event_id not in seen]
    assert [t.table_name for t in new] == ["payments"]
    assert "gateway_ref" in new[0].column_descriptions
    assert [d for d in domains_after if d.event_id not in seen] == []

    out = tmp_path / "docs"
    export = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cli", "export-docs", str(out),
        env=settings_env(pipeline.settings), cwd=REPO,
    )  # fmt: skip
    assert await asyncio.wait_for(export.wait(), 120) == 0
    manifest = json.loads((out / "documentation-manifest.json").read_text())
    _validate(manifest)
    assert manifest["databases"][0]["tables_documented"] == len(observed)
    assert "gateway_ref" in (out / "shop" / new[0].domain / "payments.md").read_text()


_last: dict[str, int] = {}


async def _settled(pipeline: Pipeline) -> bool:
    """True once the documented topic stopped growing between two looks."""
    n = len(await pipeline.read_all("tables.documented"))
    key = pipeline.settings.topic_prefix
    same = _last.get(key) == n
    _last[key] = n
    return same
