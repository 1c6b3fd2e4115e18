"""The agents a Tribal worker runs: which processor listens to which source topic."""

from __future__ import annotations

from events.kb import KbArticleDeleted, KbArticleUpserted
from streams.app import AgentSpec
from streams.chunker.kb import chunk_kb_article

AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        name="kb_chunker",
        source="kb.articles",
        processor=chunk_kb_article,
        accepts=(KbArticleUpserted, KbArticleDeleted),
    ),
)
