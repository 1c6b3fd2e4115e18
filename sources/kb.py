"""Help-desk articles from a host KB (seed 002, Contract 1) → ``tribal.kb.articles``.

Each pass lists articles through :class:`~sources.kb_client.KbClient`, emits
``KbArticleUpserted`` for every article whose content hash changed, flushes the sink
and only then saves the checkpoint ``{"articles": {id: hash}, "cursor": …}``.

- Incremental passes ask for ``updated_since = cursor - overlap``. The host's
  ``updated_since`` may be inclusive or strict and clocks may lag, so the window
  overlaps the last one; articles seen again have an unchanged hash and are not
  re-emitted, so nothing at the boundary is missed or repeated.
- A full pass (on start, then every ``full_sync_every`` seconds) lists everything.
  Ids in the checkpoint but not in a *complete* full listing become
  ``KbArticleDeleted``; a failed or incomplete listing never deletes anything.
  It also catches edits a host made without moving ``last_updated`` forward.
- An article's text is the host's: control characters in it (a NUL pasted from a PDF,
  a lone surrogate from a broken export) cannot be refused, so they are removed before
  anything else reads the article, and the event says so in ``notes``
  (:func:`events.text.normalize_values`). An article whose shape is wrong is skipped
  with a warning, never fatal.
- Host failures are retried with backoff (``retry_for`` seconds per request); a pass
  that still fails leaves the checkpoint as it was and :meth:`KbSource.run` tries
  again after ``interval``, so an outage delays events but never loses them.

Options (``tribal.yaml`` or ``tribal source kb``): ``url`` (required), ``interval``,
``full_sync_every``, ``intent``, ``device``, ``page_size``, ``token`` (sent as
``Bearer``), ``headers``, ``timeout``, ``overlap``, ``backoff_initial``,
``backoff_max``, ``backoff_jitter``, ``retry_for``, ``tenant``. Use ``${ENV}`` for
``token`` and secret headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from events.kb import KbArticleDeleted, KbArticleUpserted
from events.text import normalize_text, normalize_values
from sources.checkpoint import CheckpointStore
from sources.config import ConfigError, SourceConfig, redact
from sources.kb_client import KbClient, KbHostError, KbListing, RetryPolicy
from sources.sink import EventSink

log = logging.getLogger(__name__)

TOPIC = "kb.articles"
KbEvent = KbArticleUpserted | KbArticleDeleted


class KbOptions(BaseModel):
    """The kind-specific options of a ``kb`` source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    interval: float = Field(60.0, gt=0)
    full_sync_every: float = Field(3600.0, ge=0)
    intent: str | None = None
    device: str | None = None
    page_size: int = Field(100, ge=1, le=1000)
    token: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(30.0, gt=0)
    overlap: float = Field(60.0, ge=0)
    backoff_initial: float = Field(0.5, gt=0)
    backoff_max: float = Field(30.0, gt=0)
    backoff_jitter: float = Field(1.0, ge=0)
    retry_for: float = Field(120.0, ge=0)
    tenant: str = "default"


class HostMetadata(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    intent: tuple[str, ...] = ()
    device: tuple[str, ...] = ()
    last_updated: datetime
    author: str | None = None

    @field_validator("last_updated")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class HostArticle(BaseModel):
    """One article as Contract 1 ships it (unknown fields ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    title: str
    url: str
    content: str
    metadata: HostMetadata

    def content_hash(self) -> str:
        """SHA-256 of everything the event carries, so any visible change re-emits."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def upserted(self, tenant: str, notes: tuple[str, ...] = ()) -> KbArticleUpserted:
        """The article as an event: ``id`` as ``article_id``, every other field of the
        article and of its metadata under its own name (seed 002 named them alike)."""
        fields = {**self.model_dump(exclude={"id", "metadata"}), **self.metadata.model_dump()}
        return KbArticleUpserted(tenant=tenant, article_id=self.id, notes=notes, **fields)


def _event_notes(notes: list[str]) -> tuple[str, ...]:
    """Notes on the host's fields (``id``, ``metadata.intent[0]``) as the event's fields."""
    out = []
    for note in notes:
        note = note.removeprefix("metadata.")
        if note.startswith("id:"):
            note = "article_id" + note.removeprefix("id")
        if re.split(r"[.\[:]", note, maxsplit=1)[0] in KbArticleUpserted.model_fields:
            out.append(note)  # fields the event does not carry need no note
    return tuple(out)


@dataclass(frozen=True)
class KbState:
    """What the checkpoint holds: each article's content hash and the cursor."""

    hashes: dict[str, str]
    cursor: datetime | None = None

    @classmethod
    def load(cls, data: dict[str, Any]) -> KbState:
        cursor = data.get("cursor")
        return cls(
            dict(data.get("articles") or {}), datetime.fromisoformat(cursor) if cursor else None
        )

    def dump(self) -> dict[str, Any]:
        return {"articles": self.hashes, "cursor": self.cursor.isoformat() if self.cursor else None}


def plan(
    state: KbState, listing: KbListing, *, full: bool, tenant: str = "default"
) -> tuple[list[KbEvent], KbState]:
    """The events one listing implies and the state after them (pure)."""
    hashes = dict(state.hashes)
    events: list[KbEvent] = []
    newest = state.cursor
    for raw in listing.articles.values():
        clean, found = normalize_values(raw)
        try:
            article = HostArticle.model_validate(clean)
        except ValidationError as exc:
            fields = ", ".join(".".join(map(str, e["loc"])) for e in exc.errors())
            log.warning("kb article %r skipped: invalid %s", clean.get("id"), fields)
            continue
        digest = article.content_hash()
        if hashes.get(article.id) != digest:
            events.append(article.upserted(tenant, _event_notes(found)))
            hashes[article.id] = digest
        stamp = article.metadata.last_updated
        newest = stamp if newest is None else max(newest, stamp)
    if not listing.complete:
        return events, KbState(hashes, state.cursor)
    if full:
        listed = {normalize_text(article_id)[0] for article_id in listing.articles}
        for gone in sorted(set(hashes) - listed):
            events.append(KbArticleDeleted(tenant=tenant, article_id=gone))
            del hashes[gone]
    return events, KbState(hashes, newest)


class KbSource:
    """Polls a host KB; a full snapshot on start and every ``full_sync_every`` seconds."""

    def __init__(self, name: str, options: KbOptions) -> None:
        self.name = name
        self.options = options
        self._next_full: float | None = None

    def _client(self) -> KbClient:
        o = self.options
        headers = dict(o.headers)
        if o.token:
            headers["Authorization"] = f"Bearer {o.token}"
        retry = RetryPolicy(o.backoff_initial, o.backoff_max, o.backoff_jitter, o.retry_for)
        return KbClient(o.url, headers=headers, timeout=o.timeout, retry=retry)

    async def sync_once(self, sink: EventSink, checkpoint: CheckpointStore) -> int:
        """One pass (full if due), emitted and flushed before the checkpoint moves."""
        o = self.options
        state = KbState.load(checkpoint.load())
        full = (
            state.cursor is None or self._next_full is None or time.monotonic() >= self._next_full
        )
        since = (
            None if full or state.cursor is None else state.cursor - timedelta(seconds=o.overlap)
        )
        async with self._client() as client:
            listing = await client.list_articles(
                intent=o.intent, device=o.device, updated_since=since, limit=o.page_size
            )
        events, new_state = plan(state, listing, full=full, tenant=o.tenant)
        for event in events:
            await sink.emit(TOPIC, event.article_id, event)
        await sink.flush()
        checkpoint.save(new_state.dump())
        if full and listing.complete:
            self._next_full = time.monotonic() + o.full_sync_every
        if events or not listing.complete:
            log.info(
                "kb %s: %s pass, %d events%s",
                self.name,
                "full" if full else "incremental",
                len(events),
                "" if listing.complete else " (host changed while paging; will look again)",
            )
        return len(events)

    async def run(self, sink: EventSink, checkpoint: CheckpointStore, stop: asyncio.Event) -> None:
        """Poll every ``interval`` seconds until ``stop``; host failures are never fatal."""
        while not stop.is_set():
            try:
                await self.sync_once(sink, checkpoint)
            except (KbHostError, httpx.HTTPError) as exc:
                # The checkpoint did not move, so the next pass picks up everything.
                log.warning(
                    "kb %s: pass failed (%s); next try in %.0fs",
                    self.name,
                    redact(str(exc)),
                    self.options.interval,
                )
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), self.options.interval)


def from_config(config: SourceConfig) -> KbSource:
    """The ``kb`` kind of ``tribal.yaml`` / ``tribal source kb``."""
    try:
        options = KbOptions.model_validate(config.options())
    except ValidationError as exc:
        # Without input values: they may be tokens.
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
            for e in exc.errors(include_input=False, include_url=False)
        )
        raise ConfigError(f"source {config.name!r} (kb): {problems}") from None
    return KbSource(config.name, options)
