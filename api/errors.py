"""Seed 001's ``AgentError``: every error the API returns has this shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field
from starlette.responses import JSONResponse


class AgentError(BaseModel):
    """Machine-readable code, human message, severity, and whether a retry can help."""

    code: str
    message: str
    severity: Literal["warning", "error", "fatal"] = "error"
    timestamp: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    context: dict[str, Any] | None = None
    recoverable: bool = False


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    recoverable: bool = False,
    context: dict[str, Any] | None = None,
) -> JSONResponse:
    """``{"success": false, "error": AgentError}`` with an HTTP status."""
    err = AgentError(code=code, message=message, recoverable=recoverable, context=context)
    return JSONResponse(
        {"success": False, "error": err.model_dump(exclude_none=True)}, status_code=status
    )
