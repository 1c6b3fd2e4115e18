"""Inspect dead letters and re-drive them to where they came from, after a fix."""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka import AIOKafkaProducer

from events.deadletter import DeadLettered
from events.serde import DecodeError, EventSerde
from runtime.kafka_log import read_range
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic

REPLAY_HEADER = "tribal-replayed-from"


@dataclass(frozen=True)
class DeadLetter:
    """One dead letter with its place on the dead-letter topic."""

    partition: int
    offset: int
    event: DeadLettered


async def read_dead_letters(settings: TribalSettings, serde: EventSerde) -> list[DeadLetter]:
    """Every dead letter, oldest first (read from the topic itself)."""
    parts = TOPICS_BY_NAME["deadletter"].partition_count(settings)
    whole: dict[int, tuple[int, int | None]] = {p: (0, None) for p in range(parts)}
    letters = []
    for r in await read_range(settings.kafka_bootstrap, topic("deadletter", settings), whole):
        try:
            event = serde.decode(r.value or b"")
        except DecodeError:
            continue
        if isinstance(event, DeadLettered):
            letters.append(DeadLetter(r.partition, r.offset, event))
    return sorted(letters, key=lambda d: (d.event.occurred_at, d.partition, d.offset))


async def replay(settings: TribalSettings, letters: list[DeadLetter]) -> int:
    """Produce each original payload back to its origin topic under its original key."""
    if not letters:
        return 0
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
    await producer.start()
    try:
        for d in letters:
            e = d.event
            await producer.send_and_wait(
                e.origin_topic,
                e.payload,
                key=e.origin_key.encode() if e.origin_key is not None else None,
                headers=[(REPLAY_HEADER, f"{d.partition}@{d.offset}".encode())],
            )
    finally:
        await producer.stop()
    return len(letters)
