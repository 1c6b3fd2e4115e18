"""Answers are cut to their token budget: the estimate they report is the size of what
is sent, and memory search gives up summaries before the answers themselves."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest

from api.schemas.memory import AnswerOut, EpisodeOut, FactOut, SearchMemoryOutput, SummaryOut
from api.services.budget import estimate_tokens, fit
from api.services.memory import within_budget
from projections.graph.models import Provenance

SAID = datetime(2023, 5, 8, 14, 30, tzinfo=UTC)


def fact(n: int) -> FactOut:
    said = SAID + timedelta(days=n)
    return FactOut(
        relationship_id=uuid4(), version=1, source_entity_id=uuid4(), source_name="Priya Raman",
        relation_type="lives_in", target_entity_id=uuid4(), target_name=f"Town {n}",
        fact=f"Priya lives in Town {n}", attributes={"since": str(n)}, confidence="high",
        valid_from=said, valid_to=None, recorded_at=said, expired_at=None,
        invalidated_by=None, reason=None,
        provenance=Provenance("asserted", uuid4(), uuid4(), "memory.statements", 0, n),
        episode_ids=(uuid4(),),
    )  # fmt: skip


def answer(n: int) -> SearchMemoryOutput:
    """An answer of ``n`` items per list, summaries the largest (as they are)."""
    return SearchMemoryOutput(
        group_id="acme:t",
        answers=[AnswerOut(kind="episode", text=f"said {i} " * 20, relevance=1 - i / 100,
                           episode_id=str(uuid4()), occurred_at=SAID, turn_id=f"t{i}")
                 for i in range(n)],
        facts=[fact(i) for i in range(n)],
        episodes=[EpisodeOut(episode_id=str(uuid4()), content=f"said {i} " * 20,
                             relevance_score=0.5, occurred_at=SAID, turn_id=f"t{i}",
                             speaker="Priya", metadata={"channel": "chat", "n": str(i)})
                  for i in range(n)],
        summaries=[SummaryOut(summary_id=str(uuid4()), summary_type="meta",
                              content="what was said " * 30, relevance_score=0.4,
                              occurred_at=SAID, episode_ids=[str(uuid4()) for _ in range(40)])
                   for _ in range(n)],
    )  # fmt: skip


@pytest.mark.parametrize("max_tokens", [100, 250, 999, 1000, 1001, 2500, 4000, 9000, 32000])
def test_the_tokens_an_answer_reports_are_those_of_what_is_sent(max_tokens: int) -> None:
    out = answer(12)
    fitted = fit(out, max_tokens, out.summaries, out.facts, out.episodes, out.answers)
    sent = fitted.model_dump_json(by_alias=True)
    assert fitted.tokens_used == estimate_tokens(sent)
    assert fitted.tokens_used <= max_tokens or not any(
        (out.summaries, out.facts, out.episodes, out.answers)
    )
    assert fitted.truncated == (max_tokens < 32000)


def test_an_answer_that_fits_is_not_cut_and_reports_its_size() -> None:
    out = answer(2)
    fitted = fit(out, 32000, out.summaries, out.facts, out.episodes, out.answers)
    assert not fitted.truncated
    assert [len(fitted.answers), len(fitted.summaries)] == [2, 2]
    assert fitted.tokens_used == estimate_tokens(fitted.model_dump_json(by_alias=True))


def test_a_list_emptied_by_the_cut_leaves_the_size_exact() -> None:
    out = answer(3)
    size = len(out.model_dump_json(by_alias=True)) // 4
    summaries = len(out.summaries[0].model_dump_json())
    fitted = fit(out, size - summaries, out.summaries, out.facts)
    assert fitted.summaries == [] or len(fitted.summaries) < 3
    assert fitted.tokens_used == estimate_tokens(fitted.model_dump_json(by_alias=True))


def test_memory_search_gives_up_summaries_facts_and_answers_before_its_evidence() -> None:
    out = within_budget(answer(12), 4000)
    assert out.truncated
    assert (len(out.episodes), len(out.answers), out.summaries) == (12, 12, [])
    kept = within_budget(answer(12), 1500)
    assert (kept.summaries, kept.facts) == ([], [])
    assert len(kept.episodes) == 12  # whole: each with its turn, speaker and time
    assert 0 < len(kept.answers) < 12
    assert [a.turn_id for a in kept.answers] == [f"t{i}" for i in range(len(kept.answers))]
