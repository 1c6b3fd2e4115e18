"""The eval report's verdicts: targets and "above both baselines" (pure functions)."""

from __future__ import annotations

from typing import Any

from scripts.eval import report
from scripts.eval.metrics import Sourced, knowledge


def _ranking(r1: float, r5: float, mrr: float) -> dict[str, dict[str, float]]:
    row = {"n": 10, "recall@1": r1, "recall@5": r5, "mrr": mrr}
    return {split: dict(row) for split in report.SPLITS}


def _kb(p: float | None, hit: float, unans: float) -> dict[str, dict[str, Any]]:
    row = {"n": 10, "precision@0.7": p, "hit_rate@0.7": hit, "unanswerable_none_or_low": unans}
    return {split: dict(row) for split in report.SPLITS}


def _report(**over: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tables": {"hybrid": _ranking(0.8, 0.95, 0.9), "bm25": _ranking(0.5, 0.6, 0.55),
                   "vector": _ranking(0.6, 0.7, 0.65)},
        "code": {"hybrid": _ranking(0.6, 0.9, 0.7), "bm25": _ranking(0.1, 0.3, 0.2),
                 "vector": _ranking(0.4, 0.7, 0.5)},
        "knowledge": {"hybrid": _kb(0.95, 0.9, 1.0), "bm25": _kb(0.5, 0.85, 0.3),
                      "vector": _kb(None, 0.0, 1.0)},
        "joins": {"n": 3, "exact": 1.0, "wrong": []},
    }  # fmt: skip
    out.update(over)
    return out


def test_a_report_meeting_every_target_above_both_baselines_has_no_verdicts() -> None:
    assert report.verdicts(_report()) == []


def test_a_missed_target_and_a_baseline_not_beaten_are_both_named() -> None:
    code = {"hybrid": _ranking(0.3, 0.8, 0.5), "bm25": _ranking(0.1, 0.3, 0.2),
            "vector": _ranking(0.4, 0.7, 0.5)}  # fmt: skip
    failed = report.verdicts(_report(code=code))
    assert "code all recall@5 = 0.800 < 0.85" in failed
    assert any(f.startswith("code all recall@1: hybrid 0.300 not above vector") for f in failed)
    assert any(f.startswith("code all mrr: hybrid 0.500 not above vector") for f in failed)


def test_a_tie_only_counts_as_beaten_at_the_ceiling() -> None:
    assert report.beats(1.0, 1.0)
    assert not report.beats(0.8, 0.8)
    assert report.beats(0.5, None)  # the baseline gave nothing to measure
    assert not report.beats(None, 0.5)


def test_precision_is_undefined_not_perfect_when_no_source_reaches_the_threshold() -> None:
    rows = [Sourced("paraphrase", ("httpx",), (), "low"), Sourced("unanswerable", (), (), "none")]
    assert knowledge(rows)["precision@0.7"] is None


def test_the_markdown_table_shows_every_system_and_the_targets() -> None:
    md = report.markdown(_report())
    assert "| code | all (10) | recall@5 | **0.900** | 0.300 | 0.700 | ≥ 0.85 |" in md
    assert "| knowledge | all (10) | precision@0.7 | **0.950** | 0.500 | — | ≥ 0.90 |" in md
