"""A bulk load is embedded behind live changes: the lane split and the model's turn order."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from devstack import Broker
from devstack.pipeline import Pipeline, WorkerProcess, eventually, isolated_settings
from events.chunks import Chunk, ChunksEmbedded, DocumentChunked
from streams.embedder.model import ModelLock, encode_background, in_slices


def test_slices_run_shortest_first_and_come_back_in_the_callers_order() -> None:
    seen: list[list[str]] = []

    def run(part: list[str]) -> list[int]:
        seen.append(part)
        return [len(t) for t in part]

    texts = ["ccc", "a", "bbbbb", "dd", "e"]
    assert in_slices(texts, 2, run) == [3, 1, 5, 2, 1]
    assert seen == [["a", "e"], ["dd", "ccc"], ["bbbbb"]]


def test_a_model_without_background_encoding_encodes_in_one_call() -> None:
    class Plain:
        name = "plain"
        dims = 1

        def encode(self, texts: list[str]) -> list[list[float]]:
            return [[float(len(t))] for t in texts]

    assert encode_background(Plain(), ["ab", "c"]) == [[2.0], [1.0]]


def test_a_live_call_waiting_for_the_model_goes_before_the_next_background_slice() -> None:
    lock = ModelLock()
    order: list[str] = []
    slice_started = threading.Event()
    release_first = threading.Event()

    def background_work() -> None:
        for n in range(3):
            with lock.background():
                order.append(f"bulk-{n}")
                if n == 0:
                    slice_started.set()
                    release_first.wait(5)

    bulk = threading.Thread(target=background_work)
    bulk.start()
    assert slice_started.wait(5)

    def live_call() -> None:
        with lock:
            order.append("live")

    live = threading.Thread(target=live_call)
    live.start()
    time.sleep(0.05)  # the live call is now waiting on the running slice
    release_first.set()
    bulk.join(5)
    live.join(5)
    assert order == ["bulk-0", "live", "bulk-1", "bulk-2"]


def test_foreground_calls_hold_the_model_one_at_a_time() -> None:
    lock = ModelLock()
    inside = 0
    most = 0
    guard = threading.Lock()

    def call() -> None:
        nonlocal inside, most
        with lock:
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.005)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert most == 1


def chunked(n: int, words: int = 200) -> DocumentChunked:
    text = " ".join(f"bulk{n} word{i % 37} refunds ledger" for i in range(words // 4))
    version = hashlib.sha256(text.encode()).hexdigest()
    return DocumentChunked(
        document_id=f"doc-{n}",
        document_version=version,
        source_type="file",
        path=f"src/doc_{n}.md",
        chunked_by="test",
        chunks=(Chunk(chunk_id=f"doc-{n}:{version[:8]}:0", index=0, text=text),),
    )


@pytest.mark.slow
async def test_a_live_document_is_embedded_before_a_bulk_load_queued_ahead_of_it(
    broker: Broker, tmp_path: Path
) -> None:
    settings = isolated_settings(
        broker.bootstrap, tmp_path, bulk_backlog=8, default_partitions=1, embed_batch=16
    )
    pipeline = Pipeline(settings)
    await pipeline.create_topics()
    with WorkerProcess(settings, tmp_path / "worker.log", role="embed") as worker:
        # The model is loaded and the worker is consuming before the load arrives.
        await pipeline.produce("chunks", [("doc-warm", chunked(-1, words=8))])

        async def warm() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            return len(await pipeline.read_all("embeddings")) >= 1

        await eventually(warm, timeout=120)
        bulk = 600
        await pipeline.produce("chunks", [(f"doc-{n}", chunked(n)) for n in range(bulk)])

        async def load_passed_on() -> bool:
            return len(await pipeline.read_all("chunks.bulk")) >= bulk // 2

        await eventually(load_passed_on, timeout=60)
        # A change made while the load is being embedded.
        await pipeline.produce("chunks", [("doc-live", chunked(10_000, words=8))])

        async def all_embedded() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            return len(await pipeline.read_all("embeddings")) >= bulk + 2

        await eventually(all_embedded, timeout=300)
    embedded = [e for e in await pipeline.decoded("embeddings") if isinstance(e, ChunksEmbedded)]
    order = [e.document_id for e in embedded]
    assert len(set(order)) == bulk + 2
    passed = [
        e.document_id
        for e in await pipeline.decoded("chunks.bulk")
        if isinstance(e, DocumentChunked)
    ]
    # The load went through the bulk lane (but for its first records, read before it had
    # piled up), its tail too (read close to the end of the log, but part of the same
    # load), and the live document overtook it.
    assert len(passed) >= bulk * 0.9
    assert passed[-1] == f"doc-{bulk - 1}"
    assert order.index("doc-10000") < order.index(passed[-1])
    assert order.index("doc-10000") < len(order) - 20
    assert await pipeline.read_all("deadletter") == []
