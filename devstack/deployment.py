"""The demo deployment of the API tests, the eval and the API benchmark: the 24-table
store schema, documented, 20 help-desk articles, a few code chunks and a conversation's
facts, all produced to a broker and folded into the catalog, index and graph by real
projection runners. Two tenants hold API keys (``KEYS``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID, uuid5

import asyncpg

from demo import DATA
from devstack.code_samples import code_docs
from devstack.pipeline import Pipeline, isolated_settings
from events.base import Event
from events.chunks import Chunk, ChunksEmbedded, DocumentChunked
from events.documents import DomainDocumented, TableDocumented
from events.facts import EntitiesExtracted, Entity, RelationshipAsserted
from projections.base import Projection
from projections.catalog import catalog_projection
from projections.graph import graph_projection
from projections.index import IndexProjection, index_from_settings
from projections.runner import ProjectionRunner
from runtime.databases import fresh_database
from runtime.settings import TribalSettings
from sources.pg_catalog import introspect
from streams.documenter.documenter import Documenter, make_provider
from streams.documenter.lane import DocumenterLane
from streams.embedder.cache import MemoryEmbeddingCache
from streams.embedder.embed import DocumentEmbedder
from streams.embedder.model import Embedder

SCHEMA_SQL = DATA / "schema.sql"
HELPDESK = DATA / "helpdesk.json"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
GROUP = "default:demo-session"
KEYS = {"key-default": "default", "key-globex": "globex"}
"""API keys of the deployment's two tenants (pass ``api_keys=KEYS`` to :func:`build_demo`)."""
AUTH = {"Authorization": "Bearer key-default"}
OTHER = {"Authorization": "Bearer key-globex"}
NS = UUID("6f1c1f0e-3c5e-4b9e-9d7a-0a1b2c3d4e5f")
ALICE, ACME, APOLLO = (uuid5(NS, n) for n in ("alice", "acme", "apollo"))
OCCURRED = datetime(2025, 1, 1, tzinfo=UTC)


def kb_documents() -> list[DocumentChunked]:
    """One chunk per help-desk article (title + content), with intent/device tags."""
    out = []
    for a in json.loads(HELPDESK.read_text()):
        meta = a["metadata"]
        text = f"{a['title']}\n\n{a['content']}"
        version = uuid5(NS, text).hex
        out.append(
            DocumentChunked(
                document_id=f"kb:{a['id']}",
                document_version=version,
                source_type="kb",
                title=a["title"],
                url=a["url"],
                chunked_by="kb-section-ingester",
                chunks=(
                    Chunk(
                        chunk_id=f"kb:{a['id']}@{version[:12]}#0",
                        index=0,
                        text=text,
                        kind="section",
                    ),
                ),
                metadata={
                    "intent": ",".join(meta["intent"]),
                    "device": ",".join(meta["device"]),
                    "last_updated": meta["last_updated"].replace("Z", "+00:00"),
                },
            )
        )
    return out


async def embeddings(events: Sequence[Event], embedder: Embedder) -> list[ChunksEmbedded]:
    """The embedder agent's output for ``events`` (chunked documents, documented tables)."""
    emits = await DocumentEmbedder(embedder, MemoryEmbeddingCache())(events)
    return [e.event for e in emits if isinstance(e.event, ChunksEmbedded)]


def facts() -> list[Event]:
    episode = uuid5(NS, "episode-1")
    people = EntitiesExtracted(
        group_id=GROUP, episode_id=episode, generated_by="local", model="rules",
        entities=(Entity(entity_id=ALICE, name="Alice", entity_type="person", valid_from=OCCURRED),
                  Entity(entity_id=ACME, name="Acme", entity_type="company", valid_from=OCCURRED),
                  Entity(entity_id=APOLLO, name="Apollo II", entity_type="device",
                         valid_from=OCCURRED)),
        occurred_at=OCCURRED,
    )  # fmt: skip
    return [people, fact(uuid5(NS, "owns"), ALICE, APOLLO, "owns", "Alice owns an Apollo II")]


def fact(rel: UUID, source: UUID, target: UUID, kind: str, text: str) -> RelationshipAsserted:
    return RelationshipAsserted(
        group_id=GROUP, relationship_id=rel, source_entity_id=source, target_entity_id=target,
        relation_type=kind, fact=text, valid_from=OCCURRED, occurred_at=OCCURRED,
    )  # fmt: skip


@dataclass
class Demo:
    settings: TribalSettings
    pipeline: Pipeline
    dsn: str

    async def project(self, only: Sequence[str] = ("catalog", "index", "graph")) -> None:
        """Run the projections until they have applied everything on the topics."""
        made: dict[str, Callable[[], Projection]] = {
            "catalog": lambda: catalog_projection(self.dsn),
            "index": lambda: IndexProjection(index_from_settings(self.settings)),
            "graph": lambda: graph_projection(self.dsn),
        }
        for name in only:
            runner = ProjectionRunner(made[name](), self.settings, self.pipeline.serde)
            await runner.start()
            try:
                await runner.catch_up()
            finally:
                await runner.stop()


async def build_demo(
    bootstrap: str, admin_dsn: str, data_dir: Path, embedder: Embedder, **extra: object
) -> Demo:
    """Load the demo schema into a fresh database, produce every event, project them."""
    dsn = await fresh_database(admin_dsn, "api")
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(SCHEMA_SQL.read_text())
        observed = await introspect(conn, "shop")
    finally:
        await conn.close()
    settings = isolated_settings(bootstrap, data_dir, postgres_dsn=dsn, **extra)
    pipeline = Pipeline(settings)
    await pipeline.create_topics()
    emits = await DocumenterLane(Documenter(make_provider(env={}))).process(observed)
    documented = [e.event for e in emits]
    tables = [e for e in documented if isinstance(e, TableDocumented)]
    domains = [e for e in documented if isinstance(e, DomainDocumented)]
    await pipeline.produce("schema.changes", [(e.fully_qualified_name, e) for e in observed])
    await pipeline.produce(
        "tables.documented",
        [(t.fully_qualified_name, t) for t in tables] + [(d.domain, d) for d in domains],
    )
    chunked = kb_documents() + code_docs()
    await pipeline.produce("chunks", [(d.document_id, d) for d in chunked])
    vectors = await embeddings([*chunked, *tables], embedder)
    await pipeline.produce("embeddings", [(v.document_id, v) for v in vectors])
    await pipeline.produce("memory.facts", [(GROUP, e) for e in facts()])
    demo = Demo(settings, pipeline, dsn)
    await demo.project()
    return demo
