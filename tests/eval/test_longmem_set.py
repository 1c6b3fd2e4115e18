"""The labelled long-history set is whole: sizes, ids, evidence, dates and a fixed split."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from bench.eval.longmem import CATEGORIES, load


def test_the_set_has_long_dated_conversations_and_a_test_split_fixed_before_tuning() -> None:
    convs = load()
    assert len(convs) >= 8
    splits = Counter(c["split"] for c in convs)
    # the four test conversations were split off before anything was tuned; train grows
    assert set(splits) == {"train", "test"}
    assert splits["test"] == 4
    assert splits["train"] >= splits["test"]
    for conv in convs:
        turns = [t for s in conv["sessions"] for t in s["turns"]]
        dates = [datetime.fromisoformat(s["date"]) for s in conv["sessions"]]
        assert len(turns) >= 250, conv["id"]
        assert len(conv["sessions"]) >= 10, conv["id"]
        assert dates == sorted(dates), conv["id"]


def test_every_question_names_evidence_that_exists_and_temporal_ones_a_date() -> None:
    questions = 0
    for conv in load():
        ids = [t["turn_id"] for s in conv["sessions"] for t in s["turns"]]
        assert len(ids) == len(set(ids)), conv["id"]
        for q in conv["questions"]:
            if q["category"] not in CATEGORIES:
                continue
            questions += 1
            assert q["evidence"], q["id"]
            assert set(q["evidence"]) <= set(ids), q["id"]
            if q["category"] == "temporal":
                assert len(q["answer_date"]) in (7, 10), q["id"]
    assert questions >= 500
