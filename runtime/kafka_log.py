"""Reading a topic's records directly (no consumer group): catch-up and export."""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition


@dataclass(frozen=True)
class LogRecord:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


async def read_range(
    bootstrap: str,
    topic: str,
    partitions: dict[int, tuple[int, int | None]],
    idle_ms: int = 500,
) -> list[LogRecord]:
    """Records of ``{partition: (start, stop)}``, offsets in ``[start, stop)``.

    ``stop=None`` reads to the end: until the reported end offset is passed and then
    nothing more arrives for ``idle_ms`` (Tansu's end offsets can lag records that
    were produced in one batch). Records come back in (partition, offset) order.
    """
    if not partitions:
        return []
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        tps = {p: TopicPartition(topic, p) for p in partitions}
        ends = await consumer.end_offsets(list(tps.values()))
        bounded = {tps[p]: stop for p, (start, stop) in partitions.items() if stop is not None}
        open_ended = {tps[p]: ends[tps[p]] for p, (_, stop) in partitions.items() if stop is None}
        todo = {tp: stop for tp, stop in bounded.items() if stop > partitions[tp.partition][0]}
        consumer.assign([*todo, *open_ended])
        for tp in [*todo, *open_ended]:
            consumer.seek(tp, partitions[tp.partition][0])
        out: list[LogRecord] = []
        while todo or open_ended:
            batch = await consumer.getmany(*todo, *open_ended, timeout_ms=idle_ms)
            for tp, msgs in batch.items():
                limit = todo.get(tp)
                out.extend(
                    LogRecord(tp.partition, m.offset, m.key, m.value)
                    for m in msgs
                    if limit is None or m.offset < limit
                )
            for tp in list(todo):
                if await consumer.position(tp) >= todo[tp]:
                    del todo[tp]
                    consumer.pause(tp)
            quiet = not any(batch.get(tp) for tp in open_ended)
            for tp in list(open_ended):
                if quiet and await consumer.position(tp) >= open_ended[tp]:
                    del open_ended[tp]
        return sorted(out, key=lambda r: (r.partition, r.offset))
    finally:
        await consumer.stop()


async def read_topic(bootstrap: str, topic: str) -> list[LogRecord]:
    """Every record of every partition of ``topic`` up to its current end."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics([topic])
    finally:
        await admin.close()
    parts = sorted(
        p["partition"] for d in described if d["topic"] == topic for p in d["partitions"]
    )
    return await read_range(bootstrap, topic, {p: (0, None) for p in parts})
