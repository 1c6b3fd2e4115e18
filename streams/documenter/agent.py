"""The documenter agent: ``schema.changes``, re-keyed by database, → ``tables.documented``.

See :mod:`streams.documenter.lane` for why the lane exists and how its state survives
restarts; :class:`streams.wiring.Handler` routes, retries and dead-letters for it.
"""

from __future__ import annotations

from events.schema import TableDropped, TableObserved
from runtime.settings import TribalSettings
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import LANE_TOPIC, DocumenterLane
from streams.documenter.state import lane_key
from streams.llm import LLMProvider
from streams.spec import AgentSpec, Regroup

DEFAULT_BATCH = (256, 0.5)


def documenter_spec(
    settings: TribalSettings,
    provider: LLMProvider | None = None,
    batch: tuple[int, float] = DEFAULT_BATCH,
) -> AgentSpec:
    """The documenter agent: a router onto the by-database lane, then the lane."""
    return AgentSpec(
        name="documenter",
        source="schema.changes",
        processor=DocumenterLane(Documenter(provider or make_provider())),
        accepts=(TableObserved, TableDropped),
        batch=batch,
        regroup=Regroup(LANE_TOPIC, lane_key),
    )
