"""Turns and system events → ``EpisodeRecorded`` (seed 003's synchronous half).

The episode id is :func:`~events.memory.episode_id_for` of the source event, so a
redelivered turn yields the same episode and the index upserts it in place. When the
model fails the episode is still recorded, with the reason instead of a vector.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta
from uuid import uuid5

from events.base import Event
from events.memory import (
    EpisodeRecorded,
    MemoryForgotten,
    SystemEventRecorded,
    TurnRecorded,
    episode_id_for,
)
from streams.embedder.model import Embedder
from streams.memory import metrics
from streams.memory.anchors import Anchors, since
from streams.memory.backlog import EPISODES_FIRST, Backlog
from streams.memory.english import english_entities
from streams.memory.when import chat_words, names_a_time, only_time_sentences, when
from streams.warm import WARM_TEXT
from streams.wiring import Emit

log = logging.getLogger(__name__)

EPISODES = "memory.episodes"
Source = TurnRecorded | SystemEventRecorded


def turn_content(turn: TurnRecorded) -> str:
    """What a turn's episode holds: both sides, each labelled with who said it (the
    speaker's own name when the turn names one, else ``User``)."""
    said = f"{turn.speaker or 'User'}: {turn.user_message}"
    return f"{said}\nAgent: {turn.agent_response}" if turn.agent_response else said


def _words(event: Source) -> str:
    if isinstance(event, TurnRecorded):
        return f"{event.user_message}\n{event.agent_response}"
    return event.content


def times_of(events: Sequence[Source], anchors: Anchors | None = None) -> list[str]:
    """The times each event's words name, resolved against when it was said ("last
    Saturday" said on 16 May 2023 is ``2023-05-13``), space-separated; empty when none.
    Chat's shortened words of time are read written out ("yday", "on sat": :func:`chat_words`).
    The entities of the sentences that have a word of time are read in one batch. A time told
    by an event said before ("the day after my birthday") is read against ``anchors``,
    the days each group's earlier turns named (this batch's own, in order, when None)."""
    anchors = anchors if anchors is not None else Anchors()
    texts = [chat_words(_words(e)) for e in events]
    timed = [i for i, text in enumerate(texts) if names_a_time(text)]
    read = english_entities([only_time_sentences(texts[i]) for i in timed]) or []
    docs = dict(zip(timed, read, strict=False))
    out = []
    for i, (event, text) in enumerate(zip(events, texts, strict=True)):
        doc = docs.get(i)
        parse = (lambda _text, d=doc: d) if doc is not None else None
        speaker = event.speaker if isinstance(event, TurnRecorded) else None
        said = when().mentions(text, event.occurred_at, parse)
        said += since(text, said, event.occurred_at)
        tied = anchors.tied(event.group_id, text, event.occurred_at, speaker, said)
        # "the Monday after the interview" is not also last Monday
        said = [m for m in said if not any(m.text in t.text for t in tied)] + tied
        anchors.remember(event.group_id, text, said, event.occurred_at, speaker)
        out.append(" ".join(dict.fromkeys(m.label for m in said)))
    return out


class SaidOrder:
    """Turns of one group said at the very same time keep the order they arrived in.

    A transcript dated by its sessions only (``metadata.session_date``) gives every turn
    of a session one time; ranked by time, the turns of a session would come back in
    any order, and a turn would be read with the wrong ones before it. Each turn said at
    the same time as the group's turn before it is placed one microsecond after that
    one. A turn said at another time, earlier or later (an import out of order), keeps
    its own. The last time of each group is kept (bounded, least recently used groups
    forgotten first), so a replay of the same partition places the same turns the same way.
    """

    def __init__(self, groups: int = 4096) -> None:
        self.groups = groups
        self._last: OrderedDict[str, tuple[datetime, datetime]] = OrderedDict()

    def place(self, group: str, said: datetime) -> datetime:
        """The time to give ``group``'s next turn, said at ``said``."""
        last = self._last.get(group)
        placed = last[1] + timedelta(microseconds=1) if last and last[0] == said else said
        self._last[group] = (said, placed)
        self._last.move_to_end(group)
        while len(self._last) > self.groups:
            self._last.popitem(last=False)
        return placed

    def forget(self, group: str, tenant: str | None = None) -> None:
        """Drop ``group``, or every group of ``tenant`` when given."""
        for known in list(self._last):
            if known == group or (tenant is not None and known.startswith(f"{tenant}:")):
                del self._last[known]


def episode_of(
    event: Source,
    vector: list[float] | None,
    model: str | None,
    error: str | None,
    times: str = "",
    said: datetime | None = None,
) -> EpisodeRecorded:
    """The episode for ``event``; exactly one of ``vector`` and ``error`` is set.
    ``times`` are the times its words name (:func:`times_of`), kept in its metadata;
    ``said``: when it was said, if not its event's time (:class:`SaidOrder`)."""
    if isinstance(event, TurnRecorded):
        content, content_type, source = turn_content(event), "message", "user"
        meta = {**event.metadata, "turn_id": str(event.turn_id)}
        if event.speaker:
            meta["speaker"] = event.speaker
    else:
        content, content_type, source = event.content, "event", "system"
        meta = {**event.metadata, "event_type": event.event_type}
    if times:
        meta["times"] = times
    episode_id = episode_id_for(event.event_id)
    return EpisodeRecorded(
        event_id=uuid5(episode_id, "recorded"),  # a redelivered turn: the very same event
        group_id=event.group_id,
        # World time is when the turn happened, not when it was processed.
        occurred_at=said or event.occurred_at,
        episode_id=episode_id,
        source_event_id=event.event_id,
        content=content,
        content_type=content_type,
        source=source,
        source_metadata=meta,
        embedding=vector,
        embedding_model=model if vector is not None else None,
        embedding_error=error,
    )


class Episoder:
    """The ``episoder`` agent's batch processor: one model call per batch."""

    def __init__(
        self,
        model: Embedder | None,
        embedding_enabled: bool = True,
        episode_partitions: int = 1,
        backlog: Backlog = EPISODES_FIRST,
    ) -> None:
        self.model = model
        self.embedding_enabled = embedding_enabled and model is not None
        self.episode_partitions = episode_partitions
        self.backlog = backlog
        self.anchors = Anchors()
        self.order = SaidOrder()

    def warm(self) -> None:
        """Load the embedding model and the time reader's pipeline before the first
        turn (:mod:`streams.warm`)."""
        english_entities([WARM_TEXT])
        if self.embedding_enabled and self.model is not None:
            self.model.encode([WARM_TEXT])

    def forgotten(self, event: MemoryForgotten) -> list[Emit]:
        """A forget for ``memory.episodes``: under its group's key, or, for a whole
        tenant (whose groups live on every partition), one copy on each partition so
        that every worker's lanes hear of it in their partitions' order. The days its
        turns named are forgotten here too."""
        tenant = event.tenant if event.scope == "tenant" else None
        self.anchors.forget(event.group_id, tenant)
        self.order.forget(event.group_id, tenant)
        if event.scope != "tenant":
            return [Emit(EPISODES, event.group_id, event)]
        return [Emit(EPISODES, event.group_id, event, p) for p in range(self.episode_partitions)]

    async def _embed(self, texts: list[str]) -> list[list[float] | str]:
        """A vector or the reason there is none, per text."""
        if not self.embedding_enabled or self.model is None:
            return ["embedding disabled" for _ in texts]
        model = self.model
        try:
            return list(await asyncio.to_thread(model.encode, texts))
        except Exception as exc:
            if len(texts) == 1:
                return [f"{type(exc).__name__}: {exc}"[:500]]
        # One bad text must not cost the whole batch its vectors.
        return [v for t in texts for v in await self._embed([t])]

    async def __call__(self, events: Sequence[Event]) -> list[Emit]:
        """Episodes for turns and system events; a ``MemoryForgotten`` is passed on to
        ``memory.episodes`` in its place in the order, so that the extractor and the
        summarizer forget the group's state where its episodes stop."""
        sources = [e for e in events if isinstance(e, TurnRecorded | SystemEventRecorded)]
        if not sources:
            return [f for e in events if isinstance(e, MemoryForgotten) for f in self.forgotten(e)]
        with self.backlog.working(len(sources)):
            return await self._episodes(events, sources)

    async def _episodes(self, events: Sequence[Event], sources: Sequence[Source]) -> list[Emit]:
        started = time.perf_counter()
        contents = [turn_content(e) if isinstance(e, TurnRecorded) else e.content for e in sources]
        embedded, said = await asyncio.gather(
            self._embed(contents), asyncio.to_thread(times_of, sources, self.anchors)
        )
        vectors = dict(zip(map(id, sources), embedded, strict=True))
        times = dict(zip(map(id, sources), said, strict=True))
        name = self.model.name if self.model is not None else None
        out: list[Emit] = []
        for event in events:
            if isinstance(event, MemoryForgotten):
                out.extend(self.forgotten(event))
                continue
            if not isinstance(event, TurnRecorded | SystemEventRecorded):
                continue
            vector = vectors[id(event)]
            placed = self.order.place(event.group_id, event.occurred_at)
            try:
                episode = (
                    episode_of(event, None, None, vector, times[id(event)], placed)
                    if isinstance(vector, str)
                    else episode_of(event, vector, name, None, times[id(event)], placed)
                )
            except ValueError as exc:  # a NaN vector or a wrong size: keep the episode
                error = f"invalid embedding: {exc}"[:500]
                episode = episode_of(event, None, None, error, times[id(event)], placed)
            out.append(Emit(EPISODES, event.group_id, episode))
            metrics.EPISODES_CREATED.labels(episode.content_type, episode.source).inc()
        ms = (time.perf_counter() - started) * 1000
        metrics.INGESTION_LATENCY.labels("episode_create").observe(ms)
        log.info("episodes_created count=%d latency_ms=%.1f", len(sources), ms)
        return out
