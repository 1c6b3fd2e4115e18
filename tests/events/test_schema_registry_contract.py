"""One contract for every SchemaRegistry adapter (file; HTTP against the real server)."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from events.registry import registry_from_settings
from events.registry.base import InvalidSchemaError, SchemaNotFoundError, SchemaRegistry
from events.registry.compat import IncompatibleSchemaError
from events.registry.file import FileSchemaRegistry
from events.registry.http import ConfluentHttpRegistry
from events.schemas import default_contracts
from events.serde import EventSerde
from runtime.settings import TribalSettings
from tests.events.conftest import RegistryServer
from tests.events.samples import FULL


def record(*fields: dict[str, Any], name: str = "Thing") -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": "tribal.test", "fields": list(fields)}


V1 = record({"name": "a", "type": "string"})
V2 = record({"name": "a", "type": "string"}, {"name": "b", "type": "long", "default": 0})


def test_a_registered_schema_can_be_fetched_by_its_id(registry: SchemaRegistry) -> None:
    schema_id = registry.register("s-tribal.test.Thing", V1)
    assert registry.get_by_id(schema_id) == V1


def test_registering_the_same_schema_again_returns_the_same_id(registry: SchemaRegistry) -> None:
    first = registry.register("s", V1)
    assert registry.register("s", V1) == first
    assert registry.register("s", dict(reversed(list(V1.items())))) == first  # key order
    assert registry.register("other", V1) == first
    assert registry.subjects() == ["other", "s"]


def test_different_schemas_get_different_ids(registry: SchemaRegistry) -> None:
    assert registry.register("s", V1) != registry.register("t", record(name="Other"))


def test_latest_is_the_newest_version_of_a_subject(registry: SchemaRegistry) -> None:
    assert registry.latest("s") is None
    registry.register("s", V1)
    second = registry.register("s", V2)
    assert registry.latest("s") == (second, V2)
    assert registry.register("s", V1) != second  # an old version keeps its id...
    assert registry.latest("s") == (second, V2)  # ...and does not become the latest


def test_subjects_lists_every_subject_sorted(registry: SchemaRegistry) -> None:
    assert registry.subjects() == []
    registry.register("b-subject", V1)
    registry.register("a-subject", V2)
    assert registry.subjects() == ["a-subject", "b-subject"]


def test_an_unknown_id_is_not_found(registry: SchemaRegistry) -> None:
    with pytest.raises(SchemaNotFoundError):
        registry.get_by_id(999)


def test_an_incompatible_version_is_rejected_naming_the_field(registry: SchemaRegistry) -> None:
    first = registry.register("s", V1)
    no_default = record({"name": "a", "type": "string"}, {"name": "priority", "type": "long"})
    with pytest.raises(IncompatibleSchemaError, match="'priority'"):
        registry.register("s", no_default)
    retyped = record({"name": "a", "type": "long"})
    with pytest.raises(IncompatibleSchemaError, match=r"'a'.*string.*long"):
        registry.register("s", retyped)
    assert registry.latest("s") == (first, V1)
    assert registry.register("elsewhere", no_default) > 0  # compatibility is per subject


def test_an_invalid_schema_is_rejected(registry: SchemaRegistry) -> None:
    with pytest.raises(InvalidSchemaError):
        registry.register("s", {"type": "record", "name": "X", "fields": [{"name": "a"}]})


def test_the_serde_works_over_the_adapter(registry: SchemaRegistry) -> None:
    serde = EventSerde(registry)
    for event in FULL:
        assert serde.decode(serde.encode(event, "tribal.test")) == event
    assert EventSerde(registry).decode(serde.encode(FULL[0], "tribal.test")) == FULL[0]


# --- adapter-specific behaviour -------------------------------------------------


def test_file_registry_ids_survive_a_restart(tmp_path: Path) -> None:
    first = FileSchemaRegistry(tmp_path)
    ids = [first.register("s", V1), first.register("s", V2)]
    again = FileSchemaRegistry(tmp_path)
    assert [again.get_by_id(i) for i in ids] == [V1, V2]
    assert again.register("s", V2) == ids[1]
    assert again.register("t", record(name="New")) == ids[1] + 1


def test_file_registry_sees_schemas_registered_by_another_instance(tmp_path: Path) -> None:
    reader, writer = FileSchemaRegistry(tmp_path), FileSchemaRegistry(tmp_path)
    assert reader.subjects() == []
    schema_id = writer.register("s", V1)
    assert reader.get_by_id(schema_id) == V1
    assert reader.latest("s") == (schema_id, V1)


def _register_many(directory: str, worker: int) -> list[int]:
    registry = FileSchemaRegistry(directory)
    return [registry.register(f"w{worker}-{n}", record(name=f"T{worker}x{n}")) for n in range(15)]


def test_file_registry_is_safe_for_concurrent_processes(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=4, mp_context=context) as pool:
        results = list(pool.map(_register_many, [str(tmp_path)] * 4, range(4)))
    ids = sorted(i for worker_ids in results for i in worker_ids)
    assert ids == list(range(1, 61))  # sequential, none lost, none duplicated
    assert len(FileSchemaRegistry(tmp_path).subjects()) == 60


def test_http_registry_speaks_the_confluent_wire_protocol(
    registry_server: RegistryServer, http_registry: ConfluentHttpRegistry
) -> None:
    schema_id = http_registry.register("s", V1)
    body = httpx.get(f"{registry_server.url}/schemas/ids/{schema_id}").json()
    assert set(body) == {"schema"}
    assert isinstance(body["schema"], str)
    missing = httpx.get(f"{registry_server.url}/subjects/nope/versions/latest")
    assert missing.status_code == 404
    assert missing.json()["error_code"] == 40401
    latest = httpx.get(f"{registry_server.url}/subjects/s/versions/latest").json()
    assert latest["id"] == schema_id
    assert latest["subject"] == "s"


def test_settings_choose_the_file_registry_unless_a_url_is_given(tmp_path: Path) -> None:
    embedded = registry_from_settings(TribalSettings(data_dir=tmp_path))
    assert isinstance(embedded, FileSchemaRegistry)
    remote = registry_from_settings(
        TribalSettings(data_dir=tmp_path, schema_registry_url="http://127.0.0.1:1")
    )
    assert isinstance(remote, ConfluentHttpRegistry)
    remote.close()


def test_the_http_registry_refuses_a_schema_tribal_could_not_read_under_its_record_name(
    registry_server: RegistryServer, http_registry: ConfluentHttpRegistry
) -> None:
    subject = "tribal.deadletter-tribal.deadletter.DeadLettered"
    squat = record({"name": "x", "type": "string"}, name="DeadLettered")
    resp = httpx.post(
        f"{registry_server.url}/subjects/{subject}/versions",
        json={"schema": json.dumps(squat)},
    )
    assert resp.status_code == 409
    assert "tribal.deadletter.DeadLettered" in resp.json()["message"]
    own = default_contracts()["tribal.deadletter.DeadLettered"].schema
    assert http_registry.register(subject, own) >= 1  # Tribal's own still registers there
