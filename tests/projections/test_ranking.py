"""Ranking: candidate features and the calibrated order (projections.index.ranking)."""

from __future__ import annotations

import math

import pytest

from projections.index.port import Hit, IndexedObject, Kind
from projections.index.ranking import features, name_match, name_words, query_terms, ranked


def _table(fqn: str, vector: float) -> Hit:
    obj = IndexedObject(f"table:{fqn}", Kind.TABLE_DOC, f"table:{fqn}", text=fqn,
                        fully_qualified_name=fqn)  # fmt: skip
    return Hit(obj, vector, vector, 0.0)


def _code(symbol: str, vector: float) -> Hit:
    obj = IndexedObject(f"c:{symbol}", Kind.CODE_CHUNK, "file:r:x.py", text="", symbol=symbol)
    return Hit(obj, vector, vector, 0.0)


def test_abbreviated_table_names_are_matched_by_the_words_they_abbreviate() -> None:
    words = name_words(_table("billing.public.cust_mstr", 0.5), Kind.TABLE_DOC)
    assert {"customer", "master"} <= words
    assert name_match(query_terms("customer master"), words) == 1.0
    assert 0.5 < name_match(query_terms("customer master records"), words) < 1.0


def test_the_table_naming_more_of_the_question_ranks_first_among_equals() -> None:
    hits = [_table("shop.public.warehouses", 0.6), _table("shop.public.inventory_levels", 0.6)]
    best, _ = ranked(Kind.TABLE_DOC, "inventory levels per warehouse", hits)[0]
    assert best.object.fully_qualified_name == "shop.public.inventory_levels"


def test_camel_case_symbols_are_matched_word_by_word() -> None:
    # A query's candidates: two close by meaning, the rest further away.
    others = [_code(f"helper_{i}", 0.30 + 0.02 * i) for i in range(8)]
    hits = [_code("__iadd__", 0.55), _code("ReceiveBuffer", 0.5), *others]
    named = {
        h.object.symbol: f.name
        for h, f in zip(hits, features(Kind.CODE_CHUNK, "receive buffer", hits), strict=True)
    }
    assert named["ReceiveBuffer"] == 1.0
    assert named["__iadd__"] == 0.0
    best, score = ranked(Kind.CODE_CHUNK, "receive buffer", hits)[0]
    assert best.object.symbol == "ReceiveBuffer"
    assert 0.0 <= score <= 1.0


def test_runners_up_carry_their_gap_to_the_best_article_and_the_best_carries_none() -> None:
    def article(doc: str, chunk: str, vector: float) -> Hit:
        return Hit(IndexedObject(chunk, Kind.KB_CHUNK, doc, text=""), vector, vector, 0.0)

    hits = [article("kb:a", "a#0", 0.8), article("kb:a", "a#1", 0.7), article("kb:b", "b#0", 0.5)]
    f = features(Kind.KB_CHUNK, "anything", hits)
    assert f[0].gap == 0.0
    assert f[2].gap < f[1].gap < 0.0
    assert f[0].support == f[1].support > f[2].support


def test_keyword_evidence_alone_never_makes_a_confident_answer() -> None:
    obj = IndexedObject("a#0", Kind.KB_CHUNK, "kb:a", text="", title="Apollo not hashing")
    [(_, score)] = ranked(Kind.KB_CHUNK, "Apollo not hashing", [Hit(obj, 0.9, None, 0.95)])
    assert score < 0.5


def test_a_question_names_what_it_rules_out() -> None:
    from projections.index.ranking import negated_terms

    assert negated_terms("How do I upgrade without Docker?") == {"docker"}
    assert negated_terms("Not using systemd: how do I start the service?") == {"systemd"}
    assert negated_terms("Which databases other than PostgreSQL work?") == {"postgresql"}
    assert negated_terms("How do I install the server on Debian?") == frozenset()


def test_a_question_ranks_the_fact_of_the_relation_it_asks_for_first() -> None:
    from projections.index.ranking import fact_relevance

    facts = [
        ("Priya Raman", "works_at", "Initech"),
        ("Priya Raman", "lives_in", "Bristol"),
        ("Priya Raman", "email", "priya@globex.example"),
    ]
    ask = "where does Priya live these days?"
    ranked = sorted(facts, key=lambda f: -fact_relevance(ask, f[0], f[1], f[2], 0.3))
    assert ranked[0] == ("Priya Raman", "lives_in", "Bristol")
    mail = sorted(facts, key=lambda f: -fact_relevance("Priya's email?", f[0], f[1], f[2], 0.3))
    assert mail[0][1] == "email"


def test_a_who_question_prefers_a_person_to_a_closer_sounding_title() -> None:
    from projections.index.ranking import fact_relevance

    ask = "Who does Tomas report to?"
    boss = fact_relevance(ask, "Tomas Varga", "manager", "Ines Duarte", 0.45)
    title = fact_relevance(ask, "Tomas Varga", "role", "IT manager", 0.55)
    assert boss > title


def test_a_question_model_says_which_relation_is_asked_when_no_cue_word_names_it() -> None:
    import pytest

    from projections.index.ranking import asked_relations, fact_relevance

    assert asked_relations(None) == {}
    asked = asked_relations([0.05] * 384)
    assert sum(asked.values()) == pytest.approx(1.0)
    ask = "Who employs Marta these days?"
    plain = fact_relevance(ask, "Marta Kowalczyk", "works_at", "Pennine Print", 0.4)
    lifted = fact_relevance(
        ask, "Marta Kowalczyk", "works_at", "Pennine Print", 0.4, {"works_at": 0.9}
    )
    assert lifted > plain


def test_a_later_turn_counts_for_more_than_an_earlier_one_of_equal_meaning() -> None:
    import pytest

    from projections.index.ranking import RECENCY, episode_relevance

    first, last = episode_relevance(0.5, 0.0), episode_relevance(0.5, 1.0)
    assert last == pytest.approx(first * (1 + RECENCY), abs=1e-3)
    assert episode_relevance(0.5, 7.0) == last  # clamped to the conversation's span


def test_among_answers_a_later_fact_counts_more_and_a_fact_yields_part_of_its_score() -> None:
    import pytest

    from projections.index.ranking import FACT_SHARE, RECENCY, answer_relevance

    first, last = answer_relevance(0.8, 0.0), answer_relevance(0.8, 1.0)
    assert first == pytest.approx(0.8 * FACT_SHARE, abs=1e-3)
    assert last == pytest.approx(first * (1 + RECENCY), abs=1e-3)
    assert answer_relevance(0.8, -3.0) == first  # clamped to the conversation's span


def test_a_best_answer_far_above_its_rivals_scores_higher_than_one_level_with_the_next() -> None:
    from projections.index.ranking import relevance

    w = {"intercept": -2.0, "lead": 3.0, "top_intercept": -2.0, "top_z": 1.0,
         "top_margin": 3.0, "top_margin_cap": 2.0}  # fmt: skip
    clear = relevance(w, [2.0, 0.5, 0.4])
    level = relevance(w, [2.0, 1.95, 0.4])
    assert clear[0] > 0.7 > level[0]
    assert clear[0] > clear[1] > clear[2]
    assert level[0] > level[1] > level[2]
    assert all(0.0 <= s <= 1.0 for s in clear + level)


def test_two_chunks_of_one_symbol_are_not_each_others_rival() -> None:
    from projections.index.ranking import margin

    assert margin([2.0, 1.95, 0.4], ["f", "f", "g"], cap=5.0) == pytest.approx(1.6)
    assert margin([2.0, 1.95, 0.4], None, cap=5.0) == pytest.approx(0.05)
    assert margin([2.0, 1.95], ["f", "f"], cap=5.0) == 5.0


def test_kinds_without_a_leader_model_score_candidates_by_their_lead_alone() -> None:
    from projections.index.ranking import relevance

    w = {"intercept": -1.0, "lead": 2.0}
    assert relevance(w, [1.0, 0.0]) == [0.5, 1.0 / (1.0 + math.exp(3.0))]
