"""The agents a Tribal worker runs: which processor listens to which source topic."""

from __future__ import annotations

from events.chunks import DocumentChunked, DocumentRetracted
from events.documents import DomainDocumented, TableDocumented
from events.files import FileChanged, FileDeleted, FileSkipped
from events.kb import KbArticleDeleted, KbArticleUpserted
from runtime.settings import TribalSettings
from streams.chunker.defaults import default_registry
from streams.chunker.files import FileChunker
from streams.chunker.kb import chunk_kb_article
from streams.documenter.agent import documenter_spec
from streams.embedder.agent import EmbedderProcessor
from streams.memory.agents import memory_agents
from streams.spec import AgentSpec


def agents_for(settings: TribalSettings) -> list[AgentSpec]:
    """Every agent, wired for ``settings``: name, source topic, processor, accepted events."""
    embedder = EmbedderProcessor(settings)  # one model for chunks and tables
    batch = (settings.embed_batch, settings.embed_within)
    # Whole files (tens of chunks each): a smaller batch shows progress and commits sooner.
    bulk_batch = (max(1, settings.embed_batch // 8), settings.embed_within)
    articles = (KbArticleUpserted, KbArticleDeleted)
    files = (FileChanged, FileDeleted, FileSkipped)
    chunks = (DocumentChunked, DocumentRetracted)
    tables = (TableDocumented, DomainDocumented)
    return [
        AgentSpec("kb_chunker", "kb.articles", chunk_kb_article, articles),
        AgentSpec("file_chunker", "files.changes", FileChunker(default_registry()), files),
        AgentSpec("embedder", "chunks", embedder, chunks, batch=batch, bulk="chunks.bulk"),
        AgentSpec("bulk_embedder", "chunks.bulk", embedder.bulk, chunks, batch=bulk_batch),
        AgentSpec("table_embedder", "tables.documented", embedder, tables, batch=batch),
        documenter_spec(settings),
        *memory_agents(settings),
    ]
