"""Which projections a Tribal installation runs, built from settings."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable

from projections.base import Projection
from runtime.settings import TribalSettings

log = logging.getLogger(__name__)

Factory = Callable[[TribalSettings], Projection]


def _deadletters(settings: TribalSettings) -> Projection:
    from projections.deadletters import DeadLetterProjection

    return DeadLetterProjection(settings.postgres_dsn, schema="tribal_ops")


def _lazy(target: str) -> Factory:
    """A factory from ``module:function`` imported on first use."""

    def build(settings: TribalSettings) -> Projection:
        module_name, _, attr = target.partition(":")
        factory: Factory = getattr(importlib.import_module(module_name), attr)
        return factory(settings)

    return build


PROJECTIONS: dict[str, Factory] = {
    "deadletters": _deadletters,
    "catalog": _lazy("projections.catalog:from_settings"),
    "graph": _lazy("projections.graph:from_settings"),
    "index": _lazy("projections.index:from_settings"),
}


def projections_for(settings: TribalSettings, names: list[str] | None = None) -> list[Projection]:
    """The named projections (default: all that can be built here)."""
    if not settings.postgres_dsn:
        raise RuntimeError(
            "projections need PostgreSQL: set TRIBAL_POSTGRES_DSN or run `tribal up`"
        )
    chosen = names or list(PROJECTIONS)
    unknown = [n for n in chosen if n not in PROJECTIONS]
    if unknown:
        raise KeyError(f"unknown projection(s) {unknown}; known: {', '.join(PROJECTIONS)}")
    built: list[Projection] = []
    for name in chosen:
        try:
            built.append(PROJECTIONS[name](settings))
        except (ImportError, AttributeError) as exc:
            if names:  # asked for by name: that is an error
                raise
            log.warning("projection %s is not available: %s", name, exc)
    return built
