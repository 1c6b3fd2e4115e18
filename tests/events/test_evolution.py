"""Schemas evolve without breaking recorded data; what cannot decode says why."""

from __future__ import annotations

import copy
import json
import os
import struct
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from fastavro import schemaless_writer

from events.kb import KbArticleUpserted
from events.memory import TurnRecorded
from events.registry.compat import IncompatibleSchemaError, check_backward_compatible
from events.registry.file import FileSchemaRegistry
from events.schema import TableObserved
from events.schemas import default_contracts, parse
from events.serde import DecodeError, EventSerde, subject_name
from tests.events.samples import FULL

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "avro"
SUBJECT = subject_name("tribal.kb.articles", KbArticleUpserted)


def wire(schema_id: int, body: bytes) -> bytes:
    return struct.pack(">bI", 0, schema_id) + body


def current(name: str) -> dict[str, Any]:
    return copy.deepcopy(default_contracts()[name].schema)


def decode_error(serde: EventSerde, data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as error:
        serde.decode(data)
    return error.value


# --- recorded v1 data ---------------------------------------------------------------


@pytest.fixture
def recorded_v1(file_registry: FileSchemaRegistry) -> bytes:
    """The committed v1 bytes, framed with the id their writer schema gets today."""
    writer_schema = json.loads((FIXTURES / "kb_article_upserted_v1.avsc").read_text())
    schema_id = file_registry.register(SUBJECT, writer_schema)
    return wire(schema_id, (FIXTURES / "kb_article_upserted_v1.bin").read_bytes())


def test_recorded_v1_article_decodes_with_added_fields_defaulted(
    recorded_v1: bytes, serde: EventSerde
) -> None:
    article = serde.decode(recorded_v1)
    assert isinstance(article, KbArticleUpserted)
    assert article.article_id == "kb-001"
    assert article.title == "Apollo Not Hashing Troubleshooting"
    assert article.intent == ("not_hashing", "performance_issue")
    assert article.tenant == "futurebit"
    assert str(article.event_id) == "6f1c2a8e-3b1d-4c55-9a10-0d2c9b7e4f01"
    assert article.last_updated.isoformat() == "2024-12-15T10:00:00+00:00"
    assert (article.device, article.author, article.notes) == ((), None, ())  # added later


def test_current_schema_registers_after_v1_and_old_bytes_still_decode(
    recorded_v1: bytes, serde: EventSerde, file_registry: FileSchemaRegistry
) -> None:
    article = next(e for e in FULL if isinstance(e, KbArticleUpserted))
    new_bytes = serde.encode(article, "tribal.kb.articles")
    latest = file_registry.latest(SUBJECT)
    assert latest is not None
    assert latest[0] == struct.unpack(">I", new_bytes[1:5])[0]
    assert serde.decode(new_bytes) == article
    old = serde.decode(recorded_v1)
    assert isinstance(old, KbArticleUpserted)
    assert old.author is None


@pytest.mark.parametrize(
    "name",
    ["tribal.kb.KbArticleUpserted", "tribal.files.FileChanged", "tribal.files.FileSkipped",
     "tribal.schema.TableObserved"],
)  # fmt: skip
def test_events_written_before_notes_existed_decode_with_no_notes(
    name: str, serde: EventSerde, file_registry: FileSchemaRegistry
) -> None:
    event = next(e for e in FULL if e.avro_name == name)
    before = current(name)
    before["fields"] = [f for f in before["fields"] if f["name"] != "notes"]
    check_backward_compatible(before, current(name))
    topic = "tribal.evolution"
    schema_id = file_registry.register(subject_name(topic, type(event)), before)
    body = BytesIO()
    record = {k: v for k, v in event.model_dump().items() if k != "notes"}
    schemaless_writer(body, parse(before), record)
    old = serde.decode(wire(schema_id, body.getvalue()))
    assert old == event.model_copy(update={"notes": ()})


def test_tables_observed_before_partitions_existed_decode_as_not_partitioned(
    serde: EventSerde, file_registry: FileSchemaRegistry
) -> None:
    event = next(e for e in FULL if isinstance(e, TableObserved))
    assert event.partitions  # the sample is partitioned: the defaults must replace it
    added = {"partition_key", "partitions"}
    before = current(event.avro_name)
    before["fields"] = [f for f in before["fields"] if f["name"] not in added]
    check_backward_compatible(before, current(event.avro_name))
    schema_id = file_registry.register(subject_name("tribal.evolution", TableObserved), before)
    body = BytesIO()
    schemaless_writer(body, parse(before), event.model_dump(exclude=added))
    old = serde.decode(wire(schema_id, body.getvalue()))
    assert old == event.model_copy(update={"partition_key": None, "partitions": ()})


# --- incompatible changes name the field --------------------------------------------


def test_adding_a_field_without_default_names_the_field() -> None:
    old = current("tribal.kb.KbArticleUpserted")
    new = copy.deepcopy(old)
    new["fields"].append({"name": "priority", "type": "long"})
    with pytest.raises(IncompatibleSchemaError, match="'priority' was added without a default"):
        check_backward_compatible(old, new)
    new["fields"][-1]["default"] = 0
    check_backward_compatible(old, new)


def test_changing_a_field_type_names_the_field() -> None:
    old = current("tribal.kb.KbArticleUpserted")
    new = copy.deepcopy(old)
    next(f for f in new["fields"] if f["name"] == "title")["type"] = "long"
    with pytest.raises(IncompatibleSchemaError, match="'title': type changed from string to long"):
        check_backward_compatible(old, new)


def test_a_nested_type_change_names_the_path() -> None:
    old = current("tribal.schema.TableObserved")
    new = copy.deepcopy(old)
    column = next(f for f in new["fields"] if f["name"] == "columns")["type"]["items"]
    next(f for f in column["fields"] if f["name"] == "nullable")["type"] = "string"
    with pytest.raises(IncompatibleSchemaError, match=r"'columns\[\]\.nullable'") as error:
        check_backward_compatible(old, new)
    assert error.value.field == "columns[].nullable"


def test_making_an_optional_field_required_is_incompatible() -> None:
    old = current("tribal.kb.KbArticleUpserted")
    new = copy.deepcopy(old)
    author = next(f for f in new["fields"] if f["name"] == "author")
    author["type"], author["default"] = "string", ""
    with pytest.raises(IncompatibleSchemaError, match=r"'author'.*null"):
        check_backward_compatible(old, new)


def test_promotions_removals_and_optional_widening_are_compatible() -> None:
    old = {
        "type": "record", "name": "T", "namespace": "tribal.test",
        "fields": [
            {"name": "n", "type": "int"},
            {"name": "gone", "type": "string"},
            {"name": "s", "type": "string"},
        ],
    }  # fmt: skip
    new = {
        "type": "record", "name": "T", "namespace": "tribal.test",
        "fields": [
            {"name": "n", "type": "long"},
            {"name": "s", "type": ["null", "string"], "default": None},
        ],
    }  # fmt: skip
    check_backward_compatible(old, new)
    with pytest.raises(IncompatibleSchemaError, match="'n'"):
        check_backward_compatible(new, old)


def test_removing_an_enum_symbol_names_the_field() -> None:
    def schema(*symbols: str) -> dict[str, Any]:
        enum = {"type": "enum", "name": "Kind", "symbols": list(symbols)}
        return {"type": "record", "name": "T", "fields": [{"name": "kind", "type": enum}]}

    check_backward_compatible(schema("a"), schema("a", "b"))
    with pytest.raises(IncompatibleSchemaError, match=r"'kind': enum symbols \['b'\]"):
        check_backward_compatible(schema("a", "b"), schema("a"))


def test_every_current_contract_is_compatible_with_itself() -> None:
    for contract in default_contracts().values():
        check_backward_compatible(contract.schema, contract.schema)


# --- decode errors ------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x00\x00\x01", b"\x01\x00\x00\x00\x01abc"])
def test_bytes_without_the_wire_header_are_not_wire_format(data: bytes, serde: EventSerde) -> None:
    assert decode_error(serde, data).code == "NOT_WIRE_FORMAT"


def test_random_bytes_are_rejected(serde: EventSerde) -> None:
    noise = b"\x7f" + os.urandom(64)
    assert decode_error(serde, noise).code == "NOT_WIRE_FORMAT"


def test_an_unregistered_schema_id_is_reported(serde: EventSerde) -> None:
    error = decode_error(serde, wire(4242, b"\x02"))
    assert error.code == "UNKNOWN_SCHEMA_ID"
    assert "4242" in error.message


def test_a_schema_for_an_unknown_event_type_is_reported(
    serde: EventSerde, file_registry: FileSchemaRegistry
) -> None:
    alien = {"type": "record", "name": "Alien", "namespace": "other", "fields": []}
    schema_id = file_registry.register("t-other.Alien", alien)
    error = decode_error(serde, wire(schema_id, b""))
    assert error.code == "UNKNOWN_EVENT_TYPE"
    assert "other.Alien" in error.message


@pytest.mark.parametrize("event", FULL[:8], ids=lambda e: type(e).__name__)
def test_truncated_payloads_are_malformed(event: Any, serde: EventSerde) -> None:
    data = serde.encode(event, "tribal.test")
    for end in (5, 6, len(data) // 2, len(data) - 1):
        assert decode_error(serde, data[:end]).code == "MALFORMED_PAYLOAD"


def test_garbage_after_a_valid_header_is_malformed(serde: EventSerde) -> None:
    data = serde.encode(FULL[0], "tribal.test")
    assert decode_error(serde, data[:5] + b"\xff" * 40).code == "MALFORMED_PAYLOAD"
    assert decode_error(serde, data + b"\x00").code == "MALFORMED_PAYLOAD"  # trailing bytes


def _raw(serde: EventSerde, event: TurnRecorded, **overrides: Any) -> bytes:
    """Frame a record as some other producer might have written it."""
    data = serde.encode(event, "tribal.memory.turns")
    body = BytesIO()
    schema = default_contracts()[TurnRecorded.avro_name].schema
    schemaless_writer(body, parse(schema), {**event.model_dump(), **overrides})
    return data[:5] + body.getvalue()


def test_a_newer_schema_version_is_reported(serde: EventSerde) -> None:
    turn = TurnRecorded(group_id="t:s", user_message="hi", agent_response="hello")
    error = decode_error(serde, _raw(serde, turn, schema_version=2))
    assert error.code == "NEWER_SCHEMA_VERSION"
    assert "schema_version 2" in error.message


def test_a_payload_violating_the_model_is_an_invalid_event(serde: EventSerde) -> None:
    turn = TurnRecorded(group_id="t:s", user_message="hi", agent_response="hello")
    error = decode_error(serde, _raw(serde, turn, group_id="no-session"))
    assert error.code == "INVALID_EVENT"
    assert "group_id must be 'tenant:session'" in error.message
