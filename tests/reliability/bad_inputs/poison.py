"""The malformed-event corpus: raw values no agent can process, each with the dead
letter it must become. Shared by the pure decoder tests and the real-worker test."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from io import BytesIO

from fastavro import schemaless_writer

from events.memory import TurnRecorded
from events.registry.base import SchemaRegistry
from events.schemas import default_contracts, parse
from events.serde import EventSerde


@dataclass(frozen=True)
class Poison:
    """One hostile record value and the ``error_code`` its dead letter must carry."""

    name: str
    value: bytes
    code: str


def wire(schema_id: int, body: bytes) -> bytes:
    return struct.pack(">bI", 0, schema_id) + body


def _raw_turn(serde: EventSerde, topic: str, **overrides: object) -> bytes:
    """A TurnRecorded framed as some other producer might have written it."""
    turn = TurnRecorded(group_id="acme:s1", user_message="hi", agent_response="hello")
    header = serde.encode(turn, topic)[:5]
    body = BytesIO()
    schema = default_contracts()[TurnRecorded.avro_name].schema
    schemaless_writer(body, parse(schema), {**turn.model_dump(), **overrides})
    return header + body.getvalue()


def corpus(
    serde: EventSerde, registry: SchemaRegistry, kb_topic: str, turns_topic: str
) -> list[Poison]:
    """Every poison value for an agent reading ``kb_topic`` (the KB chunker)."""
    from devstack.pipeline import kb_article

    good = serde.encode(kb_article(1), kb_topic)
    alien = {"type": "record", "name": "Alien", "namespace": "other", "fields": []}
    alien_id = registry.register("other-other.Alien", alien)
    turn = serde.encode(
        TurnRecorded(group_id="acme:s1", user_message="hi", agent_response="hello"), turns_topic
    )
    return [
        Poison("random_bytes", b"\x93\x1f\xfe not avro at all \x00\x01", "NOT_WIRE_FORMAT"),
        Poison("empty_value", b"", "NOT_WIRE_FORMAT"),
        Poison("short_header", b"\x00\x00\x01", "NOT_WIRE_FORMAT"),
        Poison("wrong_magic_byte", b"\x01" + good[1:], "NOT_WIRE_FORMAT"),
        Poison("json_instead_of_avro", b'{"article_id": "kb-1"}', "NOT_WIRE_FORMAT"),
        Poison("unknown_schema_id", wire(987_654, b"\x02\x04"), "UNKNOWN_SCHEMA_ID"),
        Poison("truncated_avro", good[: len(good) // 2], "MALFORMED_PAYLOAD"),
        Poison("header_only", good[:5], "MALFORMED_PAYLOAD"),
        Poison("trailing_garbage", good + b"\xde\xad\xbe\xef", "MALFORMED_PAYLOAD"),
        Poison("foreign_record_type", wire(alien_id, b""), "UNKNOWN_EVENT_TYPE"),
        Poison(
            "newer_schema_version",
            _raw_turn(serde, turns_topic, schema_version=99),
            "NEWER_SCHEMA_VERSION",
        ),
        Poison(
            "model_violation", _raw_turn(serde, turns_topic, group_id="no-session"), "INVALID_EVENT"
        ),
        Poison("wrong_event_type_on_topic", turn, "UNEXPECTED_EVENT_TYPE"),
    ]
