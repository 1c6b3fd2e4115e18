"""The eval report's verdicts, per corpus on the held-out numbers (pure functions)."""

from __future__ import annotations

from typing import Any

from bench.eval import report

SPLITS = ("all", "literal", "paraphrase")


def _ranking(r5: float) -> dict[str, dict[str, float]]:
    row = {"n": 40, "recall@1": r5 - 0.1, "recall@5": r5, "mrr": r5 - 0.05}
    return {split: dict(row) for split in SPLITS}


def _kb(p: float | None, hit: float, unans: float) -> dict[str, dict[str, Any]]:
    row = {"n": 40, "precision@0.7": p, "hit_rate@0.7": hit, "unanswerable_none_or_low": unans}
    return {split: dict(row) for split in SPLITS}


SCORES = {"top_at_0.7_right": 0.95, "right_top_at_0.5": 0.9}


def _code(loco: float, vector: float) -> dict[str, Any]:
    return {"n": 40, "loco": _ranking(loco), "hybrid": _ranking(loco), "bm25": _ranking(0.5),
            "vector": _ranking(vector), "scores": SCORES}  # fmt: skip


def _report(**code: dict[str, Any]) -> dict[str, Any]:
    return {
        "corpora": {
            "tables": {"shop": {"n": 40, "loco": _ranking(0.95), "hybrid": _ranking(0.95),
                                "bm25": _ranking(0.6), "vector": _ranking(0.8),
                                "scores": SCORES, "joins": {"n": 3, "exact": 1.0}}},
            "code": code or {"h11": _code(0.9, 0.8)},
            "kb": {"debian": {"n": 45, "loco": _kb(0.95, 0.85, 1.0), "hybrid": _kb(0.95, 0.85, 1.0),
                              "bm25": _kb(0.5, 0.8, 0.3), "vector": _kb(None, 0.0, 1.0)}},
        }
    }  # fmt: skip


def test_a_report_meeting_every_target_held_out_has_no_verdicts() -> None:
    assert report.verdicts(_report()) == []


def test_code_must_beat_plain_vector_search_by_five_points_on_every_corpus() -> None:
    failed = report.verdicts(_report(h11=_code(0.9, 0.8), click=_code(0.88, 0.86)))
    assert failed == ["code click recall@5 0.880 < vector 0.860 + 0.05"]


def test_a_missed_target_a_baseline_not_beaten_and_a_lone_corpus_are_named() -> None:
    bad = _code(0.8, 0.85)
    lone = {**_code(0.9, 0.8), "loco": None}
    failed = report.verdicts(_report(h11=bad, click=lone))
    assert "code h11 all recall@5 = 0.800 < 0.85" in failed
    assert "code h11 all recall@5: 0.800 not above vector 0.850" in failed
    assert "code click: no held-out number (the only corpus of its kind)" in failed


def test_the_markdown_has_a_row_per_corpus_and_metric() -> None:
    text = report.markdown(_report())
    assert "| shop (n=40) | all recall@5 | 0.950 | 0.950 | 0.600 | 0.800 | >= 0.90 | ✓ |" in text
    assert "debian (n=45)" in text
