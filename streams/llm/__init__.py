"""The LLM provider port: structured output from Anthropic, or deterministic local rules.

Every use (documenting tables, LLM-defined ingesters, entity extraction, summaries)
asks for a *task* with a pydantic output type. The ``anthropic`` provider answers with
the real SDK through forced tool use; the ``local`` provider answers the same task with
a deterministic function registered for it. Results are events downstream, so a
rebuild never calls either again.
"""

from streams.llm.base import (
    LLMError,
    LLMProvider,
    StructuredRequest,
    StructuredResult,
    prompt_hash,
)
from streams.llm.fallback import FallbackProvider
from streams.llm.local import LocalProvider
from streams.llm.select import provider_from_settings

__all__ = [
    "FallbackProvider",
    "LLMError",
    "LLMProvider",
    "LocalProvider",
    "StructuredRequest",
    "StructuredResult",
    "prompt_hash",
    "provider_from_settings",
]
