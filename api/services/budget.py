"""Token budgets: estimate an answer's size and cut its lists until it fits.

Tokens are estimated as characters / 4 of the JSON answer (a usual ratio for English
and JSON with all-MiniLM-era tokenizers); callers get the estimate as ``tokens_used``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic_core import to_json

from api.schemas.common import Response

R = TypeVar("R", bound=Response)
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str | bytes) -> int:
    return _tokens(len(text))


def _tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _size(value: Any) -> int:
    return len(to_json(value, by_alias=True))


def fit(out: R, max_tokens: int, *lists: list[Any]) -> R:
    """Cut ``lists`` (each a list held by ``out``; the first is cut first, from its end)
    until ``out`` fits ``max_tokens``; set ``truncated`` and ``tokens_used``.

    The answer is serialised once: each cut item takes its own JSON and a separating
    comma off the size (the last item of a list has none), and ``truncated`` and
    ``tokens_used`` change only their own values' characters."""
    budget = max_tokens * CHARS_PER_TOKEN
    was = (out.truncated, out.tokens_used)
    size = len(out.model_dump_json(by_alias=True))
    cut = False
    for items in lists:
        while size > budget and items:
            size -= _size(items.pop()) + (1 if items else 0)
            cut = True
    out.truncated = was[0] or cut or size > budget
    size += _size(out.truncated) - _size(was[0]) - _size(was[1])
    tokens = _tokens(size + 1)
    while _tokens(size + _size(tokens)) != tokens:  # its own digits count too
        tokens = _tokens(size + _size(tokens))
    out.tokens_used = tokens
    return out


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, cut at a word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:") + "…"
