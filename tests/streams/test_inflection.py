"""Singular nouns: the rules, and the words that break them."""

from __future__ import annotations

import pytest

from streams.inflection import singular, singular_phrase

WORDS = {
    # regular plurals
    "orders": "order", "items": "item", "users": "user", "days": "day", "keys": "key",
    "categories": "category", "companies": "company", "countries": "country",
    "boxes": "box", "taxes": "tax", "batches": "batch", "hashes": "hash",
    "addresses": "address", "classes": "class", "processes": "process",
    "statuses": "status", "campuses": "campus", "buses": "bus", "viruses": "virus",
    "aliases": "alias", "lenses": "lens", "databases": "database", "houses": "house",
    "causes": "cause", "courses": "course", "responses": "response", "sizes": "size",
    "buzzes": "buzz", "schemas": "schema", "photos": "photo", "archives": "archive",
    "kpis": "kpi", "apis": "api", "taxis": "taxi", "menus": "menu",
    # -e words whose plural only adds an s
    "caches": "cache", "movies": "movie", "cookies": "cookie", "shoes": "shoe",
    "ties": "tie",
    # irregular
    "people": "person", "children": "child", "women": "woman", "men": "man",
    "salespeople": "salesperson", "analyses": "analysis", "diagnoses": "diagnosis",
    "indices": "index", "matrices": "matrix", "criteria": "criterion", "quizzes": "quiz",
    "lives": "life", "leaves": "leaf", "heroes": "hero", "excuses": "excuse",
    # already singular, or uncountable
    "status": "status", "address": "address", "analysis": "analysis", "basis": "basis",
    "history": "history", "news": "news", "series": "series", "species": "species",
    "data": "data", "metadata": "metadata", "media": "media", "campus": "campus",
    "bonus": "bonus", "business": "business", "access": "access", "axis": "axis",
    "chassis": "chassis", "analytics": "analytics", "specimen": "specimen",
    "alias": "alias", "gas": "gas", "person": "person", "child": "child",
}  # fmt: skip


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
