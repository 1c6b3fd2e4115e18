"""Decode → process → encode without a broker: routing and dead-letter rules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from devstack.pipeline import kb_article
from events.base import Event
from events.chunks import DocumentChunked, DocumentRetracted
from events.deadletter import DeadLettered
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.registry.file import FileSchemaRegistry
from events.serde import EventSerde
from runtime.settings import TribalSettings
from streams.chunker.kb import chunk_kb_article
from streams.failures import BadRecordError
from streams.wiring import Emit, Handler, Incoming, ProcessingError, Record

SOURCE = "tribal.kb.articles"


@pytest.fixture
def serde(tmp_path: Path) -> EventSerde:
    return EventSerde(FileSchemaRegistry(tmp_path / "schemas"))


def _handler(serde: EventSerde, processor: object = chunk_kb_article) -> Handler:
    return Handler(
        "kb_chunker",
        processor,  # type: ignore[arg-type]
        (KbArticleUpserted, KbArticleDeleted),
        serde,
        TribalSettings(),
    )


def _dead(serde: EventSerde, value: bytes) -> DeadLettered:
    event = serde.decode(value)
    assert isinstance(event, DeadLettered)
    return event


@dataclass
class Failing:
    """A processor that raises ``error`` on its first ``times`` calls (on every call when
    None), then chunks the article; ``calls`` counts how often the handler tried it."""

    error: Exception
    times: int | None = None
    calls: int = 0

    def __call__(self, event: Event) -> Iterable[Emit]:
        self.calls += 1
        if self.times is None or self.calls <= self.times:
            raise self.error
        return chunk_kb_article(event)


async def _handled(serde: EventSerde, processor: object) -> Record:
    """The one record the handler makes of article 1 with ``processor``."""
    value = serde.encode(kb_article(1), SOURCE)
    [record] = await _handler(serde, processor).handle(SOURCE, 0, 5, b"kb-1", value)
    return record


async def _dead_lettered(serde: EventSerde, processor: object) -> DeadLettered:
    """The dead letter the handler makes of article 1 with ``processor``."""
    return _dead(serde, (await _handled(serde, processor)).value)


async def test_a_good_article_becomes_one_chunked_document_keyed_by_document_id(
    serde: EventSerde,
) -> None:
    value = serde.encode(kb_article(7), SOURCE)
    [record] = await _handler(serde).handle(SOURCE, 0, 42, b"kb-7", value)
    assert record.topic == "tribal.chunks"
    assert record.key == b"kb:kb-7"
    doc = serde.decode(record.value)
    assert isinstance(doc, DocumentChunked)
    assert doc.chunks[0].text.startswith("Article 7")


async def test_a_deleted_article_is_retracted(serde: EventSerde) -> None:
    value = serde.encode(KbArticleDeleted(article_id="kb-7"), SOURCE)
    [record] = await _handler(serde).handle(SOURCE, 0, 1, b"kb-7", value)
    assert isinstance(serde.decode(record.value), DocumentRetracted)


async def test_random_bytes_are_dead_lettered_with_origin_and_original_payload(
    serde: EventSerde,
) -> None:
    [record] = await _handler(serde).handle(SOURCE, 3, 99, b"k", b"garbage")
    assert record.topic == "tribal.deadletter"
    assert record.key == b"k"
    dead = _dead(serde, record.value)
    assert (dead.origin_topic, dead.origin_partition, dead.origin_offset) == (SOURCE, 3, 99)
    assert dead.error_code == "NOT_WIRE_FORMAT"
    assert dead.payload == b"garbage"


async def test_an_empty_value_is_dead_lettered_not_dropped(serde: EventSerde) -> None:
    [record] = await _handler(serde).handle(SOURCE, 0, 0, None, None)
    dead = _dead(serde, record.value)
    assert dead.origin_key is None
    assert dead.error_code == "NOT_WIRE_FORMAT"


async def test_an_event_on_the_wrong_topic_is_dead_lettered(serde: EventSerde) -> None:
    value = serde.encode(DocumentRetracted(document_id="x"), SOURCE)
    [record] = await _handler(serde).handle(SOURCE, 0, 5, b"x", value)
    dead = _dead(serde, record.value)
    assert dead.error_code == "UNEXPECTED_EVENT_TYPE"
    assert "DocumentRetracted" in dead.error_message


async def test_a_processor_bug_is_dead_lettered_and_does_not_raise(serde: EventSerde) -> None:
    dead = await _dead_lettered(serde, Failing(ZeroDivisionError("boom")))
    assert dead.error_code == "PROCESSING_FAILED"
    assert "ZeroDivisionError: boom" in dead.error_message


async def test_a_processing_error_keeps_its_code(serde: EventSerde) -> None:
    dead = await _dead_lettered(serde, Failing(ProcessingError("TOO_LARGE", "article is 60 MB")))
    assert (dead.error_code, dead.error_message) == ("TOO_LARGE", "[kb_chunker] article is 60 MB")


async def test_invalid_utf8_in_a_key_is_kept_readable(serde: EventSerde) -> None:
    [record] = await _handler(serde).handle(SOURCE, 0, 5, b"\xff\xfekey", b"junk")
    assert record.key == b"\xff\xfekey"
    assert _dead(serde, record.value).origin_key == "\ufffd\ufffdkey"


async def test_a_batch_dead_letters_only_its_bad_records(serde: EventSerde) -> None:
    seen: list[int] = []

    def count_batch(events: Sequence[Event]) -> Iterable[Emit]:
        seen.append(len(events))
        for event in events:
            yield from chunk_kb_article(event)

    batch = [
        Incoming(SOURCE, 0, 0, b"kb-0", serde.encode(kb_article(0), SOURCE)),
        Incoming(SOURCE, 0, 1, b"bad", b"junk"),
        Incoming(SOURCE, 0, 2, b"kb-2", serde.encode(kb_article(2), SOURCE)),
    ]
    records = await _handler(serde, count_batch).handle_batch(batch)
    assert seen == [2]
    assert sorted(r.topic for r in records) == [
        "tribal.chunks",
        "tribal.chunks",
        "tribal.deadletter",
    ]


async def test_a_poison_event_in_a_batch_costs_only_itself(serde: EventSerde) -> None:
    def picky(events: Sequence[Event]) -> Iterable[Emit]:
        out: list[Emit] = []
        for event in events:
            assert isinstance(event, KbArticleUpserted)
            if event.article_id == "kb-1":
                raise ValueError("cannot embed kb-1")
            out.extend(chunk_kb_article(event))
        return out

    batch = [
        Incoming(SOURCE, 0, n, f"kb-{n}".encode(), serde.encode(kb_article(n), SOURCE))
        for n in range(3)
    ]
    records = await _handler(serde, picky).handle_batch(batch)
    dead = [_dead(serde, r.value) for r in records if r.topic == "tribal.deadletter"]
    assert [d.origin_offset for d in dead] == [1]
    assert "cannot embed kb-1" in dead[0].error_message
    assert sum(r.topic == "tribal.chunks" for r in records) == 2


async def test_an_emit_with_an_explicit_partition_keeps_it_for_the_producer(
    serde: EventSerde,
) -> None:
    def broadcast(event: Event) -> Iterable[Emit]:
        return [Emit("chunks", "all", DocumentRetracted(document_id="kb:x"), p) for p in (0, 1)]

    value = serde.encode(kb_article(7), SOURCE)
    records = await _handler(serde, broadcast).handle(SOURCE, 0, 1, b"kb-7", value)
    assert [(r.topic, r.key, r.partition) for r in records] == [
        ("tribal.chunks", b"all", 0),
        ("tribal.chunks", b"all", 1),
    ]


async def test_a_transient_failure_is_retried_and_the_record_is_not_dead_lettered(
    serde: EventSerde,
) -> None:
    flaky = Failing(ConnectionRefusedError(111, "the model server is restarting"), times=2)
    record = await _handled(serde, flaky)
    assert isinstance(serde.decode(record.value), DocumentChunked)
    assert flaky.calls == 3


async def test_a_data_failure_is_dead_lettered_at_once_with_its_own_code(
    serde: EventSerde,
) -> None:
    refuses = Failing(BadRecordError("the article is 40 MB of one line"))
    dead = await _dead_lettered(serde, refuses)
    assert dead.error_code == "INVALID_RECORD"
    assert "data failure" in dead.error_message
    assert refuses.calls == 1


async def test_an_unknown_failure_is_tried_a_bounded_number_of_times_then_dead_lettered(
    serde: EventSerde,
) -> None:
    broken = Failing(KeyError("surprise"))
    assert (await _dead_lettered(serde, broken)).error_code == "PROCESSING_FAILED"
    assert broken.calls == TribalSettings().unknown_failure_attempts
