"""Seed 003's configuration models, with the seed's defaults.

The queue backend is Kafka itself: ``queue_backend`` is kept for the contract, and
``"kafka"`` is its default here because an in-process queue loses work on restart.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from streams.memory.statements import SINGLE_VALUED

Confidence = Literal["high", "medium", "low"]
CONFIDENCE_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2}


class EntityExtractionConfig(BaseModel):
    """Configuration for entity extraction."""

    enabled: bool = True
    llm_provider: str = "anthropic"
    model: str = "haiku"
    max_tokens: int = 1024
    temperature: float = 0.3
    batch_size: int = 10
    timeout_ms: int = 2000
    min_confidence: Confidence = "medium"
    extract_system_events: bool = True
    """Seed 003: extraction from system events is optional."""
    gazetteer: dict[str, str] = Field(default_factory=dict)
    """Known names → entity type for the local rules, e.g. ``{"Apollo Router": "product"}``."""
    single_valued_relations: tuple[str, ...] = (
        "lives_at", "status", "has_plan", "has_email", "has_phone", *SINGLE_VALUED,
    )  # fmt: skip
    """A newer fact for one of these replaces the current one (and invalidates it)."""


class EntityDeduplicationConfig(BaseModel):
    """Configuration for entity deduplication."""

    exact_match_enabled: bool = True
    fuzzy_match_enabled: bool = True
    fuzzy_threshold: float = 0.85
    embedding_match_enabled: bool = True
    embedding_threshold: float = 0.80
    rule_based_enabled: bool = True


class SummaryModelConfig(BaseModel):
    """The model that writes a kind of summary."""

    llm_provider: str = "anthropic"
    model: str = "haiku"
    max_tokens: int = 256
    temperature: float = 0.5


class WindowConfig(SummaryModelConfig):
    turns_per_summary: int = Field(default=20, ge=1)


class MetaConfig(SummaryModelConfig):
    summaries_per_meta: int = Field(default=5, ge=1)
    enabled_at_turn_count: int = Field(default=100, ge=0)
    max_tokens: int = 512


class SummarizationConfig(BaseModel):
    """Configuration for conversation summarization."""

    enabled: bool = True
    window: WindowConfig = Field(default_factory=WindowConfig)
    meta: MetaConfig = Field(default_factory=MetaConfig)


class MemoryIngestionConfig(BaseModel):
    """Configuration for memory ingestion system."""

    enabled: bool = True
    embedding_enabled: bool = True
    entity_extraction_enabled: bool = True
    summarization_enabled: bool = True
    async_extraction: bool = True
    async_summarization: bool = True
    queue_backend: Literal["kafka", "redis", "inmemory"] = "kafka"
    max_ingestion_latency_ms: int = 500

    entity_extraction: EntityExtractionConfig = Field(default_factory=EntityExtractionConfig)
    deduplication: EntityDeduplicationConfig = Field(default_factory=EntityDeduplicationConfig)
    summarization: SummarizationConfig = Field(default_factory=SummarizationConfig)
