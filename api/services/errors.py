"""The one exception service functions raise; both front ends turn it into an AgentError."""

from __future__ import annotations

from typing import Any

from api.errors import AgentError


class ServiceError(Exception):
    """A failure the caller should see: HTTP status, machine code, message."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        recoverable: bool = False,
        context: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.recoverable = recoverable
        self.context = context

    def agent_error(self) -> AgentError:
        return AgentError(
            code=self.code,
            message=self.message,
            recoverable=self.recoverable,
            context=self.context,
        )


def forbidden(what: str) -> ServiceError:
    return ServiceError(403, "FORBIDDEN", f"this API key may not read {what}")
