"""Seed 003's metrics (``tribal_`` instead of ``focal_``) and spans, for the memory agents.

The metrics are defined once, in :mod:`runtime.observability.metrics` (one registry per
process); this module names them the way the memory code uses them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from runtime.observability.metrics import (
    DEDUPLICATION_MATCHES as DEDUP_MATCHES,
)
from runtime.observability.metrics import (
    ENTITIES_EXTRACTED,
    EPISODES_CREATED,
    EXTRACTION_LATENCY,
    INGESTION_LATENCY,
    RELATIONSHIPS_CREATED,
    SUMMARIES_CREATED,
)
from runtime.observability.tracing import span as _span

__all__ = [
    "DEDUP_MATCHES",
    "ENTITIES_EXTRACTED",
    "EPISODES_CREATED",
    "EXTRACTION_LATENCY",
    "INGESTION_LATENCY",
    "RELATIONSHIPS_CREATED",
    "SUMMARIES_CREATED",
    "span",
]


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[Any]:
    """A span named after seed 003 (``memory.extract_entities`` …)."""
    with _span(name, None, **attributes) as current:
        yield current
