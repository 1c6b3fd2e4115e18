"""The hostile vocabulary: text, ids and metadata that callers and producers get wrong.

Each kind of value comes twice, built from the same fragments: as a hypothesis strategy
(the test suite, which shrinks a failure to its smallest cause) and as a draw from a
seeded :class:`random.Random` (the benchmark, which needs ten thousand values quickly and
a controlled share of valid ones).
"""

from __future__ import annotations

import random
import string
from typing import Any

from hypothesis import strategies as st

from events.limits import (
    METADATA_KEY_MAX,
    METADATA_MAX_ENTRIES,
    METADATA_VALUE_MAX,
    SESSION_MAX,
    TENANT_MAX,
)

CONTROL: tuple[str, ...] = (
    "\x00",
    "\x07",
    "\x08",
    "\x0b",
    "\x0c",
    "\x1b[2J",
    "\x1b]0;pwned\x07",
    "\x7f",
    "\x85",
    "\x9b",
    "\ud800",
    "\udfff",
    "\ufffe",
    "\uffff",
)
"""Control characters by the project's one rule: refused at every edge that has a caller."""

ODD: tuple[str, ...] = (
    "\t",
    "\r\n",
    "\n\n",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\u00a0",
    "🚀",
    "👩\u200d👩\u200d👧",
    "עברית",
    "中文字符",
    "e\u0301",
    "Ω≈ç√",
    "\U0001d518\U0001d52b\U0001d526\U0001d520\U0001d52c\U0001d521\U0001d522",
    " ",
    "'; DROP TABLE turns; --",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "{{7*7}}",
    "${jndi:ldap://x/a}",
    "../../etc/passwd",
    "%00",
    "\\u0000",
    "null",
    "NaN",
    "-1e309",
    '"quoted"',
    "a\\b",
)
"""Text that only looks hostile: valid everywhere, and kept exactly as given."""

ODD_IDS: tuple[str, ...] = (
    "",
    " ",
    "a b",
    "a:b",
    "ümlaut",
    "x\x00y",
    "../x",
    "a/b",
    "*",
    "%",
    "🚀",
    "-",
    ".",
    "_",
    "..",
    "a" * TENANT_MAX,
    "a" * (TENANT_MAX + 1),
    "DROP TABLE",
    "<b>",
    "a\tb",
    "a\nb",
    "\u200b",
    "null",
)
"""Ids at and beyond the rule ``[A-Za-z0-9_.-]{1,128}``."""

ID_CHARS = string.ascii_letters + string.digits + "_.-"
HUGE_SIZES: tuple[int, ...] = (10_000, 100_000, 100_001, 300_000)
"""Characters of a huge text: below, at and past ``MESSAGE_MAX`` (100,000)."""
WORDS = (
    "invoice",
    "refund",
    "router",
    "firmware",
    "password",
    "reset",
    "billing",
    "apollo",
    "hashing",
    "warranty",
    "shipping",
    "account",
    "login",
    "export",
    "report",
    "printer",
)


def huge(n: int) -> str:
    """``n`` characters of plain words (what a pasted log or document looks like)."""
    return ("lorem ipsum " * (n // 12 + 1))[:n]


# -- hypothesis strategies ------------------------------------------------------------------

_safe_chars = st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="\ufffe\uffff")


def clean_texts(min_size: int = 0, max_pieces: int = 4) -> st.SearchStrategy[str]:
    """Text with no control character: letters, unicode, odd-but-valid fragments."""
    piece = st.one_of(
        st.text(alphabet=_safe_chars, min_size=1, max_size=24),
        st.sampled_from(ODD),
        st.sampled_from(WORDS),
    )
    return st.lists(piece, min_size=max(1, min_size), max_size=max_pieces).map("".join)


def hostile_texts() -> st.SearchStrategy[str]:
    """Any text a caller may send: clean, with control characters, arbitrary, or huge."""
    spiced = st.tuples(clean_texts(), st.sampled_from(CONTROL), clean_texts()).map("".join)
    return st.one_of(
        clean_texts(),
        spiced,
        st.text(max_size=30),
        st.just(""),
        st.sampled_from(HUGE_SIZES).map(huge),
    )


def valid_ids(max_size: int = 24) -> st.SearchStrategy[str]:
    return st.text(alphabet=ID_CHARS, min_size=1, max_size=max_size)


def hostile_ids() -> st.SearchStrategy[str]:
    return st.one_of(valid_ids(), st.sampled_from(ODD_IDS), st.text(max_size=20))


def hostile_group_ids() -> st.SearchStrategy[str]:
    """``tenant:session`` with either part hostile, or no shape at all."""
    return st.one_of(
        st.tuples(hostile_ids(), hostile_ids()).map(":".join),
        st.tuples(valid_ids(), hostile_ids()).map(":".join),
        st.sampled_from(ODD_IDS),
        st.text(max_size=30),
        st.just("a" * TENANT_MAX + ":" + "b" * (SESSION_MAX + 1)),
    )


def json_values() -> st.SearchStrategy[Any]:
    """A JSON value of any type, as a confused caller sends where a string belongs."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), hostile_texts()
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=6,
    )


def hostile_metadata() -> st.SearchStrategy[Any]:
    """Metadata within the limits, past them, with control characters, or not a dict."""
    keys = st.one_of(clean_texts(max_pieces=2), st.sampled_from(CONTROL), st.just("k" * 65))
    values = st.one_of(
        clean_texts(),
        hostile_texts(),
        st.integers(),
        st.none(),
        st.just("v" * (METADATA_VALUE_MAX + 1)),
    )
    return st.one_of(
        st.dictionaries(keys, values, max_size=4),
        st.just({f"k{n}": "v" for n in range(METADATA_MAX_ENTRIES + 1)}),
        st.just({"k" * (METADATA_KEY_MAX + 1): "v"}),
        json_values(),
    )


# -- seeded random draws (the benchmark) ----------------------------------------------------


class Draw:
    """The same vocabulary drawn from a seeded ``random.Random``."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd

    def clean_text(self, words: int = 8) -> str:
        rnd = self.rnd
        parts = [rnd.choice(WORDS) for _ in range(max(1, words))]
        for _ in range(rnd.randint(0, 2)):
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(ODD))
        return " ".join(parts)

    def hostile_text(self) -> str:
        rnd = self.rnd
        roll = rnd.random()
        if roll < 0.35:
            return self.clean_text(rnd.randint(1, 12))
        if roll < 0.7:
            text = self.clean_text(rnd.randint(1, 6))
            at = rnd.randrange(len(text) + 1)
            return text[:at] + rnd.choice(CONTROL) + text[at:]
        if roll < 0.85:
            return "".join(
                chr(rnd.choice((rnd.randrange(0x20, 0x7F), rnd.randrange(0x10FFFF))))
                for _ in range(rnd.randint(0, 20))
            )
        if roll < 0.98:
            return ""
        return huge(rnd.choice(HUGE_SIZES))  # rare: a few go a long way (chunks, vectors)

    def valid_id(self, size: int = 10) -> str:
        return "".join(self.rnd.choice(ID_CHARS) for _ in range(self.rnd.randint(1, size)))

    def hostile_id(self) -> str:
        roll = self.rnd.random()
        if roll < 0.4:
            return self.valid_id()
        if roll < 0.8:
            return self.rnd.choice(ODD_IDS)
        return self.hostile_text()[:40]

    def hostile_group_id(self) -> str:
        roll = self.rnd.random()
        if roll < 0.6:
            return f"{self.hostile_id()}:{self.hostile_id()}"
        if roll < 0.8:
            return self.rnd.choice(ODD_IDS)
        return self.hostile_text()[:60]

    def hostile_metadata(self) -> Any:
        rnd = self.rnd
        roll = rnd.random()
        if roll < 0.5:
            return {
                self.clean_text(1): self.hostile_text()[:3000] for _ in range(rnd.randint(0, 3))
            }
        if roll < 0.65:
            return {f"k{n}": "v" for n in range(METADATA_MAX_ENTRIES + 1)}
        if roll < 0.75:
            return {"k": "v" * (METADATA_VALUE_MAX + 1)}
        if roll < 0.85:
            return {rnd.choice(CONTROL): "v"}
        return rnd.choice([[], "metadata", 7, None, {"nested": {"a": [1, 2]}}])
