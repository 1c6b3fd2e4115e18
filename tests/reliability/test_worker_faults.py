"""Faust workers killed, scaled out and cut off from Kafka during a load.

Ground truth comes from the source events themselves: the pure chunkers applied to
the last version of every document give the chunks the stream must end with. Each
test then reads ``tribal.chunks`` back and checks that no document is missing, none
ends on a stale version, nothing was dead-lettered, and (at-least-once) that every
key's versions arrived in order — a redelivery may repeat a run of versions after a
crash, but never skips one or goes back to an older one out of sequence.
The embedded-mode ``kill -9`` lives in tests/test_embedded.py.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import signal
from pathlib import Path

import pytest

from devstack.kafka import KafkaNode
from devstack.pipeline import Pipeline, WorkerProcess, eventually, isolated_settings, kb_article
from events.base import Event
from events.chunks import DocumentChunked
from events.kb import KbArticleUpserted
from streams.chunker.kb import chunk_kb_article

pytestmark = pytest.mark.slow


def versions(n_keys: int, n_versions: int) -> list[tuple[str, KbArticleUpserted]]:
    """``n_versions`` edits of ``n_keys`` articles, interleaved as a live KB would send."""
    return [
        (f"kb-{k}", kb_article(k, f"Version {v} of article {k}.\n\nStep {v}: hold {k} s."))
        for v in range(n_versions)
        for k in range(n_keys)
    ]


def truth(items: list[tuple[str, KbArticleUpserted]]) -> dict[str, str]:
    """document id → the document_version its last edit must end on."""
    out: dict[str, str] = {}
    for _, article in items:
        [emit] = list(chunk_kb_article(article))
        assert isinstance(emit.event, DocumentChunked)
        out[emit.event.document_id] = emit.event.document_version
    return out


def version_order(items: list[tuple[str, KbArticleUpserted]]) -> dict[str, list[str]]:
    order: dict[str, list[str]] = {}
    for _, article in items:
        [emit] = list(chunk_kb_article(article))
        assert isinstance(emit.event, DocumentChunked)
        order.setdefault(emit.event.document_id, []).append(emit.event.document_version)
    return order


async def check_against_truth(
    pipeline: Pipeline, items: list[tuple[str, KbArticleUpserted]]
) -> None:
    expected = truth(items)
    order = version_order(items)
    seen: dict[str, list[str]] = {}
    for event in await pipeline.decoded("chunks"):
        assert isinstance(event, DocumentChunked)
        seen.setdefault(event.document_id, []).append(event.document_version)
    assert set(seen) == set(expected), "a document was lost"
    for doc, got in seen.items():
        assert got[-1] == expected[doc], f"{doc} ends on a stale version"
        index = [order[doc].index(v) for v in got]
        assert set(index) == set(range(len(order[doc]))), f"{doc} lost a version"
        for a, b in itertools.pairwise(index):
            # in order, or a redelivery restarting at an earlier version
            assert b == a + 1 or b <= a, f"{doc} out of order: {index}"
    assert await pipeline.read_all("deadletter") == []


async def _chunked_all(pipeline: Pipeline, expected: dict[str, str]) -> bool:
    last: dict[str, str] = {}
    for event in await pipeline.decoded("chunks"):
        if isinstance(event, DocumentChunked):
            last[event.document_id] = event.document_version
    return last == expected


async def test_a_worker_sigkilled_at_random_points_loses_nothing_and_keeps_key_order(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(kafka_bootstrap, tmp_path))
    await pipeline.create_topics()
    items = versions(40, 6)
    producing = asyncio.create_task(_trickle(pipeline, items, per_second=60))
    rnd = random.Random(10)
    for n in range(3):
        with WorkerProcess(pipeline.settings, tmp_path / f"worker-{n}.log") as worker:
            await asyncio.sleep(rnd.uniform(3.0, 8.0))
            assert worker.proc is not None
            os.kill(worker.proc.pid, signal.SIGKILL)
            worker.proc.wait(10)
    await producing
    with WorkerProcess(pipeline.settings, tmp_path / "worker-final.log"):
        await eventually(lambda: _chunked_all(pipeline, truth(items)), timeout=60)
    await check_against_truth(pipeline, items)


async def test_two_workers_share_partitions_and_one_is_killed_mid_load(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(kafka_bootstrap, tmp_path, default_partitions=4))
    await pipeline.create_topics()
    items = versions(40, 8)
    producing = asyncio.create_task(_trickle(pipeline, items, per_second=60))
    with WorkerProcess(pipeline.settings, tmp_path / "a.log"):
        with WorkerProcess(pipeline.settings, tmp_path / "b.log") as b:
            await asyncio.sleep(6)
            assert b.proc is not None
            os.kill(b.proc.pid, signal.SIGKILL)  # a takes b's partitions at the rebalance
            b.proc.wait(10)
        await asyncio.sleep(2)
        with WorkerProcess(pipeline.settings, tmp_path / "b2.log"):  # and shares them again
            await producing
            await eventually(lambda: _chunked_all(pipeline, truth(items)), timeout=60)
    await check_against_truth(pipeline, items)


async def test_apache_kafka_restarted_during_load_recovers_without_an_operator(
    tmp_path: Path,
) -> None:
    node = KafkaNode(tmp_path / "kafka").start()
    try:
        pipeline = Pipeline(isolated_settings(node.bootstrap, tmp_path))
        await pipeline.create_topics()
        items = versions(30, 4)
        first, rest = items[:60], items[60:]
        with WorkerProcess(pipeline.settings, tmp_path / "worker.log") as worker:
            await _trickle(pipeline, first, per_second=60)
            # The worker is up and working before the broker goes: on a busy machine its
            # start alone can outlast the two seconds this used to wait, and a worker
            # that never reached the broker is not one restarted under load.
            await eventually(lambda: _chunked_all(pipeline, truth(first)), timeout=60)
            node.stop()  # controlled restart, same port and log dirs
            await asyncio.sleep(3)
            node = KafkaNode(
                tmp_path / "kafka", port=node.port, controller_port=node.controller_port
            ).start()
            await _trickle(pipeline, rest, per_second=60)
            assert worker.proc is not None

            async def done() -> bool:
                assert worker.proc is not None
                assert worker.proc.poll() is None, worker.log()
                return await _chunked_all(pipeline, truth(items))

            await eventually(done, timeout=80)
        await check_against_truth(pipeline, items)
    finally:
        node.stop()


async def _trickle(
    pipeline: Pipeline, items: list[tuple[str, KbArticleUpserted]], per_second: int
) -> None:
    """Produce in small acknowledged batches, retrying a batch the broker refused."""
    step = max(1, per_second // 10)
    for i in range(0, len(items), step):
        batch: list[tuple[str, Event | bytes]] = list(items[i : i + step])
        for attempt in range(60):
            try:
                await pipeline.produce("kb.articles", batch)
                break
            except Exception:
                if attempt == 59:
                    raise
                await asyncio.sleep(1)
        await asyncio.sleep(0.1)
