"""Singular forms of the English nouns tables are named after: ``categories`` →
``category``, ``statuses`` → ``status``, ``people`` → ``person``.

Rules first, then the words they get wrong. A word that already looks singular
(``status``, ``address``, ``analysis``, ``news``, ``series``) is kept as it is, so
singularising twice changes nothing. Only lower-case ASCII words are expected; anything
else is returned unchanged.
"""

from __future__ import annotations

import re


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Plurals no suffix rule gets right (matched at the end of a word: ``salespeople``).
_IRREGULAR_ENDINGS = (
    ("people", "person"), ("children", "child"), ("women", "woman"), ("men", "man"),
    ("teeth", "tooth"), ("feet", "foot"), ("geese", "goose"),
)  # fmt: skip
_IRREGULAR = {
    "mice": "mouse", "oxen": "ox", "dice": "die", "criteria": "criterion",
    "phenomena": "phenomenon", "schemata": "schema", "indices": "index",
    "matrices": "matrix", "vertices": "vertex", "appendices": "appendix",
    "axes": "axis", "analyses": "analysis", "diagnoses": "diagnosis",
    "prognoses": "prognosis", "theses": "thesis", "hypotheses": "hypothesis",
    "syntheses": "synthesis", "parentheses": "parenthesis", "crises": "crisis",
    "emphases": "emphasis", "synopses": "synopsis", "quizzes": "quiz",
    "lives": "life", "wives": "wife", "knives": "knife", "leaves": "leaf",
    "halves": "half", "shelves": "shelf", "wolves": "wolf", "thieves": "thief",
    "loaves": "loaf", "calves": "calf", "selves": "self", "elves": "elf",
    "scarves": "scarf", "hooves": "hoof", "wharves": "wharf",
    "heroes": "hero", "potatoes": "potato", "tomatoes": "tomato", "echoes": "echo",
    "vetoes": "veto", "torpedoes": "torpedo", "embargoes": "embargo",
    "dominoes": "domino", "mosquitoes": "mosquito", "volcanoes": "volcano",
    "tornadoes": "tornado", "cargoes": "cargo", "mottoes": "motto",
    "uses": "use", "abuses": "abuse", "misuses": "misuse", "reuses": "reuse",
    "excuses": "excuse", "fuses": "fuse", "muses": "muse", "ruses": "ruse",
    "refuses": "refuse", "accuses": "accuse",
}  # fmt: skip
# Men-words that are singular already: ``specimen``, not ``speciman``.
_MEN_SINGULAR = _set(
    "specimen omen abdomen regimen stamen acumen hymen semen amen bitumen lumen albumen "
    "cyclamen dolmen germen nomen ramen yemen"
)
# Already singular (or uncountable) although they end like a plural.
_INVARIANT = _set(
    "news series species means headquarters crossroads barracks gallows innings mews "
    "clothes scissors trousers jeans pants goods thanks earnings savings proceeds "
    "alias bias gas canvas atlas pancreas christmas lens chaos kudos ethos pathos cosmos "
    "thermos rhinoceros has was this his its yes "
    "analytics logistics physics economics mathematics politics ethics athletics "
    "electronics genetics linguistics mechanics dynamics semantics demographics "
    "ergonomics acoustics aerobics"
)
# Plurals of words ending in -u, which the -us rule would otherwise keep.
_U_PLURALS = _set("menus gurus emus haikus tutus gnus tofus snafus")
# Singular words ending in -is other than the -sis and -tis families.
_IS_SINGULAR = _set(
    "axis iris tennis penis pelvis trellis debris metropolis chrysalis epidermis dermis "
    "ibis mantis cannabis aegis hubris proboscis chassis marquis"
)
# Singular words ending in -che, -ie or -oe: their plural only adds an s.
_E_ENDINGS = (
    "cache", "niche", "cliche", "quiche", "avalanche", "headache", "moustache",
    "creche", "microfiche", "psyche",
    "movie", "cookie", "calorie", "zombie", "rookie", "selfie", "genie", "goalie",
    "smoothie", "brownie", "auntie", "sortie", "prairie", "lingerie", "reverie",
    "menagerie", "coterie", "collie", "birdie", "hoodie", "freebie", "newbie",
    "techie", "foodie", "magpie", "necktie", "pixie",
    "shoe", "toe", "canoe", "oboe", "foe", "hoe", "floe", "tiptoe",
)  # fmt: skip
_WORD = re.compile(r"[a-z]+")
_VOWELS = frozenset("aeiou")


def singular(word: str) -> str:
    """The singular of a lower-case English noun; a singular noun comes back unchanged."""
    if not _WORD.fullmatch(word) or word in _INVARIANT or len(word) < 3:
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    for plural, one in _IRREGULAR_ENDINGS:
        if word.endswith(plural) and not (plural == "men" and word in _MEN_SINGULAR):
            return word[: -len(plural)] + one
    if not word.endswith("s") or word.endswith("ss"):
        return word
    if word[:-1].endswith(_E_ENDINGS):  # "caches", "movies", "shoes"
        return word[:-1]
    if word.endswith("us"):
        return word[:-1] if word in _U_PLURALS else word
    if word.endswith("is"):
        keep = word.endswith(("sis", "tis")) or word in _IS_SINGULAR
        return word if keep else word[:-1]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("ses"):
        stem = word[:-2]  # "statuses" → "status"; but "houses" → "house"
        if stem in _INVARIANT or stem in _IS_SINGULAR:
            return stem
        if stem.endswith("us") and len(stem) > 2 and stem[-3] not in _VOWELS:
            return stem
        return word[:-1]
    return word[:-1] if len(word) > 3 else word


def singular_phrase(words: list[str]) -> list[str]:
    """``words`` with only its head noun singular: the last word that is not a number,
    a version or a copy marker (``sales_taxes`` → ``sales tax``, ``users_2024`` →
    ``user 2024``)."""
    out = list(words)
    for n in range(len(out) - 1, -1, -1):
        if not _QUALIFIER.fullmatch(out[n]):
            out[n] = singular(out[n])
            break
    return out


_QUALIFIER = re.compile(r"\d+|v\d+|tmp|temp|bak|backup|old|new|copy|stg|staging|raw")
