"""A runner feed that puts each event on the topic the topic table gives its type."""

from __future__ import annotations

from events.base import Event
from runtime.topics import TOPICS_BY_NAME
from tests.projections.feed import RunnerFeed


class TopicFeed(RunnerFeed):
    """Applies each event on the one topic, of those its projection reads, that carries
    the event's type in :data:`runtime.topics.TOPICS`, so tests route events as the
    producers do and a projection needs no feed of its own."""

    def topic(self, event: Event) -> str:
        kind = type(event).__name__
        [short] = [t for t in self.projection.topics if kind in TOPICS_BY_NAME[t].events]
        return f"tribal.{short}"  # the default prefix
