"""Seed 002, contract 2: ``retrieve_knowledge(intent, message, metadata)``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from events.limits import INTENT_MAX, NAME_FILTER_MAX, RETRIEVE_MESSAGE_MAX
from events.text import CleanText

TOP_K = 3
MIN_RELEVANCE = 0.7

Coverage = Literal["high", "medium", "low", "none"]


class RetrieveMetadata(BaseModel):
    """``product`` is the customer's product or device (seed 002); ``device`` names it
    too, or, when both are given, the more specific one (a product line and a model, an
    application and the router it runs behind): both count, the device first."""

    model_config = ConfigDict(extra="ignore")

    product: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    device: CleanText | None = Field(default=None, max_length=NAME_FILTER_MAX)
    attachments: list[CleanText] = Field(default_factory=list, max_length=50)

    @property
    def device_names(self) -> tuple[str, ...]:
        """Every device the request names, most specific first, without repeats."""
        names = [n.strip() for n in (self.device, self.product) if n and n.strip()]
        return tuple(dict.fromkeys(names))


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    intent: CleanText = Field(
        max_length=INTENT_MAX, description="Primary intent, e.g. 'not_hashing'."
    )
    message: CleanText = Field(
        max_length=RETRIEVE_MESSAGE_MAX, description="The customer's latest message."
    )
    metadata: RetrieveMetadata = Field(default_factory=RetrieveMetadata)


class Source(BaseModel):
    title: str = Field(max_length=200)
    url: str = Field(max_length=500)
    relevance_score: float = Field(ge=MIN_RELEVANCE, le=1.0)
    excerpt: str = Field(max_length=150)
    last_updated: str = Field(description="ISO 8601")


FallbackReason = Literal["budget_exceeded", "shed", "unavailable", "invalid_query"]


class RetrieveResponse(BaseModel):
    """Exactly seed 002's four fields; never an error, never more than three sources.
    A fallback also knows why and how long it waited (sent as the ``X-Tribal-Fallback``
    and ``X-Tribal-Waited-Ms`` headers, never in the body)."""

    sources_consulted: list[Source] = Field(default_factory=list, max_length=TOP_K)
    coverage: Coverage = "none"
    gaps: list[str] = Field(default_factory=list)
    retrieval_time_ms: int = Field(default=0, ge=0)
    _fallback: FallbackReason | None = PrivateAttr(default=None)
    _waited_ms: int = PrivateAttr(default=0)

    @property
    def fallback_reason(self) -> FallbackReason | None:
        return self._fallback

    @property
    def waited_ms(self) -> int:
        return self._waited_ms


def fallback(
    reason: str = "Knowledge retrieval unavailable",
    why: FallbackReason = "unavailable",
    waited_ms: int = 0,
) -> RetrieveResponse:
    """Seed 002's error/fallback body; ``why`` and ``waited_ms`` travel beside it."""
    out = RetrieveResponse(sources_consulted=[], coverage="none", gaps=[reason])
    out._fallback, out._waited_ms = why, waited_ms
    return out
