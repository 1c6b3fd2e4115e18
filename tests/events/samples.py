"""One fully populated and one minimal instance of every event type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from uuid import UUID

from events.base import Event
from events.chunks import Chunk, ChunksEmbedded, ChunkVector, DocumentChunked, DocumentRetracted
from events.deadletter import DeadLettered
from events.documents import DomainDocumented, TableDocumented
from events.facts import (
    EntitiesExtracted,
    Entity,
    EntityMerged,
    RelationshipAsserted,
    RelationshipInvalidated,
)
from events.files import FileChanged, FileDeleted, FileSkipped
from events.kb import KbArticleDeleted, KbArticleUpserted
from events.memory import (
    EpisodeRecorded,
    MemoryForgotten,
    SummaryCreated,
    SystemEventRecorded,
    TurnRecorded,
)
from events.schema import Column, ForeignKey, Index, Partition, TableDropped, TableObserved

T0 = datetime(2024, 12, 15, 10, 0, 0, 123456, tzinfo=UTC)
T1 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
U1 = UUID("00000000-0000-4000-8000-000000000001")
U2 = UUID("00000000-0000-4000-8000-000000000002")
SHA = "ab" * 32
GROUP = "acme:session-42"

_entity = Entity(
    entity_id=U1,
    name="Apollo II",
    entity_type="product",
    attributes={"color": "black"},
    confidence="high",
    valid_from=T0,
    valid_to=T1,
)
_chunk = Chunk(
    chunk_id="doc-1:v1:0",
    index=0,
    text="def foo():\n    return 1",
    start_line=1,
    end_line=2,
    symbol="foo",
    kind="function",
    metadata={"parent": "module"},
)

FULL: list[Event] = [
    TableObserved(
        tenant="acme",
        database="shop",
        schema_name="public",
        table_name="orders",
        database_type="postgres",
        columns=[
            Column(name="id", type="bigint", nullable=False, comment="Order id"),
            Column(name="customer_id", type="bigint", default_value="0"),
        ],
        primary_key=["id"],
        foreign_keys=[
            ForeignKey(
                name="orders_customer_fk",
                columns=["customer_id"],
                references_table="shop.public.customers",
                references_columns=["id"],
            )
        ],
        indexes=[Index(name="orders_pkey", columns=["id"], unique=True)],
        comment="Customer orders",
        row_count_approx=120_000,
        metadata_hash=SHA,
        notes=["comment: removed 1 control character (U+001B)"],
        partition_key="RANGE (created_at)",
        partitions=[
            Partition(
                name="shop.public.orders_2024",
                bound="FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
            ),
            Partition(name="shop.archive.orders_old", bound="DEFAULT"),
            Partition(
                name="shop.archive.orders_old_eu",
                bound="FOR VALUES IN ('eu')",
                parent="shop.archive.orders_old",
            ),
        ],
    ),
    TableDropped(database="shop", schema_name="public", table_name="orders"),
    FileChanged(
        repo="tribal", path="events/base.py", content="x = 1\n", sha256=SHA,
        language="python", size_bytes=6, notes=["content: removed 1 control character (U+0000)"],
    ),
    FileDeleted(repo="tribal", path="old.py"),
    FileSkipped(
        repo="tribal", path="logo.png", reason="binary", size_bytes=2048, sha256=SHA,
        notes=["path: removed 1 control character (U+0007)"],
    ),
    KbArticleUpserted(
        article_id="kb-001",
        title="Apollo Not Hashing Troubleshooting",
        url="https://docs.futurebit.com/apollo-not-hashing",
        content="If your Apollo shows 0 H/s...",
        intent=["not_hashing", "performance_issue"],
        device=["Apollo", "Apollo II"],
        last_updated=T0,
        author="FutureBit Support",
        notes=["content: removed 2 control characters (U+0000 x2)"],
    ),
    KbArticleDeleted(article_id="kb-001"),
    TurnRecorded(
        group_id=GROUP, turn_id=U1, user_message="Hi", agent_response="Hello",
        metadata={"channel": "web"},
    ),
    SystemEventRecorded(
        group_id=GROUP, event_type="tool_run", content="ran search", metadata={"tool": "x"}
    ),
    MemoryForgotten(group_id=GROUP, reason="user request"),
    EpisodeRecorded(
        group_id=GROUP, episode_id=U1, source_event_id=U2, content="Hi / Hello",
        content_type="message", source="user", source_metadata={"turn": "1"},
        embedding=[0.1, -0.25, 3.0], embedding_model="all-MiniLM-L6-v2",
    ),
    EntitiesExtracted(
        group_id=GROUP, episode_id=U2, entities=[_entity], generated_by="local", model="rules"
    ),
    EntityMerged(
        group_id=GROUP, existing_entity_id=U1, merged_entity_id=U2, stage="fuzzy",
        score=0.91, entity=_entity,
    ),
    RelationshipAsserted(
        group_id=GROUP, relationship_id=U1, source_entity_id=U1, target_entity_id=U2,
        relation_type="owns", fact="Alice owns an Apollo II", attributes={"since": "2024"},
        confidence="low", episode_id=U2, valid_from=T0, valid_to=T1,
    ),
    RelationshipInvalidated(
        group_id=GROUP, relationship_id=U1, valid_to=T1, invalidated_by=U2, reason="sold it"
    ),
    SummaryCreated(
        group_id=GROUP, summary_id=U1, summary_type="window", content="They talked.",
        episode_ids=[U1, U2], summary_ids=[U2], generated_by="local", model="extractive",
    ),
    TableDocumented(
        tenant="acme", fully_qualified_name="shop.public.orders", database="shop",
        schema_name="public", table_name="orders", domain="sales", description="Orders.",
        column_descriptions={"id": "Order id"}, keywords=["order", "sale"],
        metadata_hash=SHA, generated_by="anthropic", model="claude", content="# orders",
    ),
    DomainDocumented(
        domain="sales", database="shop", description="Selling things.",
        tables=["shop.public.orders"], er_diagram="erDiagram", common_joins=["a = b"],
        generated_by="local", model="templates", content="# sales",
    ),
    DocumentChunked(
        document_id="file:tribal:events/base.py", document_version=SHA, source_type="file",
        title="base.py", url="https://example.com", path="events/base.py", language="python",
        chunked_by="python-ingester", chunks=[_chunk], metadata={"repo": "tribal"},
    ),
    DocumentRetracted(document_id="kb:kb-001", reason="deleted"),
    ChunksEmbedded(
        document_id="kb:kb-001", document_version=SHA, model="all-MiniLM-L6-v2", dims=2,
        vectors=[ChunkVector(chunk_id="kb:kb-001:0", vector=[0.5, 0.1])],
    ),
    DeadLettered(
        origin_topic="tribal.kb.articles", origin_partition=3, origin_offset=42,
        origin_key="kb-001", error_code="NOT_WIRE_FORMAT", error_message="bad",
        payload=b"\x01\x02\xff",
    ),
]  # fmt: skip

MINIMAL: list[Event] = [
    TableObserved(
        database="d", schema_name="s", table_name="t", database_type="snowflake", columns=[],
        metadata_hash="h",
    ),
    FileChanged(repo="r", path="p", content="", sha256=SHA, size_bytes=0),
    FileSkipped(repo="r", path="p", reason="ignored"),
    KbArticleUpserted(article_id="a", title="t", url="u", content="", last_updated=T1),
    TurnRecorded(group_id="t:s", user_message="", agent_response=""),
    SystemEventRecorded(group_id="t:s", event_type="e", content=""),
    MemoryForgotten(group_id="t:s"),
    EpisodeRecorded(
        group_id="t:s", episode_id=U1, source_event_id=U2, content="", content_type="event",
        source="system", embedding_error="model unavailable",
    ),
    EntitiesExtracted(group_id="t:s", episode_id=U1, entities=[], generated_by="g", model="m"),
    RelationshipAsserted(
        group_id="t:s", relationship_id=U1, source_entity_id=U1, target_entity_id=U2,
        relation_type="r", valid_from=T0,
    ),
    RelationshipInvalidated(group_id="t:s", relationship_id=U1, valid_to=T0),
    SummaryCreated(
        group_id="t:s", summary_id=U1, summary_type="meta", content="", generated_by="g",
        model="m",
    ),
    TableDocumented(
        fully_qualified_name="d.s.t", database="d", schema_name="s", table_name="t",
        domain="x", description="", metadata_hash="h", generated_by="g", model="m", content="",
    ),
    DomainDocumented(
        domain="x", database="d", description="", tables=[], generated_by="g", model="m",
        content="",
    ),
    DocumentChunked(
        document_id="d", document_version="v", source_type="kb", chunked_by="text-ingester",
        chunks=[Chunk(chunk_id="d:v:0", index=0, text="")],
    ),
    DocumentRetracted(document_id="d"),
    ChunksEmbedded(document_id="d", document_version="v", model="m", dims=1, vectors=[]),
    DeadLettered(
        origin_topic="t", origin_partition=0, origin_offset=0, error_code="X", error_message="",
        payload=b"",
    ),
]  # fmt: skip

ALL = FULL + MINIMAL
