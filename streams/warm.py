"""Models load before a worker takes its first record.

Every model an agent uses loads on first use: the embedding model (an ONNX session, or
torch, and under ``TRIBAL_EMBEDDING_BACKEND=auto`` both, timed), spaCy's English pipeline
(whose import brings in torch too) and the extraction model. Left to the first records,
those loads take seconds (15 s measured on a busy 2-core machine). The records behind
them wait, and so do the other agents of the process, since imports hold the
interpreter's lock. A stage that sits that long on its first batch cannot be told from a
stuck one (``/healthz`` reports it so after ``stuck_after_s``). So a worker warms its
agents before it joins its consumer group, and its first record is as fast as any.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from streams.spec import AgentSpec

log = logging.getLogger(__name__)

WARM_TEXT = "Hi, I'm Ann Lee. I moved to 12 Castle Street in Edinburgh last May."
"""What each model reads once at start: a turn that exercises every memory rule's parse."""


@runtime_checkable
class Warms(Protocol):
    """A processor with models to load before its first record."""

    def warm(self) -> None:
        """Load (and run once) every model the processor uses; blocking."""


def warm_up(specs: Sequence[AgentSpec]) -> float:
    """Warm every agent's processor once (processors shared by agents, once); the
    seconds it took. A model that fails to load is left to its first record, which
    then fails the way it always would: into a retry or a dead letter."""
    started = time.monotonic()
    seen: set[int] = set()
    for spec in specs:
        processor = spec.processor
        if not isinstance(processor, Warms) or id(processor) in seen:
            continue
        seen.add(id(processor))
        t0 = time.monotonic()
        try:
            processor.warm()
        except Exception as exc:  # the worker still starts; the first record retries it
            log.warning("agent %s: its models did not load at start: %s", spec.name, exc)
            continue
        log.info("agent %s: models loaded in %.1f s", spec.name, time.monotonic() - t0)
    took = time.monotonic() - started
    if seen:
        log.info("models loaded in %.1f s, before the first record", took)
    return took
