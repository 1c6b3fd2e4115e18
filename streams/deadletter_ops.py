"""Inspect dead letters and re-drive them to where they came from, after a fix."""

from __future__ import annotations

import time
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from events.deadletter import DeadLettered
from events.serde import DecodeError, EventSerde
from runtime.settings import TribalSettings
from runtime.topics import TOPICS_BY_NAME, topic

REPLAY_HEADER = "tribal-replayed-from"


@dataclass(frozen=True)
class DeadLetter:
    """One dead letter with its place on the dead-letter topic."""

    partition: int
    offset: int
    event: DeadLettered


async def read_dead_letters(
    settings: TribalSettings, serde: EventSerde, idle_ms: int = 400
) -> list[DeadLetter]:
    """Every dead letter, oldest first (read from the topic itself)."""
    name = topic("deadletter", settings)
    parts = TOPICS_BY_NAME["deadletter"].partition_count(settings)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_bootstrap,
        enable_auto_commit=False,
        fetch_max_wait_ms=settings.fetch_max_wait_ms,
    )
    await consumer.start()
    try:
        tps = [TopicPartition(name, p) for p in range(parts)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen: dict[tuple[int, int], DeadLetter] = {}
        last_new = time.monotonic()
        while time.monotonic() - last_new < idle_ms / 1000:
            for tp, msgs in (await consumer.getmany(timeout_ms=100)).items():
                for m in msgs:
                    if (tp.partition, m.offset) in seen:
                        continue
                    try:
                        event = serde.decode(m.value or b"")
                    except DecodeError:
                        continue
                    if isinstance(event, DeadLettered):
                        seen[(tp.partition, m.offset)] = DeadLetter(tp.partition, m.offset, event)
                        last_new = time.monotonic()
        return sorted(seen.values(), key=lambda d: (d.event.occurred_at, d.partition, d.offset))
    finally:
        await consumer.stop()


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
