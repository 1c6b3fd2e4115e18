"""Try the LLM, fall back to the local rules, and say so on the result."""

from __future__ import annotations

import logging
from dataclasses import replace

from streams.llm.base import LLMError, LLMProvider, StructuredRequest, StructuredResult, T

log = logging.getLogger(__name__)


class FallbackProvider:
    """``primary`` first; on :class:`LLMError` the ``fallback`` answers, marked as such."""

    def __init__(self, primary: LLMProvider, fallback: LLMProvider) -> None:
        self.primary = primary
        self.fallback = fallback
        self.name = primary.name
        self.model = primary.model

    async def structured(self, request: StructuredRequest[T]) -> StructuredResult[T]:
        try:
            return await self.primary.structured(request)
        except LLMError as exc:
            log.warning("%s failed (%s); using %s", request.task, exc.code, self.fallback.name)
            result = await self.fallback.structured(request)
            return replace(result, fallback_reason=f"{exc.code}: {exc}")
