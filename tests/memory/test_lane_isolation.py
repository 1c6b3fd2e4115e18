"""A memory lane, wired by the shared Handler, isolates an episode it cannot fold: the
rest of the batch lands, the episode is dead-lettered with its reason, and no later batch
or rebuild meets the poisoned record again."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from events.base import Event
from events.deadletter import DeadLettered
from events.memory import EpisodeRecorded, MemoryForgotten
from events.registry.file import FileSchemaRegistry
from events.serde import EventSerde
from runtime.kafka_log import LogRecord
from runtime.settings import TribalSettings
from streams.memory.lane import MemoryLane
from streams.wiring import Emit, Handler, Incoming

TOPIC = "t.memory.episodes"


def episode(n: int, text: str | None = None) -> EpisodeRecorded:
    return EpisodeRecorded(
        group_id="acme:s1",
        episode_id=uuid.uuid4(),
        source_event_id=uuid.uuid4(),
        content=text or f"turn {n}",
        content_type="message",
        source="user",
        embedding_error="not embedded in this test",
    )


class Folding(MemoryLane):
    """A lane that remembers what it folded and fails on a poisoned episode."""

    output = "memory.facts"

    def __init__(self) -> None:
        super().__init__(partitions=1)
        self.folded: list[str] = []

    def groups(self) -> list[str]:
        return []

    def drop_group(self, group_id: str) -> None:
        pass

    def reset(self, partition: int, known: Sequence[Event]) -> None:
        self.folded = []

    async def process(self, episodes: Sequence[EpisodeRecorded]) -> list[Emit]:
        for e in episodes:
            if e.content == "poison":
                raise RuntimeError("the extractor met a bug")
            self.folded.append(e.content)
        return []


async def test_one_poisoned_episode_costs_only_itself_in_batches_and_rebuilds(
    tmp_path: Path,
) -> None:
    serde = EventSerde(FileSchemaRegistry(tmp_path / "schemas"))
    log: list[LogRecord] = []
    for n in range(10):
        e = episode(n, "poison" if n == 4 else None)
        log.append(LogRecord(0, n, b"acme:s1", serde.encode(e, TOPIC)))

    lane = Folding()
    settings = TribalSettings(topic_prefix="t.", unknown_failure_attempts=2, transient_retry_s=0)
    handler = Handler("extractor", lane, (EpisodeRecorded, MemoryForgotten), serde, settings)

    async def reader(short: str, partition: int, start: int, end: int | None) -> list[LogRecord]:
        if short != "memory.episodes":
            return []
        return [r for r in log if start <= r.offset and (end is None or r.offset < end)]

    lane.reader = reader  # the log above, not a broker's

    async def handle(records: list[LogRecord]) -> list[DeadLettered]:
        batch = [Incoming(TOPIC, r.partition, r.offset, r.key, r.value) for r in records]
        out = [serde.decode(r.value) for r in await handler.handle_batch(batch)]
        return [e for e in out if isinstance(e, DeadLettered)]

    [dead] = await handle(log)
    assert (dead.origin_topic, dead.origin_offset) == (TOPIC, 4)
    assert "bug" in dead.error_message
    assert dead.payload == log[4].value
    assert lane.folded == [f"turn {n}" for n in range(10) if n != 4]

    # A new record after a restart of the lane's state: the rebuild skips the poison.
    lane.forget([0])
    log.append(LogRecord(0, 10, b"acme:s1", serde.encode(episode(10), TOPIC)))
    assert await handle(log[10:]) == []
    assert lane.folded == [f"turn {n}" for n in range(11) if n != 4]
