"""A real worker turns files into chunks, on Apache Kafka and on Tansu."""

from __future__ import annotations

from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import WorkerProcess
from events.chunks import DocumentChunked, DocumentRetracted
from events.files import FileDeleted
from tests.chunker.test_agent_files import LISP
from tests.chunker.test_file_chunker import REPO, changed
from tests.pipelines import eventually_while_running, fresh_pipeline, holds

pytestmark = pytest.mark.slow


async def test_worker_chunks_changed_files_and_retracts_deleted_ones(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline = await fresh_pipeline(broker, tmp_path)
    wiring = changed("streams/wiring.py", (REPO / "streams/wiring.py").read_text())
    await pipeline.produce(
        "files.changes",
        [
            (wiring.key, wiring),
            ("tribal:geo.lisp", changed("geo.lisp", LISP)),
            ("tribal:gone.py", FileDeleted(repo="tribal", path="gone.py")),
        ],
    )
    with WorkerProcess(pipeline.settings, tmp_path / "worker.log") as worker:
        await eventually_while_running(worker, holds(pipeline, "chunks", 3), timeout=120)
    events = await pipeline.decoded("chunks")
    chunked = {e.document_id: e for e in events if isinstance(e, DocumentChunked)}
    retracted = [e.document_id for e in events if isinstance(e, DocumentRetracted)]
    assert retracted == ["file:tribal:gone.py"]
    python = chunked["file:tribal:streams/wiring.py"]
    assert python.chunked_by == "python-ingester"
    assert python.document_version == wiring.sha256
    fqns = {c.fully_qualified_name for c in python.chunks}
    assert {"streams.wiring.Handler", "streams.wiring.Handler.handle"} <= fqns
    lisp = chunked["file:tribal:geo.lisp"]
    assert lisp.chunked_by == "lisp-ingester"
    assert {"area", "circle"} <= {c.symbol for c in lisp.chunks}
    assert await pipeline.read_all("deadletter") == []
