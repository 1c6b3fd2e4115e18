"""The one exception service functions raise; both front ends turn it into an AgentError."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from api.errors import AgentError


@dataclass(eq=False)
class ServiceError(Exception):
    """A failure the caller should see: HTTP status, machine code, message."""

    status: int
    code: str
    message: str
    recoverable: bool = False
    context: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def agent_error(self) -> AgentError:
        fields = ("code", "message", "recoverable", "context")
        return AgentError.model_validate({f: getattr(self, f) for f in fields})


def forbidden(what: str) -> ServiceError:
    return ServiceError(403, "FORBIDDEN", f"this API key may not read {what}")
