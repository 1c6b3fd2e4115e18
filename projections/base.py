"""The projection port: what a read store must do to be rebuilt from the log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from events.base import Event


@dataclass(frozen=True)
class Applied:
    """One event with where it came from, as a projection receives it."""

    topic: str
    partition: int
    offset: int
    key: str | None
    event: Event


TopicPartitionKey = tuple[str, int]


class Projection(Protocol):
    """A read store folded from events."""

    name: str
    topics: tuple[str, ...]
    """Short topic names (``"chunks"``, ``"embeddings"``) this projection reads."""

    async def setup(self) -> None:
        """Create what the store needs (tables, collections); idempotent."""
        ...

    async def positions(self) -> dict[TopicPartitionKey, int]:
        """The next offset to apply per (full topic name, partition); absent = from start."""
        ...

    async def apply(self, batch: Sequence[Applied]) -> int:
        """Apply events not yet applied and record their offsets with the writes.

        Returns how many events changed the store (already-applied ones are skipped).
        """
        ...

    async def skip(self, topic: str, partition: int, offset: int) -> None:
        """Record ``offset`` as handled without writing anything else.

        For a record dead-lettered instead of applied: the store's position moves past
        it, so a restart neither retries it nor counts it as lag.
        """
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


class RewindNeededError(Exception):
    """A batch starts after the store's position: events in between would be lost.

    Happens when the store was swapped (rebuild) or restored under a running
    projection; the runner re-seeks to the store's positions and reads again.
    """


def check_no_gap(stored: dict[TopicPartitionKey, int], batch: Sequence[Applied]) -> None:
    """Raise :class:`RewindNeededError` if ``batch`` skips offsets the store has not seen."""
    first: dict[TopicPartitionKey, int] = {}
    for a in batch:
        key = (a.topic, a.partition)
        first[key] = min(first.get(key, a.offset), a.offset)
    for key, offset in first.items():
        position = stored.get(key)
        if position is not None and offset > position:
            raise RewindNeededError(
                f"{key[0]}[{key[1]}] batch starts at {offset}, store is at {position}"
            )


def is_next(stored: int | None, topic: str, partition: int, offset: int) -> bool:
    """Whether ``offset`` is the store's next one on its partition (``False``: already
    applied); raises :class:`RewindNeededError` if records before it were never seen."""
    if stored is not None and offset < stored:
        return False
    if stored is not None and offset > stored:
        raise RewindNeededError(f"{topic}[{partition}] skip of {offset}, store is at {stored}")
    return True
