"""What every bounded answer shares: paging, a token budget, and the seed-001 envelope."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from api.errors import AgentError

DEFAULT_MAX_TOKENS = 4000
MAX_MAX_TOKENS = 32000


class Request(BaseModel):
    """Inputs reject unknown fields so a misspelt filter is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Budgeted(Request):
    max_tokens: int = Field(
        default=DEFAULT_MAX_TOKENS,
        ge=100,
        le=MAX_MAX_TOKENS,
        description="Budget for the whole answer, estimated as characters / 4. "
        "Lists are cut from the end to fit; the answer then says truncated=true.",
    )


class Paged(Budgeted):
    offset: int = Field(default=0, ge=0, le=10_000, description="Results to skip (paging).")


class Response(BaseModel):
    """``success`` + ``tokens_used`` + optional ``error`` (seed 001 §6)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    success: bool = True
    tokens_used: int = Field(default=0, description="Estimated tokens of this answer (chars/4).")
    truncated: bool = Field(
        default=False, description="True when lists were cut to fit max_tokens."
    )
    error: AgentError | None = None


class PagedResponse(Response):
    has_more: bool = Field(default=False, description="More results exist past this page.")
