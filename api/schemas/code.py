"""``search_code``: symbols of indexed repositories."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas.common import Paged, PagedResponse
from events.limits import LABEL_MAX, NAME_FILTER_MAX, PATH_GLOB_MAX, QUERY_MAX
from events.text import CleanText


class SearchCodeInput(Paged):
    query: CleanText = Field(min_length=1, max_length=QUERY_MAX)
    repo: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    path: CleanText | None = Field(
        default=None, max_length=PATH_GLOB_MAX, description="Glob: '*' any run, '?' one character."
    )
    language: CleanText | None = Field(default=None, max_length=LABEL_MAX)
    symbol_kind: CleanText | None = Field(
        default=None, max_length=LABEL_MAX, description="function, class, method, section…"
    )
    limit: int = Field(default=10, ge=1, le=50)


class CodeHit(BaseModel):
    symbol: str | None
    fully_qualified_name: str | None
    symbol_kind: str | None
    repo: str | None
    path: str | None
    language: str | None
    start_line: int | None
    end_line: int | None
    relevance_score: float
    snippet: str = Field(description="The chunk's first lines (at most 400 characters).")


class SearchCodeOutput(PagedResponse):
    results: list[CodeHit] = Field(default_factory=list)
