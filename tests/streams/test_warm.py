"""A worker loads its agents' models before its first record (:mod:`streams.warm`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from events.base import Event
from events.memory import TurnRecorded
from runtime.settings import TribalSettings
from streams.agents import agents_for
from streams.embedder.agent import EmbedderProcessor
from streams.memory.episoder import Episoder
from streams.memory.lanes import ExtractorLane
from streams.spec import AgentSpec
from streams.warm import Warms, warm_up
from streams.wiring import Emit


class Loading:
    def __init__(self, fails: bool = False) -> None:
        self.warmed = 0
        self.fails = fails

    def warm(self) -> None:
        self.warmed += 1
        if self.fails:
            raise OSError("no model here")

    async def __call__(self, events: Sequence[Event]) -> list[Emit]:
        return []


def spec(name: str, processor: object) -> AgentSpec:
    return AgentSpec(name, "memory.turns", processor, (TurnRecorded,))  # type: ignore[arg-type]


def test_a_processor_shared_by_two_agents_is_warmed_once() -> None:
    shared = Loading()
    warm_up([spec("a", shared), spec("b", shared)])
    assert shared.warmed == 1


def test_a_model_that_fails_to_load_leaves_the_other_agents_warmed_and_the_worker_starting(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken, fine = Loading(fails=True), Loading()
    with caplog.at_level(logging.WARNING):
        warm_up([spec("broken", broken), spec("fine", fine)])
    assert fine.warmed == 1
    assert "agent broken: its models did not load at start: no model here" in caplog.text


def test_processors_without_models_are_left_alone() -> None:
    async def plain(events: Sequence[Event]) -> list[Emit]:
        return []

    assert warm_up([spec("plain", plain)]) >= 0.0


def test_every_agent_with_a_model_warms_it_at_start() -> None:
    """The embedders, the episoder and the extractor: what a first record would load."""
    specs = {s.name: s.processor for s in agents_for(TribalSettings())}
    for name in ("embedder", "table_embedder", "episoder", "extractor"):
        assert isinstance(specs[name], Warms), name
    assert isinstance(specs["episoder"], Episoder)
    assert isinstance(specs["extractor"], ExtractorLane)
    assert isinstance(specs["embedder"], EmbedderProcessor)


def test_warming_the_memory_agents_loads_what_their_first_episode_needs() -> None:
    from streams.memory import english, learned

    specs = [s for s in agents_for(TribalSettings()) if s.name in ("episoder", "extractor")]
    warm_up(specs)
    assert english._nlp.cache_info().currsize == 1
    assert english._entities_nlp.cache_info().currsize == 1
    assert learned.shipped_model.cache_info().currsize == 1


def test_memory_lanes_commit_every_few_episodes_when_an_llm_answers() -> None:
    """A lane batch of LLM calls commits within seconds, not after hundreds of calls."""
    from streams.llm.select import provider_from_settings
    from streams.memory.agents import LANE_BATCH, REMOTE_LANE_BATCH, local_provider, memory_agents

    settings = TribalSettings()
    remote = provider_from_settings(local_provider(), {"ANTHROPIC_API_KEY": "sk-test"})
    batches = {s.name: s.batch for s in memory_agents(settings, provider=remote)}
    assert batches["extractor"] == batches["summarizer"] == REMOTE_LANE_BATCH
    local = {s.name: s.batch for s in memory_agents(settings, provider=local_provider())}
    assert local["extractor"] == local["summarizer"] == LANE_BATCH
