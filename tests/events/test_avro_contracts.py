"""Every committed .avsc matches its pydantic model, and every event round-trips."""

from __future__ import annotations

import json
import types
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AwareDatetime, BaseModel
from pydantic_core import PydanticUndefined

from events.avrogen import avro_schema, avsc_path
from events.base import Event
from events.catalog import EVENT_TYPES
from events.chunks import Chunk, DocumentChunked
from events.kb import KbArticleUpserted
from events.memory import EpisodeRecorded
from events.schemas import avro_dir, default_contracts
from events.serde import EventSerde
from events.types import AvroFloat32
from tests.events.samples import ALL

EVENTS = sorted(EVENT_TYPES.values(), key=lambda t: t.avro_name)
TIMESTAMP = {"type": "long", "logicalType": "timestamp-micros"}
SIMPLE: dict[Any, tuple[Any, ...]] = {
    str: ("string",),
    int: ("long", "int"),
    float: ("double",),
    bool: ("boolean",),
    bytes: ("bytes",),
    UUID: ({"type": "string", "logicalType": "uuid"},),
    datetime: (TIMESTAMP,),
    AwareDatetime: (TIMESTAMP,),
}


def _named_types(node: Any, found: dict[str, Any]) -> dict[str, Any]:
    if isinstance(node, list):
        for branch in node:
            _named_types(branch, found)
    elif isinstance(node, dict):
        if node.get("type") == "record":
            found[node["name"]] = found[f"{node['namespace']}.{node['name']}"] = node
            for field in node["fields"]:
                _named_types(field["type"], found)
        for key in ("items", "values"):
            _named_types(node.get(key), found)
    return found


def assert_type_matches(tp: Any, avro: Any, names: dict[str, Any], where: str) -> None:
    """An independent reading of the conventions in events/avrogen.py."""
    avro = names.get(avro, avro) if isinstance(avro, str) else avro
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        if any(isinstance(marker, AvroFloat32) for marker in args[1:]):
            assert avro == {"type": "array", "items": "float"}, f"{where}: float32 vector"
            return
        assert_type_matches(args[0], avro, names, where)
    elif origin in (Union, types.UnionType):
        assert type(None) in args, f"{where}: only optionals may be unions"
        assert isinstance(avro, list), f"{where}: optional must be a union on the wire"
        assert len(avro) == 2, f"{where}: expected ['null', T]"
        assert avro[0] == "null", f"{where}: expected ['null', T]"
        (inner,) = (a for a in args if a is not type(None))
        assert_type_matches(inner, avro[1], names, where)
    elif origin in (list, tuple):
        assert avro["type"] == "array", where
        assert_type_matches(args[0], avro["items"], names, f"{where}[]")
    elif origin is dict:
        assert args[0] is str, where
        assert avro["type"] == "map", where
        assert_type_matches(args[1], avro["values"], names, f"{where}{{}}")
    elif origin is Literal:
        assert avro == "string", where
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        assert_record_matches(tp, avro, names, where)
    else:
        assert avro in SIMPLE[tp], f"{where}: {tp} is not carried by {avro}"


def assert_record_matches(
    model: type[BaseModel], record: dict[str, Any], names: dict[str, Any], where: str
) -> None:
    assert record["type"] == "record", where
    assert record["name"] == model.__name__, where
    assert record.get("doc"), f"{where}: record {model.__name__} needs a doc"
    assert [f["name"] for f in record["fields"]] == list(model.model_fields), where
    for field in record["fields"]:
        info = model.model_fields[field["name"]]
        path = f"{where}.{field['name']}"
        annotation: Any = info.annotation
        if info.metadata:  # pydantic moves a field's own Annotated[...] extras here
            annotation = Annotated[(annotation, *info.metadata)]
        assert_type_matches(annotation, field["type"], names, path)
        if info.is_required():
            assert "default" not in field, f"{path}: required in the model, defaulted on the wire"
        elif info.default is not PydanticUndefined:
            default = list(info.default) if isinstance(info.default, tuple) else info.default
            assert field.get("default") == default, f"{path}: defaults differ"
        elif info.default_factory in (list, tuple, dict):
            assert field.get("default") in ([], {}), f"{path}: empty collection default"


@pytest.mark.parametrize("event_type", EVENTS, ids=lambda t: t.__name__)
def test_every_event_has_a_committed_avsc_matching_its_model(event_type: type[Event]) -> None:
    path = avsc_path(avro_dir(), event_type)
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert f"{schema['namespace']}.{schema['name']}" == event_type.avro_name
    assert_record_matches(event_type, schema, _named_types(schema, {}), event_type.__name__)
    version = next(f for f in schema["fields"] if f["name"] == "schema_version")
    assert version["default"] == event_type.current_version()
    assert version["doc"]


@pytest.mark.parametrize("event_type", EVENTS, ids=lambda t: t.__name__)
def test_committed_avsc_is_what_the_generator_writes(event_type: type[Event]) -> None:
    committed = default_contracts()[event_type.avro_name].schema
    assert committed == avro_schema(event_type), "run: python -m devstack.gen_avro"


def test_no_avsc_without_an_event_model() -> None:
    assert set(default_contracts()) == set(EVENT_TYPES)


@pytest.mark.parametrize("event", ALL, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_the_wire_format(event: Event, serde: EventSerde) -> None:
    data = serde.encode(event, "tribal.test")
    assert data[0] == 0
    assert serde.decode(data) == event


def _aware_datetimes() -> st.SearchStrategy[datetime]:
    offsets = st.builds(timezone, st.timedeltas(timedelta(hours=-12), timedelta(hours=12)))
    return st.datetimes(
        min_value=datetime(1900, 1, 2), max_value=datetime(2200, 1, 1), timezones=offsets
    )


_words = st.lists(st.text(max_size=12), max_size=4)
_metadata = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    article=st.builds(
        KbArticleUpserted,
        article_id=st.text(min_size=1),
        title=st.text(),
        url=st.text(),
        content=st.text(max_size=2000),
        intent=_words,
        device=_words,
        last_updated=_aware_datetimes(),
        author=st.none() | st.text(),
        occurred_at=_aware_datetimes(),
    )
)
def test_any_kb_article_round_trips(article: KbArticleUpserted, serde: EventSerde) -> None:
    assert serde.decode(serde.encode(article, "tribal.kb.articles")) == article


_chunks = st.lists(
    st.builds(
        Chunk,
        chunk_id=st.text(),
        index=st.integers(0, 2**40),
        text=st.text(),
        start_line=st.none() | st.integers(-(2**63), 2**63 - 1),
        end_line=st.none() | st.integers(0, 10**6),
        symbol=st.none() | st.text(),
        kind=st.text(),
        metadata=_metadata,
    ),
    max_size=5,
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chunks=_chunks,
    vector=st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=16),
)
def test_any_chunked_document_and_episode_round_trip(
    chunks: list[Chunk], vector: list[float], serde: EventSerde
) -> None:
    document = DocumentChunked(
        document_id="d", document_version="v", source_type="file", chunked_by="x", chunks=chunks
    )
    episode = EpisodeRecorded(
        group_id="t:s", episode_id=UUID(int=1), source_event_id=UUID(int=2), content="c",
        content_type="message", source="user", embedding=vector, embedding_model="m",
        occurred_at=datetime.now(UTC),
    )  # fmt: skip
    assert serde.decode(serde.encode(document, "tribal.chunks")) == document
    assert serde.decode(serde.encode(episode, "tribal.memory.episodes")) == episode
