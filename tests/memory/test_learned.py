"""The learned statement reader: what it adds to the patterns, and its arithmetic."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from streams.memory.english import english_doc, nlp_available
from streams.memory.learned import Context, Model, read, shipped_model
from streams.memory.rules import extract_local
from streams.memory.statements import RELATIONS, statements

pytestmark = pytest.mark.skipif(not nlp_available(), reason="spaCy's English pipeline")


def _model() -> Model:
    model = shipped_model()
    assert model is not None, "streams/memory/learned_model.json is shipped"
    return model


def test_the_shipped_reader_states_only_relations_of_the_vocabulary() -> None:
    model = _model()
    assert set(model.classes) - {"none"} <= set(RELATIONS)
    assert 0.0 < model.gate < 1.0
    assert "cross-validation" in model.fitted_on


def test_the_local_provider_adds_what_only_the_reader_states_with_medium_confidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    import streams.memory.rules as rules

    lenient = dataclasses.replace(_model(), gate=0.3)  # the integration, not the gate
    monkeypatch.setattr(rules, "shipped_model", lambda: lenient)
    text = "These days I'm doing my drawings on a Surface Pro 9."
    assert not list(statements(text, "Alex Morgan"))
    out = extract_local({"content": f"User: {text}", "metadata": {"user_name": "Alex Morgan"}})
    [fact] = [r for r in out.relationships if r.target == "Surface Pro 9"]
    assert (fact.source, fact.confidence) == ("Alex Morgan", "medium")
    assert fact.relation in ("owns", "uses")


def test_an_email_spelling_a_named_persons_name_is_theirs_not_the_speakers() -> None:
    text = "You can reach Tobias Lindgren at tobias.lindgren@fjordkraft.example if I'm away."
    readings = read(english_doc(text), Context("Alex Morgan"), _model())
    assert [(r.subject, r.relation, r.object) for r in readings] == [
        ("Tobias Lindgren", "email", "tobias.lindgren@fjordkraft.example")
    ]


def test_one_reading_per_value_when_candidate_spans_overlap() -> None:
    doc = english_doc("I'm on the Flex 40 plan and my colleague Ewa Nowak is on Flex 20.")
    readings = read(doc, Context("Alex Morgan"), _model(), gate=0.05)
    spans = sorted((r.span.start, r.span.end) for r in readings)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


def test_the_model_scores_as_a_softmax_over_relations_and_a_sigmoid_over_subjects() -> None:
    model = Model(
        classes=("email", "none", "phone"),
        relation_weights={"shape:at": [2.0, 0.0, -1.0]},
        relation_bias=[0.0, 0.5, 0.0],
        subject_weights={"email_has_name": 3.0},
        subject_bias=-1.0,
        gate=0.5,
    )
    relation, p = model.relation({"shape:at": 1.0})
    total = math.exp(2.0) + math.exp(0.5) + math.exp(-1.0)
    assert relation == "email"
    assert p == pytest.approx(math.exp(2.0) / total)
    assert model.subject({"email_has_name": 1.0}) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert Model.from_json(model.to_json()) == model


def test_fitting_on_labelled_examples_yields_a_model_that_reads_them() -> None:
    pytest.importorskip("sklearn")
    from bench.eval.memory_fit import examples, fit

    conv: dict[str, Any] = {
        "id": "fit-1",
        "metadata": {"user_name": "Alex Morgan"},
        "turns": [
            {"user": "My email is alex@morgan.example and I live in Dundee."},
            {"user": "My email is a.morgan@work.example and I live in Perth."},
            {"user": "My colleague Ewa Nowak lives in Leeds, her email is ewa@nowak.example."},
        ],
        "facts": [
            {"turn": turn, "subject": who, "relation": relation, "object": value}
            for turn, who, relation, value in (
                (0, "Alex Morgan", "email", "alex@morgan.example"),
                (0, "Alex Morgan", "lives_in", "Dundee"),
                (1, "Alex Morgan", "email", "a.morgan@work.example"),
                (1, "Alex Morgan", "lives_in", "Perth"),
                (2, "Ewa Nowak", "lives_in", "Leeds"),
                (2, "Ewa Nowak", "email", "ewa@nowak.example"),
            )
        ],
    }
    docs = [english_doc(t["user"]) for t in conv["turns"]]
    relations, subjects = examples(conv, docs)
    assert {label for _, label in relations} >= {"email", "lives_in", "none"}
    model = fit(relations, subjects, gate=0.3)
    doc = english_doc("My email is sam@north.example and I live in Leeds.")
    said = {(r.relation, r.object) for r in read(doc, Context("Sam North"), model)}
    assert ("email", "sam@north.example") in said


def _said(text: str, name: str = "Alex Morgan") -> set[tuple[str, str, str]]:
    out = extract_local({"content": f"User: {text}", "metadata": {"user_name": name}})
    return {(r.source, r.relation, r.target) for r in out.relationships}


def test_an_email_is_whose_name_it_spells_and_a_role_mailbox_is_the_organisations() -> None:
    said = _said(
        "I work at Brightwater Labs. My colleague Noa Levi handles orders, "
        "send them to noa.levi@brightwater.example and claims to claims@brightwater.example"
    )
    assert ("Noa Levi", "email", "noa.levi@brightwater.example") in said
    assert ("Brightwater Labs", "email", "claims@brightwater.example") in said
    assert not {s for s, r, _ in said if r == "email"} & {"Alex Morgan"}


def test_an_account_or_member_number_is_not_a_phone_number() -> None:
    said = _said("Hi, account 55120934 here, and my mobile is 07700 900247.")
    phones = {o for _, r, o in said if r == "phone"}
    assert phones == {"07700 900247"}


def test_we_re_is_never_a_name() -> None:
    said = _said("We're based in Croydon and we're a team of 6.")
    assert not any(s.startswith("We") for s, _, _ in said)


def test_a_hostile_line_yields_a_bounded_number_of_candidates_and_no_runaway_phone() -> None:
    from streams.memory.learned import MAX_CANDIDATES, candidates

    names = english_doc(" ".join(f"Name{i} Surname{i} works at Corp{i}." for i in range(400)))
    assert len(candidates(names)) <= MAX_CANDIDATES
    numbers = " ".join(f"07700 900{i:03d}" for i in range(300))
    said = _said(numbers)
    assert all(sum(c.isdigit() for c in o) <= 15 for _, r, o in said if r == "phone")


def test_an_email_is_whose_first_name_it_spells_when_a_family_shares_a_surname() -> None:
    said = _said(
        "My daughter Carmen Quispe wants her own login: carmen.quispe@sapo.example",
        name="Rosa Quispe Mamani",
    )
    assert ("Carmen Quispe", "email", "carmen.quispe@sapo.example") in said
