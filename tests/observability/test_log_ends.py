"""Where a partition's log ends, on both brokers: Tansu's high watermark is its last
batch's base offset + 1, so 100 records produced in one batch read as 1."""

from __future__ import annotations

import time
import uuid

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from devstack.endpoints import Broker
from runtime.observability.progress import log_ends


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


async def test_the_ends_of_many_topics_are_found_in_one_metadata_round(broker: Broker) -> None:
    # aiokafka learns an unknown topic per ListOffsets retry (100 ms each): twelve topics
    # took 1.1 s on Apache Kafka, most of /healthz's 2 s lag deadline.
    names = [f"ends-{uuid.uuid4().hex[:8]}" for _ in range(12)]
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, 2, 1) for name in names])
    finally:
        await admin.close()
    tps = [TopicPartition(name, p) for name in names for p in range(2)]
    for _ in range(2):  # the second time counts: every partition has a leader by then
        consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None)
        await consumer.start()
        try:
            began = time.monotonic()
            assert await log_ends(consumer, tps) == dict.fromkeys(tps, 0)
            took = time.monotonic() - began
        finally:
            await consumer.stop()
    assert took < 0.5
