"""Where a partition's log ends, on both brokers: Tansu's high watermark is its last
batch's base offset + 1, so 100 records produced in one batch read as 1."""

from __future__ import annotations

import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from streams.observability.progress import log_ends
from tests.harness.endpoints import Broker


async def test_the_end_of_a_log_counts_every_record_of_a_batch(broker: Broker) -> None:
    kafka_bootstrap = broker.bootstrap
    name = f"ends-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 2, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, linger_ms=100)
    await producer.start()
    try:
        batch = [await producer.send(name, f"r{n}".encode(), partition=0) for n in range(100)]
        for sent in batch:
            await sent
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=None)
    await consumer.start()
    try:
        tps = [TopicPartition(name, 0), TopicPartition(name, 1)]
        assert await log_ends(consumer, tps) == {tps[0]: 100, tps[1]: 0}
    finally:
        await consumer.stop()
