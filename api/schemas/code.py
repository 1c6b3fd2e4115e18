"""``search_code``: symbols of indexed repositories."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas.common import Paged, PagedResponse


class SearchCodeInput(Paged):
    query: str = Field(min_length=1, max_length=1000)
    repo: str | None = Field(default=None, max_length=200)
    path: str | None = Field(
        default=None, max_length=500, description="Glob: '*' any run, '?' one character."
    )
    language: str | None = Field(default=None, max_length=50)
    symbol_kind: str | None = Field(
        default=None, max_length=50, description="function, class, method, section…"
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
