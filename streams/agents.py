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
    """Every agent, wired for ``settings``."""
    embedder = EmbedderProcessor(settings)  # one model for chunks and tables
    return [
        AgentSpec(
            name="kb_chunker",
            source="kb.articles",
            processor=chunk_kb_article,
            accepts=(KbArticleUpserted, KbArticleDeleted),
        ),
        AgentSpec(
            name="file_chunker",
            source="files.changes",
            processor=FileChunker(default_registry()),
            accepts=(FileChanged, FileDeleted, FileSkipped),
        ),
        AgentSpec(
            name="embedder",
            source="chunks",
            processor=embedder,
            accepts=(DocumentChunked, DocumentRetracted),
            batch=(settings.embed_batch, settings.embed_within),
            bulk="chunks.bulk",
        ),
        AgentSpec(
            name="bulk_embedder",
            source="chunks.bulk",
            processor=embedder.bulk,
            accepts=(DocumentChunked, DocumentRetracted),
            # Whole files (tens of chunks each): a smaller batch shows progress and
            # commits sooner.
            batch=(max(1, settings.embed_batch // 8), settings.embed_within),
        ),
        AgentSpec(
            name="table_embedder",
            source="tables.documented",
            processor=embedder,
            accepts=(TableDocumented, DomainDocumented),
            batch=(settings.embed_batch, settings.embed_within),
        ),
        documenter_spec(settings),
        *memory_agents(settings),
    ]
