"""Pick the provider from the environment: anthropic when a key is set, else local."""

from __future__ import annotations

import os

from streams.llm.base import LLMProvider
from streams.llm.fallback import FallbackProvider
from streams.llm.local import LocalProvider


def provider_from_settings(local: LocalProvider, env: dict[str, str] | None = None) -> LLMProvider:
    """``anthropic`` (falling back to ``local``) when ``ANTHROPIC_API_KEY`` is set."""
    env = dict(os.environ) if env is None else env
    key = env.get("ANTHROPIC_API_KEY", "")
    if env.get("TRIBAL_LLM_PROVIDER", "").lower() == "local" or not key:
        return local
    from streams.llm.anthropic import DEFAULT_MODEL, AnthropicProvider

    primary = AnthropicProvider(
        api_key=key,
        model=env.get("TRIBAL_LLM_MODEL", DEFAULT_MODEL),
        base_url=env.get("ANTHROPIC_BASE_URL") or None,
        timeout_s=float(env.get("TRIBAL_LLM_TIMEOUT_S", "30")),
    )
    return FallbackProvider(primary, local)
