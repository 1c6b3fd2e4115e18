from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from uuid import UUID

import pytest
from pydantic import ValidationError

from events.base import Event
from events.catalog import EVENT_TYPES, TOPIC_EVENTS
from events.chunks import ChunksEmbedded, ChunkVector
from events.kb import KbArticleUpserted
from events.memory import EpisodeRecorded, TurnRecorded
from tests.events.samples import FULL, SHA, T0, U1, U2


def turn(group_id: str) -> TurnRecorded:
    return TurnRecorded(group_id=group_id, user_message="hi", agent_response="hello")


def test_every_event_in_the_topic_table_has_a_model() -> None:
    names = {name.rpartition(".")[2] for name in EVENT_TYPES}
    assert names == {
        "TableObserved", "TableDropped", "FileChanged", "FileDeleted", "FileSkipped",
        "KbArticleUpserted", "KbArticleDeleted", "TurnRecorded", "SystemEventRecorded",
        "MemoryForgotten", "TableDocumented", "DomainDocumented", "DocumentChunked",
        "DocumentRetracted", "ChunksEmbedded", "EpisodeRecorded", "EntitiesExtracted",
        "EntityMerged", "RelationshipAsserted", "RelationshipInvalidated", "SummaryCreated",
        "DeadLettered",
    }  # fmt: skip
    assert {t for types in TOPIC_EVENTS.values() for t in types} == set(EVENT_TYPES.values())


@pytest.mark.parametrize("event", FULL, ids=lambda e: type(e).__name__)
def test_events_are_immutable(event: Event) -> None:
    with pytest.raises(ValidationError, match="frozen"):
        event.event_id = U2  # type: ignore[misc]


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        TurnRecorded(group_id="t:s", user_message="", agent_response="", mood="happy")  # type: ignore[call-arg]


def test_events_get_a_fresh_id_and_the_current_utc_time_by_default() -> None:
    first, second = turn("t:s"), turn("t:s")
    assert first.event_id != second.event_id
    assert first.occurred_at.tzinfo is UTC
    assert abs(datetime.now(UTC) - first.occurred_at) < timedelta(seconds=5)
    assert first.schema_version == TurnRecorded.current_version() == 1


def test_datetimes_are_normalised_to_utc() -> None:
    local = datetime(2025, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    event = TurnRecorded(group_id="t:s", user_message="", agent_response="", occurred_at=local)
    assert event.occurred_at == local
    assert event.occurred_at.tzinfo is UTC
    assert event.occurred_at.hour == 10


def test_naive_datetimes_are_rejected() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        TurnRecorded(
            group_id="t:s", user_message="", agent_response="", occurred_at=datetime(2025, 1, 1)
        )


@pytest.mark.parametrize("group_id", ["acme:s-1", "a.b_c-d:1.2_3-x", "A:b"])
def test_group_id_accepts_tenant_colon_session(group_id: str) -> None:
    event = turn(group_id)
    tenant, session = group_id.split(":")
    assert (event.tenant, event.session_id) == (tenant, session)


@pytest.mark.parametrize(
    "group_id", ["", "acme", ":s", "acme:", "acme:s:x", "ac me:s", "acme:s/1", "é:s"]
)
def test_group_id_must_be_tenant_colon_session(group_id: str) -> None:
    with pytest.raises(ValidationError, match="group_id must be 'tenant:session'"):
        turn(group_id)


def test_group_id_is_required_on_memory_events() -> None:
    with pytest.raises(ValidationError, match="group_id"):
        TurnRecorded(user_message="", agent_response="")  # type: ignore[call-arg]


def test_tenant_defaults_and_is_validated() -> None:
    article: dict[str, Any] = dict(article_id="a", title="t", url="u", content="", last_updated=T0)
    assert KbArticleUpserted(**article).tenant == "default"
    with pytest.raises(ValidationError, match="tenant"):
        KbArticleUpserted(tenant="no spaces", **article)


def test_an_old_schema_version_cannot_become_a_model_without_upcasting() -> None:
    with pytest.raises(ValidationError, match="upcast older payloads first"):
        TurnRecorded(group_id="t:s", user_message="", agent_response="", schema_version=0)


def test_an_episode_has_an_embedding_or_the_reason_it_has_none() -> None:
    base: dict[str, Any] = {
        "group_id": "t:s",
        "episode_id": U1,
        "source_event_id": U2,
        "content": "",
        "content_type": "message",
        "source": "user",
    }
    with pytest.raises(ValidationError, match="exactly one of embedding and embedding_error"):
        EpisodeRecorded(**base)
    with pytest.raises(ValidationError, match="embedding_model is required"):
        EpisodeRecorded(**base, embedding=[1.0])


def test_vectors_reject_nan_and_carry_float32_precision() -> None:
    with pytest.raises(ValidationError, match="NaN"):
        ChunkVector(chunk_id="c", vector=[float("nan")])
    assert ChunkVector(chunk_id="c", vector=[0.1]).vector == [pytest.approx(0.1, rel=1e-7)]
    assert ChunkVector(chunk_id="c", vector=[0.1]).vector != [0.1]


def test_embedded_vectors_must_have_the_declared_dims() -> None:
    with pytest.raises(ValidationError, match="has 1 dims, expected 2"):
        ChunksEmbedded(
            document_id="d", document_version="v", model="m", dims=2,
            vectors=[ChunkVector(chunk_id="c", vector=[1.0])],
        )  # fmt: skip


def test_sha256_must_be_lowercase_hex() -> None:
    from events.files import FileChanged

    FileChanged(repo="r", path="p", content="", sha256=SHA, size_bytes=0)
    with pytest.raises(ValidationError, match="sha256"):
        FileChanged(repo="r", path="p", content="", sha256="XYZ", size_bytes=0)


def test_event_ids_are_uuids() -> None:
    assert isinstance(turn("t:s").event_id, UUID)
