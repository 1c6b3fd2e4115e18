"""A real worker on a real broker: SIGKILL mid-conversation, restart, nothing lost or
duplicated (Apache Kafka and Tansu, through the ``broker`` fixture)."""

from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from devstack import Broker
from devstack.memory import GAZETTEER, conversation, memory
from devstack.pipeline import Pipeline, WorkerProcess, eventually, isolated_settings
from events.facts import EntitiesExtracted
from events.memory import EpisodeRecorded, MemoryForgotten, SummaryCreated, episode_id_for
from runtime.topics import TOPICS_BY_NAME
from streams.memory.config import MemoryIngestionConfig

pytestmark = pytest.mark.slow

A, B = "acme:support-1", "globex:support-1"


def memory_config() -> MemoryIngestionConfig:
    # The reference run embeds names with a test embedder; the worker with MiniLM. The
    # embedding stage is off so both make the same dedup decisions.
    return MemoryIngestionConfig.model_validate(
        {
            "entity_extraction": {"gazetteer": GAZETTEER},
            "deduplication": {"embedding_match_enabled": False},
        }
    )


@pytest.fixture
def pipeline(broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pipeline:
    monkeypatch.setenv("TRIBAL_MEMORY_CONFIG", memory_config().model_dump_json())
    monkeypatch.setenv("TRIBAL_LLM_PROVIDER", "local")
    return Pipeline(isolated_settings(broker.bootstrap, tmp_path, commit_interval=2.0))


async def test_sigkill_mid_conversation_loses_and_duplicates_nothing(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    turns = {A: conversation(A), B: conversation(B, limit=80)}
    everything = [t for g in (A, B) for t in turns[g]]
    expected = {episode_id_for(t.event_id) for t in everything}
    await pipeline.create_topics()
    first = turns[A][:130] + turns[B][:40]
    await pipeline.produce("memory.turns", [(t.group_id, t) for t in first])

    with WorkerProcess(pipeline.settings, tmp_path / "worker1.log") as worker:

        async def midway() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            facts = await pipeline.read_all("memory.facts", idle_ms=200)
            return len(facts) >= 60

        await eventually(midway, timeout=120)
        assert worker.proc is not None
        os.kill(worker.proc.pid, signal.SIGKILL)
        worker.proc.wait(10)

    rest = turns[A][130:] + turns[B][40:]
    await pipeline.produce("memory.turns", [(t.group_id, t) for t in rest])
    with WorkerProcess(pipeline.settings, tmp_path / "worker2.log") as worker:

        async def done() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            facts = await pipeline.decoded("memory.facts")
            extracted = {f.episode_id for f in facts if isinstance(f, EntitiesExtracted)}
            summaries = await pipeline.read_all("memory.summaries")
            return extracted >= expected and len(summaries) >= 12 + 4

        await eventually(done, timeout=180, interval=1.0)

    episodes = [
        e for e in await pipeline.decoded("memory.episodes") if isinstance(e, EpisodeRecorded)
    ]
    assert {e.episode_id for e in episodes} == expected  # none lost
    # A redelivered turn may be re-emitted, but as the very same event (same ids): the
    # index upserts it in place.
    assert len({e.event_id for e in episodes}) == len(expected)
    assert all(e.embedding is not None and len(e.embedding) == 384 for e in episodes)

    facts = await pipeline.decoded("memory.facts")
    summaries = [
        s for s in await pipeline.decoded("memory.summaries") if isinstance(s, SummaryCreated)
    ]
    ids = Counter(f.event_id for f in [*facts, *summaries])
    assert [i for i, n in ids.items() if n > 1] == []  # no duplicated fact or summary

    reference = memory(memory_config())
    _, ref_facts, ref_summaries = await reference.run(everything)
    assert {f.event_id for f in facts} == {f.event_id for f in ref_facts}
    by_id = {s.summary_id: s.content for s in summaries}
    assert by_id == {s.summary_id: s.content for s in ref_summaries}
    assert await pipeline.read_all("deadletter") == []


async def test_a_tenant_forget_reaches_every_partition_of_the_episodes_through_a_worker(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    """Every worker owning a partition of ``memory.episodes`` must hear of it: the
    worker produces one copy to each partition."""
    await pipeline.create_topics()
    groups = [f"acme:support-{i}" for i in range(8)]
    turns = [t for g in groups for t in conversation(g, limit=3)]
    forget = MemoryForgotten(group_id="acme:_tenant", scope="tenant")
    await pipeline.produce(
        "memory.turns", [(t.group_id, t) for t in turns] + [(forget.group_id, forget)]
    )
    parts = TOPICS_BY_NAME["memory.episodes"].partition_count(pipeline.settings)
    with WorkerProcess(pipeline.settings, tmp_path / "worker.log") as worker:

        async def everywhere() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            records = await pipeline.read_all("memory.episodes", idle_ms=200)
            decoded = [(m.partition, pipeline.serde.decode(m.value or b"")) for m in records]
            forgets = [p for p, e in decoded if isinstance(e, MemoryForgotten)]
            return set(forgets) == set(range(parts))

        await eventually(everywhere, timeout=120, interval=1.0)
    records = await pipeline.read_all("memory.episodes")
    forgets = [m.partition for m in records
               if isinstance(pipeline.serde.decode(m.value or b""), MemoryForgotten)]  # fmt: skip
    assert sorted(forgets) == list(range(parts))  # one copy each, none twice
