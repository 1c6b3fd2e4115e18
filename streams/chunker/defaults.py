"""The registry a worker uses: native ingesters plus the agent files in the agents dir."""

from __future__ import annotations

import os
from pathlib import Path

from streams.chunker.agent_files import AgentDefinition, agents_dir, load_agents
from streams.chunker.llm_ingester import INGEST_TASK, LlmIngester, rule_chunks
from streams.chunker.markdown import MarkdownIngester
from streams.chunker.plain import FallbackIngester, TextIngester
from streams.chunker.registry import IngesterRegistry
from streams.chunker.treesitter import treesitter_ingesters
from streams.llm.base import LLMProvider
from streams.llm.local import LocalProvider
from streams.llm.select import provider_from_settings


def local_provider() -> LocalProvider:
    """The deterministic provider with the chunking task registered."""
    local = LocalProvider()
    local.register(INGEST_TASK, rule_chunks)
    return local


def provider_for(
    definition: AgentDefinition, local: LocalProvider, env: dict[str, str] | None = None
) -> LLMProvider:
    """``provider: local`` always answers locally; otherwise anthropic when a key is set
    (with the agent's model), falling back to the local rules."""
    if definition.provider.lower() == "local":
        return local
    values = dict(os.environ) if env is None else dict(env)
    if definition.provider.lower() == "anthropic" and definition.model:
        values.setdefault("TRIBAL_LLM_MODEL", definition.model)
    return provider_from_settings(local, values)


def default_registry(
    directory: Path | None = None, env: dict[str, str] | None = None
) -> IngesterRegistry:
    """tree-sitter (10-15), markdown (20), agent files (their own), text (50), fallback."""
    registry = IngesterRegistry(FallbackIngester())
    for ingester in treesitter_ingesters():
        registry.register(ingester)
    registry.register(MarkdownIngester())
    registry.register(TextIngester())
    local = local_provider()
    for definition in load_agents(directory or agents_dir(env)):
        if any(c.startswith("ingest:") for c in definition.capabilities):
            registry.register(LlmIngester(definition, provider_for(definition, local, env)))
    return registry
