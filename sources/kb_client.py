"""A client for seed 002's host KB API (``GET /api/kb/articles``).

Contract 1 says only that a response "is paginated if > limit" and that it carries
``total`` (every matching article) and ``updated_at``. The client pages with
``offset`` next to ``limit`` (as ``demo.kb_host`` does) until it holds ``total``
articles. A listing is *complete* only if every page came from one unchanged
knowledge base (same ``total`` and ``updated_at`` on every page) and the ids add up
to ``total``; otherwise articles may have shifted between pages, so the pass is
repeated a few times and, if it never settles, reported incomplete. Callers must not
infer deletions from an incomplete listing.

Requests that fail transiently (connection errors, timeouts, 5xx, 408, 429, a
malformed body) are retried with exponential backoff and jitter for up to
``RetryPolicy.give_up_after`` seconds. Logs name the endpoint without credentials
or query string, never the headers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_delay,
    wait_exponential,
    wait_random,
)

from sources.config import redact

log = logging.getLogger(__name__)

PATH = "/api/kb/articles"
MAX_PAGES = 100_000
_TRANSIENT_STATUS = frozenset({408, 425, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff ``initial * 2**n`` plus up to ``jitter`` seconds, capped at ``max``."""

    initial: float = 0.5
    max: float = 30.0
    jitter: float = 1.0
    give_up_after: float = 120.0


class KbHostError(Exception):
    """The host answered, but not with a usable listing."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(f"HTTP {status} {error}: {message}")
        self.status = status
        self.error = error
        self.message = message

    @property
    def transient(self) -> bool:
        return self.status >= 500 or self.status in _TRANSIENT_STATUS or self.status == 200


@dataclass(frozen=True)
class KbListing:
    """Every article of one listing pass, by id, with whether the pass was complete."""

    articles: dict[str, dict[str, Any]]
    total: int
    updated_at: str | None
    complete: bool
    malformed: int = 0
    """Articles without a string ``id`` (they make a listing incomplete)."""


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, KbHostError):
        return exc.transient
    return isinstance(exc, httpx.TransportError)


def _safe_endpoint(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _error_body(response: httpx.Response) -> tuple[str, str]:
    try:
        body = response.json()
    except ValueError:
        return response.reason_phrase or "error", "non-JSON body"
    if isinstance(body, dict):
        return str(body.get("error", ""))[:200], str(body.get("message", ""))[:200]
    return response.reason_phrase or "error", "unexpected body"


class KbClient:
    """Reads one host's articles; use as ``async with KbClient(url) as client``."""

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith(PATH) else base + PATH
        self.endpoint = _safe_endpoint(self.url)
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(headers=headers or {}, timeout=timeout)

    async def __aenter__(self) -> KbClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._http.aclose()

    async def _get(self, params: dict[str, str]) -> dict[str, Any]:
        response = await self._http.get(self.url, params=params)
        if response.status_code != 200:
            raise KbHostError(response.status_code, *_error_body(response))
        try:
            body = response.json()
        except ValueError:
            raise KbHostError(200, "Malformed response", "body is not JSON") from None
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("articles"), list)
            or not isinstance(body.get("total"), int)
        ):
            raise KbHostError(200, "Malformed response", "expected 'articles' and 'total'")
        return body

    def _before_sleep(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        reason = exc if isinstance(exc, KbHostError) else f"{type(exc).__name__}: {exc}"
        log.warning(
            "kb host %s: %s; retry %d in %.1fs",
            self.endpoint,
            redact(str(reason)),
            state.attempt_number,
            wait,
        )

    async def page(self, params: dict[str, str]) -> dict[str, Any]:
        """One page of the listing, retried while the failure looks transient."""
        policy = self.retry
        retrying = AsyncRetrying(
            retry=retry_if_exception(_transient),
            # Composed rather than wait_exponential_jitter, whose arguments moved
            # within tenacity 9.
            wait=wait_exponential(multiplier=policy.initial, max=policy.max)
            + wait_random(0, policy.jitter),
            stop=stop_after_delay(policy.give_up_after),
            before_sleep=self._before_sleep,
            reraise=True,
        )
        result: dict[str, Any] = await retrying(self._get, params)
        return result

    async def list_articles(
        self,
        *,
        intent: str | None = None,
        device: str | None = None,
        updated_since: datetime | None = None,
        limit: int = 100,
        attempts: int = 3,
    ) -> KbListing:
        """Every matching article; repeats a pass that saw the host change mid-way."""
        params = {"limit": str(limit)}
        if intent:
            params["intent"] = intent
        if device:
            params["device"] = device
        if updated_since is not None:
            params["updated_since"] = updated_since.isoformat().replace("+00:00", "Z")
        listing = await self._pass(params)
        for _ in range(attempts - 1):
            if listing.complete:
                break
            log.info("kb host %s changed while paging; listing again", self.endpoint)
            listing = await self._pass(params)
        return listing

    async def _pass(self, params: dict[str, str]) -> KbListing:
        articles: dict[str, dict[str, Any]] = {}
        snapshot: tuple[int, Any] | None = None
        moved = False
        malformed = offset = 0
        for _ in range(MAX_PAGES):
            body = await self.page(params | {"offset": str(offset)})
            page: list[Any] = body["articles"]
            current = (body["total"], body.get("updated_at"))
            snapshot = snapshot or current
            moved = moved or current != snapshot
            fresh = 0
            for article in page:
                article_id = article.get("id") if isinstance(article, dict) else None
                if not isinstance(article_id, str):
                    malformed += 1
                    continue
                fresh += article_id not in articles
                articles[article_id] = article
            offset += len(page)
            if not page or offset >= body["total"]:
                break
            if fresh == 0:  # the host ignores ``offset``: we would loop forever
                moved = True
                break
        total, updated_at = snapshot or (0, None)
        complete = not moved and malformed == 0 and len(articles) == total
        return KbListing(articles, total, updated_at, complete, malformed)
