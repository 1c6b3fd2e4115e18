"""The labelled conversations hold together: every label points at words a user said.

The set was written, and split into ``train.json`` and ``test.json``, before any rule was
tuned on it; ``python -m bench.eval.memory`` reports the test split.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
SPLITS = (*(f"train{n}" for n in ("", 2, 3, 4, 5, 6, 7, 8, 9, 10)), "test")
KINDS = {
    "person", "organization", "place", "product", "plan", "contact", "quantity",
    "preference", "concept", "date",
}  # fmt: skip


def _conversations(split: str) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads((HERE / f"{split}.json").read_text())
    conversations: list[dict[str, Any]] = data["conversations"]
    return conversations


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.mark.parametrize("split", SPLITS)
def test_every_fact_quotes_the_user_turn_it_came_from(split: str) -> None:
    for conv in _conversations(split):
        turns = conv["turns"]
        for fact in conv["facts"]:
            assert 0 <= fact["turn"] < len(turns), (conv["id"], fact)
            assert fact["evidence"] in turns[fact["turn"]]["user"], (conv["id"], fact)
            assert fact["object_kind"] in KINDS, (conv["id"], fact)
            assert all(fact[key] for key in ("subject", "relation", "object")), conv["id"]


@pytest.mark.parametrize("split", SPLITS)
def test_every_change_has_its_old_and_new_value_labelled_as_facts(split: str) -> None:
    for conv in _conversations(split):
        stated = {(f["subject"], f["relation"], f["object"]) for f in conv["facts"]}
        for change in conv["changes"]:
            key = (change["subject"], change["relation"])
            assert (*key, change["old"]) in stated, (conv["id"], change)
            assert (*key, change["new"]) in stated, (conv["id"], change)
            assert change["evidence"] in conv["turns"][change["turn"]]["user"], conv["id"]


@pytest.mark.parametrize("split", SPLITS)
def test_every_answer_is_a_labelled_value_and_past_questions_fall_inside_the_talk(
    split: str,
) -> None:
    for conv in _conversations(split):
        objects = {f["object"] for f in conv["facts"]}
        times = [_when(t["at"]) for t in conv["turns"]]
        assert times == sorted(times), conv["id"]
        for q in conv["questions"]:
            assert q["answer"] in objects, (conv["id"], q)
            assert "stale" not in q or q["stale"] in objects, (conv["id"], q)
            if "as_of" in q:
                assert times[0] <= _when(q["as_of"]) <= times[-1], (conv["id"], q)


def test_the_set_is_as_large_and_varied_as_the_issue_asks() -> None:
    conversations = [c for split in SPLITS for c in _conversations(split)]
    facts = [f for c in conversations for f in c["facts"]]
    assert len(conversations) >= 40
    assert len(facts) >= 120
    assert sum(len(c["changes"]) for c in conversations) >= 40
    assert sum(bool(f["third_person"]) for f in facts) / len(facts) >= 0.30
    assert len({c["id"] for c in conversations}) == len(conversations)


def test_train_and_test_share_no_conversation_and_no_line() -> None:
    def lines(split: str) -> set[str]:
        return {t["user"] for c in _conversations(split) for t in c["turns"]}

    train = [c for s in SPLITS if s != "test" for c in _conversations(s)]
    test = _conversations("test")
    assert not {c["id"] for c in train} & {c["id"] for c in test}
    assert not set().union(*(lines(s) for s in SPLITS if s != "test")) & lines("test")
