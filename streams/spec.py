"""What an agent is: a processor (or lane), the topic it reads and how it takes records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from events.base import Event
from streams.wiring import BatchProcessor, Lane, Processor


@dataclass(frozen=True)
class Regroup:
    """Re-keys the source's events onto a lane topic of the agent's own before it reads
    them, for state that spans keys the source spreads over partitions (the tables of one
    database). ``topic``: a short name from :data:`runtime.topics.LANES`; ``key``: an
    accepted event's key there."""

    topic: str
    key: Callable[[Any], str]


@dataclass(frozen=True)
class AgentSpec:
    """Wires ``processor`` from the source topic ``source`` (short name)."""

    name: str
    source: str
    processor: Processor | BatchProcessor | Lane
    accepts: tuple[type[Event], ...]
    concurrency: int = 1
    batch: tuple[int, float] | None = None
    """``(max events, max seconds)``: hand the processor lists of events (Faust's
    ``take_events``) instead of one event at a time; a lane takes batches."""
    bulk: str | None = None
    """The bulk lane (a short topic name): records read ``settings.bulk_backlog`` or more
    behind the end of their partition are passed there unprocessed, for an agent whose
    work yields to this one's (see :class:`streams.embedder.model.ModelLock`)."""
    regroup: Regroup | None = None
    """A router agent ``{name}_router`` re-keys the source onto this lane topic, which
    the agent reads instead of ``source``."""
