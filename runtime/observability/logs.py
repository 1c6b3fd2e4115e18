"""structlog JSON logs with a request id, and secrets masked wherever they appear."""

from __future__ import annotations

import logging
import re
import sys
from contextvars import ContextVar
from typing import Any

import structlog

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

_SECRET_KEY = re.compile(r"pass|secret|token|api_key|apikey|authorization|dsn", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def _mask(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    for key, value in list(event.items()):
        if isinstance(value, str):
            value = _URL_PASSWORD.sub(r"\1***@", value)
            if _SECRET_KEY.search(key) and "://" not in value:
                value = "***"
            event[key] = value
    return event


def _with_request_id(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    rid = request_id.get()
    if rid is not None:
        event.setdefault("request_id", rid)
    return event


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    """Route stdlib and structlog through one JSON (or console) renderer on stderr."""
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _with_request_id,
        _mask,
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    noisy_loggers = (
        "aiokafka",
        "faust",
        "mode",
        "httpx",
        "httpx2",
        "httpcore",
        "uvicorn.access",
        "kafka",
        "mcp",
        "sse_starlette",
    )
    for noisy in noisy_loggers:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
