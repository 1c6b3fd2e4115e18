"""Malformed events: each becomes a dead letter with the right code, and the stream goes on.

The pure half runs every poison value through :class:`streams.wiring.Handler` (what a
worker runs per record); the slow half produces them all onto a real topic in front
of a real ``tribal worker`` and reads ``tribal.deadletter`` back.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devstack import Broker
from devstack.pipeline import (
    Pipeline,
    WorkerProcess,
    eventually,
    isolated_settings,
    kb_article,
)
from events.base import Event
from events.chunks import DocumentChunked
from events.deadletter import DeadLettered
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.registry.file import FileSchemaRegistry
from events.serde import DecodeError, DecodeErrorCode, EventSerde
from runtime.settings import TribalSettings
from streams.chunker.kb import chunk_kb_article
from streams.wiring import Emit, Handler, ProcessingError
from tests.reliability.bad_inputs.poison import Poison, corpus, wire

KB = "tribal.kb.articles"
TURNS = "tribal.memory.turns"
DECODE_CODES = set(get_args(DecodeErrorCode))


@pytest.fixture
def registry(tmp_path: Path) -> FileSchemaRegistry:
    return FileSchemaRegistry(tmp_path / "schemas")


@pytest.fixture
def serde(registry: FileSchemaRegistry) -> EventSerde:
    return EventSerde(registry)


def _handler(serde: EventSerde, tmp_path: Path, processor: object = chunk_kb_article) -> Handler:
    settings = TribalSettings(data_dir=tmp_path, topic_prefix="tribal.")
    return Handler(
        "kb_chunker",
        processor,  # type: ignore[arg-type]
        (KbArticleUpserted, KbArticleDeleted),
        serde,
        settings,
    )


POISON_NAMES = [
    "random_bytes",
    "empty_value",
    "short_header",
    "wrong_magic_byte",
    "json_instead_of_avro",
    "unknown_schema_id",
    "truncated_avro",
    "header_only",
    "trailing_garbage",
    "foreign_record_type",
    "newer_schema_version",
    "model_violation",
    "wrong_event_type_on_topic",
]


def _by_name(serde: EventSerde, registry: FileSchemaRegistry) -> dict[str, Poison]:
    return {p.name: p for p in corpus(serde, registry, KB, TURNS)}


def test_the_corpus_names_every_case_once(serde: EventSerde, registry: FileSchemaRegistry) -> None:
    assert sorted(_by_name(serde, registry)) == sorted(POISON_NAMES)


@pytest.mark.parametrize("name", POISON_NAMES)
async def test_a_poison_record_becomes_a_dead_letter_with_its_reason_and_its_bytes(
    name: str, serde: EventSerde, registry: FileSchemaRegistry, tmp_path: Path
) -> None:
    poison = _by_name(serde, registry)[name]
    handler = _handler(serde, tmp_path)
    [record] = await handler.handle(KB, 2, 41, b"key-" + name.encode(), poison.value)
    assert record.topic == "tribal.deadletter"
    letter = serde.decode(record.value)
    assert isinstance(letter, DeadLettered)
    assert letter.error_code == poison.code, letter.error_message
    assert letter.error_message.startswith("[kb_chunker] ")
    assert (letter.origin_topic, letter.origin_partition, letter.origin_offset) == (KB, 2, 41)
    assert letter.origin_key == f"key-{name}"
    assert letter.payload == poison.value  # kept byte for byte: replayable after a fix


async def test_a_processor_that_crashes_costs_only_its_own_record(
    serde: EventSerde, tmp_path: Path
) -> None:
    def explode(event: Event) -> Iterable[Emit]:
        if isinstance(event, KbArticleUpserted) and event.article_id == "kb-666":
            raise RuntimeError("the chunker met a bug")
        return chunk_kb_article(event)

    handler = _handler(serde, tmp_path, explode)
    bad = serde.encode(kb_article(666), KB)
    good = serde.encode(kb_article(1), KB)
    [dead] = await handler.handle(KB, 0, 0, b"kb-666", bad)
    [chunked] = await handler.handle(KB, 0, 1, b"kb-1", good)
    letter = serde.decode(dead.value)
    assert isinstance(letter, DeadLettered)
    assert letter.error_code == "PROCESSING_FAILED"
    assert "RuntimeError: the chunker met a bug" in letter.error_message
    assert isinstance(serde.decode(chunked.value), DocumentChunked)


async def test_a_processor_refusal_keeps_its_own_code(serde: EventSerde, tmp_path: Path) -> None:
    def refuse(event: Event) -> Iterable[Emit]:
        raise ProcessingError("DOCUMENT_TOO_LARGE", "over the cap")

    handler = _handler(serde, tmp_path, refuse)
    [dead] = await handler.handle(KB, 0, 0, b"kb-1", serde.encode(kb_article(1), KB))
    letter = serde.decode(dead.value)
    assert isinstance(letter, DeadLettered)
    assert (letter.error_code, letter.error_message) == (
        "DOCUMENT_TOO_LARGE",
        "[kb_chunker] over the cap",
    )


async def test_one_poison_record_in_a_batch_costs_only_itself(
    serde: EventSerde, registry: FileSchemaRegistry, tmp_path: Path
) -> None:
    from streams.wiring import Incoming

    def batch_chunker(events: list[Event]) -> list[Emit]:
        return [e for event in events for e in chunk_kb_article(event)]

    handler = _handler(serde, tmp_path, batch_chunker)
    poison = _by_name(serde, registry)
    batch = [
        Incoming(KB, 0, 0, b"kb-1", serde.encode(kb_article(1), KB)),
        Incoming(KB, 0, 1, b"bad", poison["truncated_avro"].value),
        Incoming(KB, 0, 2, b"kb-2", serde.encode(kb_article(2), KB)),
    ]
    out = [serde.decode(r.value) for r in await handler.handle_batch(batch)]
    assert [type(e).__name__ for e in out] == ["DeadLettered", "DocumentChunked", "DocumentChunked"]


# -- fuzzing: the decoder raises DecodeError and nothing else -----------------------------


_FUZZ_REGISTRY = FileSchemaRegistry(Path(tempfile.mkdtemp(prefix="tribal-fuzz-")) / "schemas")
_FUZZ_SERDE = EventSerde(_FUZZ_REGISTRY)
_SEEDS = [
    _FUZZ_SERDE.encode(kb_article(1), KB),
    _FUZZ_SERDE.encode(KbArticleDeleted(article_id="x"), KB),
]


def _decode_or_decode_error(data: bytes) -> None:
    code: str | None = None
    try:
        event = _FUZZ_SERDE.decode(data)
    except DecodeError as exc:
        code = exc.code
    else:
        assert isinstance(event, Event)
    assert code is None or code in DECODE_CODES


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=512))
def test_fuzzed_bytes_decode_or_raise_decode_error_only(data: bytes) -> None:
    _decode_or_decode_error(data)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.sampled_from(_SEEDS),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
    cut=st.integers(0, 10_000),
    tail=st.binary(max_size=16),
)
def test_mutated_real_events_decode_or_raise_decode_error_only(
    seed: bytes, flips: list[tuple[int, int]], cut: int, tail: bytes
) -> None:
    data = bytearray(seed)
    for at, byte in flips:
        if len(data) > 5:  # keep the header: exercise the Avro body and the model
            data[5 + at % (len(data) - 5)] = byte
    _decode_or_decode_error(bytes(data[: max(5, cut % (len(data) + 1))]) + tail)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(schema_id=st.integers(0, 2**32 - 1), body=st.binary(max_size=64))
def test_any_schema_id_with_any_body_is_a_decode_error_or_an_event(
    schema_id: int, body: bytes
) -> None:
    _decode_or_decode_error(wire(schema_id, body))


# -- through a real worker ---------------------------------------------------------------


@pytest.mark.slow
async def test_a_real_worker_dead_letters_every_poison_record_and_processes_the_next_one(
    broker: Broker, tmp_path: Path
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path, default_partitions=1))
    await pipeline.create_topics()
    kb = pipeline.topic("kb.articles")
    poisons = corpus(
        pipeline.serde,
        FileSchemaRegistry(pipeline.settings.data_dir / "schemas"),
        kb,
        pipeline.topic("memory.turns"),
    )
    items: list[tuple[str, Event | bytes]] = []
    for n, poison in enumerate(poisons):
        items += [(poison.name, poison.value), (f"kb-{n}", kb_article(n))]
    await pipeline.produce("kb.articles", items)
    with WorkerProcess(pipeline.settings, tmp_path / "worker.log") as worker:

        async def settled() -> bool:
            assert worker.proc is not None
            assert worker.proc.poll() is None, worker.log()
            chunks = await pipeline.read_all("chunks")
            return len(chunks) >= len(poisons) and len(
                await pipeline.read_all("deadletter")
            ) >= len(poisons)

        await eventually(settled, timeout=80)
    dead = [d for d in await pipeline.decoded("deadletter") if isinstance(d, DeadLettered)]
    by_key = {d.origin_key: d for d in dead}
    for poison in poisons:
        letter = by_key[poison.name]
        assert letter.error_code == poison.code, (poison.name, letter.error_message)
        assert letter.payload == poison.value
        assert letter.origin_topic == kb
    chunked = {
        c.document_id for c in await pipeline.decoded("chunks") if isinstance(c, DocumentChunked)
    }
    # every good record right after a poison one was processed
    assert chunked == {f"kb:kb-{n}" for n in range(len(poisons))}
