"""A pydantic ``ValidationError`` as the error a caller can act on: one code, one message.

The HTTP API, the MCP tools and :class:`~sources.turns.MemoryIngestor` all answer
invalid input through :func:`problem_of`, so the same input gets the same code everywhere:

- ``INVALID_TEXT``: a control character (:mod:`events.text`), including a lone surrogate;
- ``INVALID_GROUP_ID`` / ``INVALID_TENANT``: a ``group_id`` / ``tenant`` string that is
  malformed or too long;
- ``INVALID_REQUEST``: anything else (a missing field, a wrong type, a size limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from events.text import INVALID_TEXT, describe, find_control

_FIELD_CODES = {"group_id": "INVALID_GROUP_ID", "tenant": "INVALID_TENANT"}


@dataclass(frozen=True)
class Problem:
    """The first problem's code and ``"field: what is wrong"``, plus every problem."""

    code: str
    message: str
    problems: list[dict[str, str]] = field(default_factory=list)


def _field(error: ErrorDetails) -> str:
    return ".".join(str(p) for p in error["loc"]) or "body"


def _message(error: ErrorDetails) -> str:
    value: Any = error.get("input")
    if error["type"] == "string_unicode" and isinstance(value, str):
        found = find_control(value)  # pydantic's own words do not say which character
        if found is not None:
            return (
                f"control character {describe(found[1])} at index {found[0]}; "
                "text must be valid Unicode"
            )
    return error["msg"]


def error_code(error: ErrorDetails) -> str:
    """The AgentError code of one pydantic error."""
    if error["type"] in (INVALID_TEXT, "string_unicode"):
        return "INVALID_TEXT"
    top = str(error["loc"][0]) if error["loc"] else ""
    if top in _FIELD_CODES and isinstance(error.get("input"), str):
        return _FIELD_CODES[top]
    return "INVALID_REQUEST"


def problem_of(exc: ValidationError) -> Problem:
    """What to answer for ``exc``: the first error decides the code and the message."""
    errors = exc.errors(include_url=False)
    problems = [{"field": _field(e), "problem": _message(e)} for e in errors]
    if not errors:  # pragma: no cover - pydantic never raises an empty error
        return Problem("INVALID_REQUEST", str(exc))
    first = problems[0]
    return Problem(error_code(errors[0]), f"{first['field']}: {first['problem']}", problems)
