"""Explicit versioning: upcasters chain old payloads up to the current version."""

from __future__ import annotations

import struct
from io import BytesIO
from pathlib import Path
from typing import ClassVar
from uuid import UUID

import pytest
from fastavro import schemaless_writer

from events.avrogen import avro_schema
from events.base import Event
from events.catalog import EVENT_TYPES
from events.registry.file import FileSchemaRegistry
from events.schemas import AvroContract, parse
from events.serde import DecodeError, EventSerde
from events.upcasting import UPCASTERS, NewerSchemaVersionError, Payload, UpcastError, Upcasters
from tests.events.samples import T0


class Thing(Event):
    """A test-only event at version 2: v1 had a comma-separated ``labels`` string."""

    avro_name: ClassVar[str] = "tribal.test.Thing"

    schema_version: int = 2
    name: str
    labels: str | None = None  # deprecated in v2, kept so v1 data still resolves
    tags: tuple[str, ...] = ()


upcasters = Upcasters()


@upcasters.register("tribal.test.Thing", from_version=1)
def upcast_v1_v2(payload: Payload) -> Payload:
    labels = payload.pop("labels") or ""
    return {**payload, "labels": None, "tags": [t for t in labels.split(",") if t]}


THING_V1 = {
    "type": "record",
    "name": "Thing",
    "namespace": "tribal.test",
    "fields": [
        {"name": "event_id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "occurred_at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "schema_version", "type": "long", "default": 1},
        {"name": "name", "type": "string"},
        {"name": "labels", "type": "string"},
    ],
}


def test_upcaster_turns_a_v1_payload_into_v2() -> None:
    v1 = {"schema_version": 1, "name": "x", "labels": "a,b"}
    assert upcasters.upcast("tribal.test.Thing", v1, 2) == {
        "schema_version": 2, "name": "x", "labels": None, "tags": ["a", "b"],
    }  # fmt: skip
    assert v1["labels"] == "a,b", "the input payload is not mutated"


def test_upcasters_chain_one_version_at_a_time() -> None:
    chain = Upcasters()
    seen: list[int] = []

    @chain.register("tribal.test.Chain", from_version=1)
    def one(payload: Payload) -> Payload:
        seen.append(payload["schema_version"])
        return {**payload, "steps": ["1->2"]}

    @chain.register("tribal.test.Chain", from_version=2)
    def two(payload: Payload) -> Payload:
        seen.append(payload["schema_version"])
        return {**payload, "steps": [*payload["steps"], "2->3"]}

    result = chain.upcast("tribal.test.Chain", {"schema_version": 1}, 3)
    assert result == {"schema_version": 3, "steps": ["1->2", "2->3"]}
    assert seen == [1, 2]
    assert chain.upcast("tribal.test.Chain", {"schema_version": 2, "steps": []}, 3)["steps"] == [
        "2->3"
    ]


def test_a_current_payload_is_left_alone() -> None:
    assert upcasters.upcast("tribal.test.Thing", {"schema_version": 2}, 2) == {"schema_version": 2}


def test_a_gap_in_the_chain_is_an_error_naming_the_step() -> None:
    with pytest.raises(UpcastError, match=r"no upcaster from v2 of tribal\.test\.Thing"):
        upcasters.upcast("tribal.test.Thing", {"schema_version": 1, "labels": ""}, 3)
    assert upcasters.missing([Thing]) == []
    assert Upcasters().missing([Thing]) == ["tribal.test.Thing v1->v2"]


def test_a_newer_payload_is_refused() -> None:
    with pytest.raises(NewerSchemaVersionError, match="schema_version 3"):
        upcasters.upcast("tribal.test.Thing", {"schema_version": 3}, 2)


def test_an_upcaster_is_registered_once() -> None:
    with pytest.raises(ValueError, match="exists"):
        upcasters.register("tribal.test.Thing", from_version=1)(upcast_v1_v2)


def test_every_versioned_event_has_a_complete_upcaster_chain() -> None:
    assert UPCASTERS.missing(EVENT_TYPES.values()) == []


def test_serde_resolves_then_upcasts_then_validates(tmp_path: Path) -> None:
    registry = FileSchemaRegistry(tmp_path)
    current = avro_schema(Thing)
    contract = AvroContract(Thing.avro_name, current, parse(current), tmp_path)
    serde = EventSerde(
        registry,
        event_types={Thing.avro_name: Thing},
        contracts={Thing.avro_name: contract},
        upcasters=upcasters,
    )
    v1_id = registry.register("tribal.things-tribal.test.Thing", THING_V1)
    body = BytesIO()
    record = {"event_id": UUID(int=7), "occurred_at": T0, "schema_version": 1, "name": "n",
              "labels": "red,blue"}  # fmt: skip
    schemaless_writer(body, parse(THING_V1), record)
    old = serde.decode(struct.pack(">bI", 0, v1_id) + body.getvalue())
    assert old == Thing(event_id=UUID(int=7), occurred_at=T0, name="n", tags=("red", "blue"))

    fresh = Thing(name="m", tags=("x",))
    assert serde.decode(serde.encode(fresh, "tribal.things")) == fresh

    without = EventSerde(
        registry, event_types={Thing.avro_name: Thing}, contracts={Thing.avro_name: contract}
    )
    with pytest.raises(DecodeError) as error:
        without.decode(struct.pack(">bI", 0, v1_id) + body.getvalue())
    assert error.value.code == "INVALID_EVENT"
    assert "no upcaster from v1" in error.value.message
