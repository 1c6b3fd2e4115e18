"""Each service fixture hands over a service that really works."""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from devstack import Broker, WeaviateEndpoint

asyncpg: Any = importlib.import_module("asyncpg")


async def test_a_message_produced_to_the_broker_can_be_consumed(broker: Broker) -> None:
    topic = f"harness-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=broker.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()

    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topic, b"hello", key=b"k")
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=broker.bootstrap,
        group_id=f"harness-{broker.name}",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        message = await consumer.getone()
    finally:
        await consumer.stop()
    assert (message.key, message.value) == (b"k", b"hello")


def test_each_broker_reports_its_version(broker: Broker) -> None:
    assert broker.name in ("kafka", "tansu")
    assert broker.version


async def test_postgres_answers_and_has_pgvector(postgres_dsn: str) -> None:
    conn = await asyncpg.connect(postgres_dsn)
    try:
        assert await conn.fetchval("SELECT 1") == 1
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        distance = await conn.fetchval("SELECT '[1,0]'::vector <-> '[0,0]'::vector")
    finally:
        await conn.close()
    assert distance == pytest.approx(1.0)


def test_weaviate_is_ready_and_creates_a_collection_without_vectorizer(
    weaviate: WeaviateEndpoint,
) -> None:
    import weaviate as weaviate_client
    from weaviate.classes.config import Configure, DataType, Property

    client = weaviate_client.connect_to_custom(
        weaviate.http_host,
        weaviate.http_port,
        False,
        weaviate.grpc_host,
        weaviate.grpc_port,
        False,
    )
    name = f"Harness{uuid.uuid4().hex[:8]}"
    try:
        assert client.is_ready()
        collection = client.collections.create(
            name,
            properties=[Property(name="text", data_type=DataType.TEXT)],
            vector_config=Configure.Vectors.self_provided(),
        )
        collection.data.insert({"text": "hello"}, vector=[0.1, 0.2, 0.3])
        assert collection.aggregate.over_all(total_count=True).total_count == 1
        client.collections.delete(name)
        assert not client.collections.exists(name)
    finally:
        client.close()
    assert weaviate.url.startswith("http://")
    assert weaviate.version
