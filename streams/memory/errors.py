"""Seed 003's error types. ``IngestionError`` is the turn source's (one type, one place)."""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from sources.turns import IngestionError

__all__ = ["ExtractionError", "IngestionError", "SummarizationError"]


class _CausedError(Exception):
    """An error that keeps the exception it was caused by as ``cause``."""

    def __init__(self, message: str, cause: Exception | None) -> None:
        self.cause = cause
        super().__init__(message)


class ExtractionError(_CausedError):
    """Raised when entity/relationship extraction fails."""

    def __init__(
        self,
        message: str,
        episode_id: UUID | None = None,
        provider_error: str | None = None,
        cause: Exception | None = None,
    ) -> None:
        self.episode_id = episode_id
        self.provider_error = provider_error
        super().__init__(message, cause)


class SummarizationError(_CausedError):
    """Raised when summarization fails."""

    def __init__(
        self,
        message: str,
        group_id: str | None = None,
        summary_type: Literal["window", "meta"] | None = None,
        cause: Exception | None = None,
    ) -> None:
        self.group_id = group_id
        self.summary_type = summary_type
        super().__init__(message, cause)
