"""Singular nouns: the rules, and the words that break them."""

from __future__ import annotations

import pytest

from streams.inflection import singular, singular_phrase


def _plurals(ending: str, singulars: str, drop: int = 0) -> list[tuple[str, str]]:
    """(plural, singular) for each word whose plural drops ``drop`` letters and adds ``ending``."""
    return [(word[: len(word) - drop] + ending, word) for word in singulars.split()]


IRREGULAR = {
    "people": "person", "children": "child", "women": "woman", "men": "man",
    "salespeople": "salesperson", "analyses": "analysis", "diagnoses": "diagnosis",
    "indices": "index", "matrices": "matrix", "criteria": "criterion", "quizzes": "quiz",
    "lives": "life", "leaves": "leaf", "heroes": "hero", "excuses": "excuse",
}  # fmt: skip
"""Plurals no rule makes from their singular."""

WORDS = dict(
    [
        # regular plurals
        *_plurals(
            "s",
            "order item user day key database house cause course response size schema photo "
            "archive kpi api taxi menu",
        ),
        *_plurals(
            "es", "box tax batch hash address class process status campus bus virus alias lens buzz"
        ),
        *_plurals("ies", "category company country", drop=1),
        # -e words whose plural only adds an s
        *_plurals("s", "cache movie cookie shoe tie"),
        *IRREGULAR.items(),
        # already singular, or uncountable: the word is its own plural
        *_plurals(
            "",
            "status address analysis basis history news series species data metadata media "
            "campus bonus business access axis chassis analytics specimen alias gas person child",
        ),
    ]
)
"""Plural → singular."""


@pytest.mark.parametrize(("plural", "expected"), sorted(WORDS.items()))
def test_the_singular_of_a_word(plural: str, expected: str) -> None:
    assert singular(plural) == expected


@pytest.mark.parametrize("word", sorted(set(WORDS.values())))
def test_a_singular_word_stays_as_it_is(word: str) -> None:
    assert singular(word) == word


def test_only_the_head_noun_of_a_phrase_is_made_singular() -> None:
    assert singular_phrase(["sales", "taxes"]) == ["sales", "tax"]
    assert singular_phrase(["news", "items"]) == ["news", "item"]
    assert singular_phrase(["users", "2024"]) == ["user", "2024"]
    assert singular_phrase(["orders", "v2", "tmp"]) == ["order", "v2", "tmp"]
    assert singular_phrase([]) == []
