"""The Confluent wire format, subject naming and caching of EventSerde."""

from __future__ import annotations

import struct
from pathlib import Path

from events.deadletter import DeadLettered
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.registry.base import AvroSchema
from events.registry.file import FileSchemaRegistry
from events.serde import EventSerde, subject_name
from tests.events.samples import FULL


class CountingRegistry(FileSchemaRegistry):
    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.registered: list[str] = []
        self.fetched: list[int] = []

    def register(self, subject: str, schema: AvroSchema) -> int:
        self.registered.append(subject)
        return super().register(subject, schema)

    def get_by_id(self, schema_id: int) -> AvroSchema:
        self.fetched.append(schema_id)
        return super().get_by_id(schema_id)


def test_subjects_follow_the_topic_record_name_strategy() -> None:
    assert (
        subject_name("tribal.kb.articles", KbArticleUpserted)
        == "tribal.kb.articles-tribal.kb.KbArticleUpserted"
    )


def test_encoded_bytes_are_magic_byte_schema_id_then_avro(
    file_registry: FileSchemaRegistry, serde: EventSerde
) -> None:
    event = KbArticleDeleted(article_id="kb-9")
    data = serde.encode(event, "tribal.kb.articles")
    latest = file_registry.latest("tribal.kb.articles-tribal.kb.KbArticleDeleted")
    assert latest is not None
    assert data[:5] == struct.pack(">bI", 0, latest[0])
    assert len(data) > 5


def test_schemas_are_registered_once_per_topic_and_type(tmp_path: Path) -> None:
    registry = CountingRegistry(tmp_path)
    serde = EventSerde(registry)
    for _ in range(3):
        serde.encode(KbArticleDeleted(article_id="a"), "tribal.kb.articles")
    serde.encode(KbArticleDeleted(article_id="a"), "other.topic")
    assert registry.registered == [
        "tribal.kb.articles-tribal.kb.KbArticleDeleted",
        "other.topic-tribal.kb.KbArticleDeleted",
    ]


def test_prepare_registers_before_the_first_encode(tmp_path: Path) -> None:
    registry = CountingRegistry(tmp_path)
    EventSerde(registry).prepare("tribal.kb.articles", [KbArticleUpserted, KbArticleDeleted])
    assert registry.subjects() == [
        "tribal.kb.articles-tribal.kb.KbArticleDeleted",
        "tribal.kb.articles-tribal.kb.KbArticleUpserted",
    ]


def test_writer_schemas_are_fetched_once_per_id(tmp_path: Path) -> None:
    registry = CountingRegistry(tmp_path)
    producer, consumer = EventSerde(registry), EventSerde(registry)
    messages = [producer.encode(event, "tribal.test") for event in FULL] * 3
    assert [consumer.decode(m) for m in messages] == FULL * 3
    assert len(registry.fetched) == len(set(registry.fetched)) == len(FULL)


def test_a_dead_letter_keeps_the_original_bytes(serde: EventSerde) -> None:
    original = serde.encode(KbArticleDeleted(article_id="x"), "tribal.kb.articles")
    letter = DeadLettered(
        origin_topic="tribal.kb.articles", origin_partition=1, origin_offset=7, origin_key="x",
        error_code="INVALID_EVENT", error_message="boom", payload=original,
    )  # fmt: skip
    decoded = serde.decode(serde.encode(letter, "tribal.deadletter"))
    assert isinstance(decoded, DeadLettered)
    assert serde.decode(decoded.payload) == KbArticleDeleted.model_validate(
        serde.decode(original).model_dump()
    )
