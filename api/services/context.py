"""What every service function needs: the stores, the query embedder, the caller's tenant."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from api.services.answers import Answers
from projections.catalog.port import CatalogReads
from projections.graph.port import GraphReads
from projections.index.port import SearchIndex
from runtime.settings import TribalSettings
from streams.embedder.model import Embedder

log = logging.getLogger(__name__)


class QueryEmbedder:
    """Embeds queries off the event loop, with an LRU cache of recent query vectors.

    Loading the model takes seconds, so :meth:`preload` starts it in the background
    when the API starts; until it is ready :attr:`ready` is False and callers that
    cannot wait (``/v1/retrieve``) degrade instead of blocking.

    Queries that arrive while the model is busy are encoded together in the next batch
    (at most :attr:`batch` at a time): on a CPU, one batch of 32 short questions costs
    a few times one question, not 32 times.
    """

    def __init__(self, embedder: Embedder, cache_size: int = 4096, batch: int = 16) -> None:
        self.embedder = embedder
        self.cache_size = cache_size
        self.batch = batch
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._loading: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[tuple[float, ...]]] = {}
        self._wanted: dict[str, int] = {}
        """Callers still waiting for each queued text; texts nobody waits for any more
        are dropped from the queue rather than encoded."""
        self._encoder: asyncio.Task[None] | None = None
        self.ready = False
        self.hits = 0
        self.misses = 0
        self.batches = 0

    def preload(self) -> asyncio.Task[None]:
        """Load the model in a thread (idempotent); the task finishes when it is ready."""
        if self._loading is None:
            self._loading = asyncio.create_task(self._load())
        return self._loading

    async def _load(self) -> None:
        try:
            await asyncio.to_thread(self.embedder.encode, ["warm-up"])
            self.ready = True
        except Exception as exc:  # the API serves lexical search without the model
            log.warning("query embedder unavailable: %s", exc)

    def cached(self, text: str) -> tuple[float, ...] | None:
        vector = self._cache.get(text)
        if vector is not None:
            self._cache.move_to_end(text)
            self.hits += 1
        return vector

    async def embed(self, text: str) -> tuple[float, ...]:
        """The query's vector: from the cache, else from the next batch encoded."""
        vector = self.cached(text)
        if vector is not None:
            return vector
        self.misses += 1
        waiting = self._waiting.get(text)
        if waiting is None:
            waiting = self._waiting[text] = asyncio.get_running_loop().create_future()
            waiting.add_done_callback(_retrieved)
            if self._encoder is None or self._encoder.done():
                self._encoder = asyncio.create_task(self._encode_waiting())
        self._wanted[text] = self._wanted.get(text, 0) + 1
        try:  # shielded: a caller that gives up does not cancel the others' vector
            return await asyncio.shield(waiting)
        finally:
            left = self._wanted.pop(text, 1) - 1
            if left > 0:
                self._wanted[text] = left

    async def _encode_waiting(self) -> None:
        """Encode what is waiting, a batch at a time, until nothing is."""
        while self._waiting:
            for text in [t for t in self._waiting if not self._wanted.get(t)]:
                self._waiting.pop(text).cancel()  # every caller gave up
            texts = list(self._waiting)[: self.batch]
            if not texts:
                break
            futures = [self._waiting.pop(t) for t in texts]
            self.batches += 1
            try:
                vectors = await asyncio.to_thread(self.embedder.encode, texts)
            except Exception as exc:
                for f in futures:
                    if not f.done():
                        f.set_exception(exc)
                continue
            self.ready = True
            for text, vector, f in zip(texts, vectors, futures, strict=True):
                self._cache[text] = tuple(vector)
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
                if not f.done():
                    f.set_result(self._cache[text])


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a failed encode as seen: every caller waiting for it may have given up."""
    if not future.cancelled():
        future.exception()


class Store(CatalogReads, GraphReads, Protocol):
    """The PostgreSQL the catalog and the graph are read from (an asyncpg pool)."""

    async def close(self) -> None:
        """Release its connections."""
        ...


@dataclass
class ServiceContext:
    """The read stores of one process. ``db`` is an asyncpg pool over the catalog and graph."""

    settings: TribalSettings
    db: Store | None = None
    index: SearchIndex | None = None
    embedder: QueryEmbedder | None = None
    ingestor: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    answers: Answers[Any] = field(init=False)
    """Recent ``/v1/retrieve`` answers (``settings.api_answer_cache_s``)."""

    def __post_init__(self) -> None:
        self.answers = Answers(self.settings.api_answer_cache_s)

    async def vector(self, text: str) -> Sequence[float] | None:
        """The query vector, or None when no embedder is configured."""
        return None if self.embedder is None else await self.embedder.embed(text)


def require_db(ctx: ServiceContext) -> Store:
    from api.services.errors import ServiceError

    if ctx.db is None:
        raise ServiceError(503, "STORE_UNAVAILABLE", "no PostgreSQL is configured", True)
    return ctx.db


SETUP_ATTEMPTS = 3
"""Tries at setting the index up (0.5 and 1 s apart) before the API starts serving
without one: a service that starts beside the API may not answer yet. It goes on trying
in the background (:func:`_keep_setting_up`) and searches start once it answers."""

SETUP_RETRY_MAX_S = 30.0


def index_unavailable(ctx: ServiceContext) -> tuple[str, str]:
    """The error code and message for a search while ``ctx`` has no index."""
    if ctx.extra.get("index_setup") is not None:
        return "INDEX_UNAVAILABLE", "the search index does not answer yet; retrying"
    return "INDEX_UNAVAILABLE", "no search index is configured"


async def _keep_setting_up(ctx: ServiceContext, index: SearchIndex) -> None:
    delay = 1.0
    while True:
        await asyncio.sleep(delay)
        try:
            await index.setup()
        except Exception as exc:
            log.info("search index still unavailable: %s", exc)
            delay = min(SETUP_RETRY_MAX_S, delay * 2)
            continue
        ctx.index = index
        ctx.extra.pop("index_setup", None)
        log.warning("search index available")
        return


async def open_context(settings: TribalSettings, *, load_model: bool = True) -> ServiceContext:
    """Connect to what the settings name; anything unavailable stays None (degraded)."""
    import asyncpg

    from projections.index import index_from_settings
    from streams.embedder.select import embedder_for

    ctx = ServiceContext(settings)
    if settings.postgres_dsn:
        try:
            ctx.db = await asyncpg.create_pool(settings.postgres_dsn, min_size=1, max_size=10)
        except (OSError, asyncpg.PostgresError) as exc:
            log.warning("catalog/graph store unavailable: %s", exc)
    if settings.postgres_dsn or settings.weaviate_url:
        index = index_from_settings(settings)
        for attempt in range(SETUP_ATTEMPTS):
            try:
                await index.setup()
                ctx.index = index
                break
            except Exception as exc:  # search degrades; /v1/retrieve answers its fallback
                if attempt + 1 == SETUP_ATTEMPTS:
                    log.warning("search index unavailable (retrying in the background): %s", exc)
                    task = asyncio.get_running_loop().create_task(_keep_setting_up(ctx, index))
                    ctx.extra["index_setup"] = task
                else:
                    await asyncio.sleep(0.5 * 2**attempt)
    if load_model:
        ctx.embedder = QueryEmbedder(
            embedder_for(settings.embedding_model, settings.embedding_backend)
        )
        ctx.embedder.preload()
        # The question reader too (spaCy's entity pipes read the times a memory question
        # names): loaded now, not by the first question that names one.
        ctx.extra["question_reader"] = asyncio.get_running_loop().create_task(
            asyncio.to_thread(_load_question_reader)
        )
    return ctx


def _load_question_reader() -> None:
    from streams.memory.english import english_entities_of

    try:
        english_entities_of("Warming up on Monday 4 May.")
    except Exception as exc:  # questions are then read without it
        log.warning("question reader unavailable: %s", exc)


async def close_context(ctx: ServiceContext) -> None:
    setup = ctx.extra.pop("index_setup", None)
    if setup is not None:
        setup.cancel()
    ctx.extra.pop("question_reader", None)  # a thread: it finishes on its own
    if ctx.index is not None:
        await ctx.index.close()
    if ctx.db is not None:
        await ctx.db.close()
