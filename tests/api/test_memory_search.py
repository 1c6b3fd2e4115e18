"""``search_memory`` results say where they came from, best first: episodes carry their
turn, event, speaker, time and metadata; facts and summaries the episodes behind them.

A conversation runs through the real memory processors into a pgvector index and the
temporal graph on PostgreSQL, then the service answers from those stores.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from api.auth import ANY_TENANT
from api.schemas.memory import SearchMemoryInput, SearchMemoryOutput
from api.services.context import QueryEmbedder, ServiceContext
from api.services.memory import best_first, cosines, search_memory
from devstack.memory import HashEmbedder, config, memory
from events.base import Event
from events.memory import TurnRecorded, episode_id_for
from projections.base import Applied
from projections.graph import GraphProjection, graph_projection
from projections.index.pgvector import PgVectorIndex
from projections.index.port import Hit, IndexedObject, Kind
from projections.index.projection import IndexProjection
from runtime.settings import TribalSettings
from streams.memory.config import SummarizationConfig
from tests.memory.test_event_time import turns, week
from tests.projections.test_runner import fresh_database

GROUP = "acme:t"


def hit(n: int, score: float) -> Hit:
    return Hit(IndexedObject(f"e{n}", Kind.EPISODE, f"e{n}", f"episode {n}"), score)


def test_results_come_in_the_order_of_the_relevance_they_report() -> None:
    fused = [hit(1, 0.484), hit(2, 0.379), hit(3, 0.459), hit(4, 0.349)]  # the order
    assert [h.score for h in best_first(fused)] == [0.484, 0.459, 0.379, 0.349]
    tied = [hit(1, 0.5), hit(2, 0.5), hit(3, 0.7)]
    assert [h.object.chunk_id for h in best_first(tied)] == ["e3", "e1", "e2"]


@dataclass
class Stores:
    context: ServiceContext
    said: list[TurnRecorded]


async def apply(
    projection: IndexProjection | GraphProjection, topic: str, events: Sequence[Event]
) -> None:
    await projection.apply([Applied(topic, 0, i, None, e) for i, e in enumerate(events)])


@pytest.fixture
async def stores(postgres_dsn: str, tmp_path: Path) -> AsyncIterator[Stores]:
    dsn = await fresh_database(postgres_dsn)
    cfg = config()
    cfg = cfg.model_copy(
        update={"summarization": SummarizationConfig.model_validate(
            {"window": {"turns_per_summary": 3},
             "meta": {"summaries_per_meta": 2, "enabled_at_turn_count": 1}})}
    )  # fmt: skip
    said = turns(GROUP)
    said[4] = said[4].model_copy(update={"metadata": {"channel": "chat", "session": "2"}})
    episodes, facts, summaries = await memory(cfg).run(said)
    index = PgVectorIndex(dsn, model=HashEmbedder.name, dims=HashEmbedder.dims)
    graph = graph_projection(dsn)
    projection = IndexProjection(index)
    await projection.setup()
    await graph.setup()
    await graph.positions()
    await apply(projection, "tribal.memory.episodes", episodes)
    await apply(projection, "tribal.memory.summaries", summaries)
    await apply(graph, "tribal.memory.facts", facts)
    context = ServiceContext(
        TribalSettings(data_dir=tmp_path), db=graph.pool, index=index,
        embedder=QueryEmbedder(HashEmbedder()),
    )  # fmt: skip
    yield Stores(context, said)
    await graph.close()
    await index.close()


async def search(stores: Stores, query: str, **more: object) -> SearchMemoryOutput:
    req = SearchMemoryInput.model_validate({"group_id": GROUP, "query": query, **more})
    return await search_memory(stores.context, req, ANY_TENANT)


def non_increasing(scores: Sequence[float]) -> bool:
    return all(a >= b for a, b in itertools.pairwise(scores))


async def test_an_episode_result_names_its_turn_event_speaker_time_and_metadata(
    stores: Stores,
) -> None:
    out = await search(stores, "Caroline moved to Bristol")
    assert out.episodes
    assert non_increasing([e.relevance_score for e in out.episodes])
    moved = stores.said[4]
    [found] = [e for e in out.episodes if e.source_event_id == str(moved.event_id)]
    assert (found.turn_id, found.speaker, found.occurred_at) == (
        str(moved.turn_id), "Caroline", moved.occurred_at,
    )  # fmt: skip
    assert (found.content_type, found.metadata) == ("message", {"channel": "chat", "session": "2"})
    assert found.content.startswith("Caroline: I moved to Bristol")
    assert non_increasing([a.relevance for a in out.answers])
    [answer] = [a for a in out.answers if a.episode_id == found.episode_id]
    assert (answer.turn_id, answer.speaker) == (found.turn_id, "Caroline")


async def test_a_fact_lists_the_episode_that_stated_it_and_the_one_that_ended_it(
    stores: Stores,
) -> None:
    now = await search(stores, "where does Caroline live")
    [bristol] = [f for f in now.facts if f.target_name == "Bristol"]
    assert bristol.episode_ids == (episode_id_for(stores.said[4].event_id),)  # not the restatement
    then = await search(stores, "where does Caroline live", as_of=week(2).isoformat())
    [leeds] = [f for f in then.facts if f.target_name == "Leeds"]
    assert leeds.valid_to == week(4)
    assert leeds.invalidated_in == bristol.episode_ids[0]
    [fact_answer] = [a for a in now.answers if a.relationship_id == bristol.relationship_id]
    assert fact_answer.episode_ids == list(bristol.episode_ids)


async def test_summaries_list_the_episodes_they_cover_and_carry_the_last_turns_time(
    stores: Stores,
) -> None:
    out = await search(stores, "Melanie email", limit=10)
    assert out.summaries
    assert non_increasing([s.relevance_score for s in out.summaries])
    windows = {s.summary_id: s for s in out.summaries if s.summary_type == "window"}
    metas = [s for s in out.summaries if s.summary_type == "meta"]
    for window in windows.values():  # a window ends with its third turn
        assert len(window.episode_ids) == 3
        assert window.occurred_at in (week(2), week(5), week(8))
    assert metas
    for meta in metas:  # the first two windows
        assert (len(meta.summary_ids), len(meta.episode_ids), meta.occurred_at) == (2, 6, week(5))
        covered = [windows[s] for s in meta.summary_ids if s in windows]
        assert all(set(w.episode_ids) <= set(meta.episode_ids) for w in covered)


async def test_of_two_turns_saying_alike_the_later_comes_first(tmp_path: Path) -> None:
    from api.schemas.memory import EpisodeOut
    from api.services.memory import rank_together

    context = ServiceContext(
        TribalSettings(data_dir=tmp_path), embedder=QueryEmbedder(HashEmbedder())
    )
    said = "Caroline: I live in Bristol these days."
    episodes = [
        EpisodeOut(episode_id=f"e{n}", content=said, relevance_score=0.5, occurred_at=week(n))
        for n in (0, 4)
    ]
    answers = await rank_together(
        context, "where does Caroline live", [], episodes, span=(week(0), week(4))
    )
    assert [a.episode_id for a in answers] == ["e4", "e0"]
    assert answers[0].relevance > answers[1].relevance
    unspanned = await rank_together(context, "where does Caroline live", [], episodes)
    assert unspanned[0].relevance == unspanned[1].relevance


def test_cosines_of_one_vector_with_many_skip_missing_zero_and_foreign_vectors() -> None:
    question = [1.0, 0.0, 0.0]
    found = cosines(question, [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], None, [0.0, 0.0, 0.0],
                               [1.0, 1.0], [-1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])  # fmt: skip
    assert found[:6] == [1.0, 0.0, 0.0, 0.0, 0.0, -1.0]
    assert found[6] == pytest.approx(2**-0.5)
    assert cosines([0.0, 0.0, 0.0], [[1.0, 0.0, 0.0]]) == [0.0]
    assert cosines(question, []) == []
