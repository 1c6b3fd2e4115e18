"""A help-desk host serving seed 002's Contract 1, ``GET /api/kb/articles``.

Tests and ``make demo`` run it in place of a real help desk. Articles live in memory
(optionally loaded from a JSON file holding a list of Contract 1 articles or
``{"articles": [...]}``). The contract leaves pagination open ("paginated if >
limit"); this host pages with ``offset`` (default 0) next to ``limit``, in a stable
order (``last_updated``, then ``id``), and ``total`` counts every match, so a client
reads ``offset = 0, limit, 2*limit, …`` until it has ``total`` articles.
``updated_since`` is inclusive; ``updated_at`` is when the knowledge base last
changed (any add, update or delete), so a client can tell whether it moved while
it was paging.

Beyond the contract, for tests and demos: ``PUT``/``DELETE /api/kb/articles/{id}``
edit articles, ``POST /_control/outage`` (``{"seconds": s, "count": n, "after": k}``,
all optional) makes the listing answer 500 with the contract's error body after
``k`` more good requests, for ``s`` seconds or ``n`` requests or until
``POST /_control/recover``, and ``GET /_control/stats`` counts requests.
``python -m demo.kb_host --articles file.json --port 9000`` serves a file.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

UNAVAILABLE = {"error": "Internal server error", "message": "Knowledge base unavailable"}
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


class BadRequestError(ValueError):
    """A parameter or article the host refuses (answered 400)."""


def format_instant(value: datetime) -> str:
    """``2024-12-15T10:00:00Z`` as in the seed; microseconds only when there are some."""
    text = value.astimezone(UTC).replace(tzinfo=None).isoformat()
    return f"{text}Z"


def parse_instant(value: str) -> datetime:
    """An ISO 8601 date or date-time; a naive one is UTC, a date is its midnight."""
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(value.strip()), datetime.min.time())
        except ValueError:
            raise BadRequestError(f"not an ISO 8601 date or date-time: {value!r}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _strings(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequestError(f"metadata.{field} must be a list of strings")
    return list(value)


def _normalise(article: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    for field in ("id", "title", "url", "content"):
        if not isinstance(article.get(field), str) or not article[field]:
            raise BadRequestError(f"article needs a non-empty string {field!r}")
    meta = article.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise BadRequestError("article metadata must be an object")
    stamp = meta.get("last_updated")
    metadata: dict[str, Any] = {
        "intent": _strings(meta.get("intent"), "intent"),
        "device": _strings(meta.get("device"), "device"),
        "last_updated": format_instant(parse_instant(stamp) if stamp else now),
    }
    if meta.get("author") is not None:
        metadata["author"] = str(meta["author"])
    return {f: article[f] for f in ("id", "title", "url", "content")} | {"metadata": metadata}


class KbStore:
    """The host's articles and its failure switches; safe to use from any thread."""

    def __init__(self, articles: Iterable[Mapping[str, Any]] = ()) -> None:
        self._lock = threading.Lock()
        self._articles: dict[str, dict[str, Any]] = {}
        self._changed_at = datetime.now(UTC)
        self.requests = 0
        self.errors_served = 0
        self._fail_after = 0
        self._fail_count: int | None = None
        self._fail_seconds: float | None = None
        self._fail_until: float | None = None
        self._failing = False
        self.on_request: Callable[[int], None] | None = None
        """Called with the request number before a listing is served (tests only)."""
        for article in articles:
            self.upsert(article)

    @classmethod
    def from_json(cls, path: Path) -> KbStore:
        data = json.loads(Path(path).read_text())
        return cls(data["articles"] if isinstance(data, dict) else data)

    def _touch(self) -> None:
        now = datetime.now(UTC)
        self._changed_at = max(now, self._changed_at + timedelta(microseconds=1))

    def upsert(self, article: Mapping[str, Any]) -> dict[str, Any]:
        """Add or replace an article; without ``last_updated`` it is stamped now (to the
        second, as many help desks store it)."""
        clean = _normalise(article, datetime.now(UTC).replace(microsecond=0))
        with self._lock:
            self._articles[clean["id"]] = clean
            self._touch()
        return clean

    def delete(self, article_id: str) -> bool:
        with self._lock:
            found = self._articles.pop(article_id, None) is not None
            if found:
                self._touch()
        return found

    def outage(
        self, seconds: float | None = None, *, count: int | None = None, after_requests: int = 0
    ) -> None:
        """Answer listings with 500 after ``after_requests`` more good ones, for
        ``seconds``, or ``count`` requests, or (neither) until :meth:`recover`."""
        with self._lock:
            self._failing = True
            self._fail_after = after_requests
            self._fail_count = count
            self._fail_seconds = seconds
            self._fail_until = None

    def recover(self) -> None:
        with self._lock:
            self._failing = False

    def next_request_fails(self) -> bool:
        """Count one listing request and say whether it must answer 500."""
        with self._lock:
            self.requests += 1
            if not self._failing:
                return False
            if self._fail_after > 0:
                self._fail_after -= 1
                return False
            if self._fail_seconds is not None:
                if self._fail_until is None:
                    self._fail_until = time.monotonic() + self._fail_seconds
                if time.monotonic() >= self._fail_until:
                    self._failing = False
                    return False
            if self._fail_count is not None:
                if self._fail_count <= 0:
                    self._failing = False
                    return False
                self._fail_count -= 1
            self.errors_served += 1
            return True

    def query(
        self,
        *,
        intent: str | None = None,
        device: str | None = None,
        updated_since: datetime | None = None,
        limit: int = DEFAULT_LIMIT,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The Contract 1 response body for these parameters."""
        with self._lock:
            rows = list(self._articles.values())
            changed_at = self._changed_at
        if intent:
            rows = [a for a in rows if intent.lower() in _lower(a["metadata"]["intent"])]
        if device:
            rows = [a for a in rows if device.lower() in _lower(a["metadata"]["device"])]
        keyed = sorted(((parse_instant(a["metadata"]["last_updated"]), a) for a in rows), key=_k)
        if updated_since is not None:
            keyed = [(at, a) for at, a in keyed if at >= updated_since]
        return {
            "articles": [a for _, a in keyed[offset : offset + limit]],
            "total": len(keyed),
            "updated_at": format_instant(changed_at),
        }


def _lower(values: list[str]) -> set[str]:
    return {v.lower() for v in values}


def _k(item: tuple[datetime, dict[str, Any]]) -> tuple[datetime, str]:
    return item[0], item[1]["id"]


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequestError(f"{name} must be an integer, got {raw!r}") from None
    if not low <= value <= high:
        raise BadRequestError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _error(status: int, error: str, message: str) -> JSONResponse:
    return JSONResponse({"error": error, "message": message}, status_code=status)


def create_kb_host(store: KbStore | None = None, token: str | None = None) -> Starlette:
    """The host app over ``store``; with ``token`` every request needs ``Bearer <token>``."""
    kb = store if store is not None else KbStore()

    def unauthorised(request: Request) -> JSONResponse | None:
        if token and request.headers.get("authorization") != f"Bearer {token}":
            return _error(401, "Unauthorized", "Missing or invalid bearer token")
        return None

    async def list_articles(request: Request) -> Response:
        if (denied := unauthorised(request)) is not None:
            return denied
        if kb.on_request is not None:
            kb.on_request(kb.requests + 1)
        if kb.next_request_fails():
            return JSONResponse(UNAVAILABLE, status_code=500)
        p = request.query_params
        try:
            since = p.get("updated_since")
            body = kb.query(
                intent=p.get("intent") or None,
                device=p.get("device") or None,
                updated_since=parse_instant(since) if since else None,
                limit=_int(p, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
                offset=_int(p, "offset", 0, 0, 2**31),
            )
        except BadRequestError as exc:
            return _error(400, "Bad request", str(exc))
        return JSONResponse(body)

    async def put_article(request: Request) -> Response:
        if (denied := unauthorised(request)) is not None:
            return denied
        try:
            body = await request.json()
            if not isinstance(body, dict):
                raise BadRequestError("body must be a JSON object")
            article = kb.upsert(body | {"id": request.path_params["article_id"]})
        except (BadRequestError, ValueError) as exc:
            return _error(400, "Bad request", str(exc))
        return JSONResponse(article)

    async def delete_article(request: Request) -> Response:
        if (denied := unauthorised(request)) is not None:
            return denied
        if kb.delete(request.path_params["article_id"]):
            return Response(status_code=204)
        return _error(404, "Not found", "No such article")

    async def outage(request: Request) -> Response:
        if (denied := unauthorised(request)) is not None:
            return denied
        body = await request.json() if await request.body() else {}
        if not isinstance(body, dict):
            return _error(400, "Bad request", "body must be a JSON object")
        kb.outage(body.get("seconds"), count=body.get("count"), after_requests=body.get("after", 0))
        return JSONResponse({"ok": True})

    async def recover(request: Request) -> Response:
        if (denied := unauthorised(request)) is not None:
            return denied
        kb.recover()
        return JSONResponse({"ok": True})

    async def stats(request: Request) -> Response:
        return JSONResponse({"requests": kb.requests, "errors_served": kb.errors_served})

    app = Starlette(
        routes=[
            Route("/api/kb/articles", list_articles, methods=["GET"]),
            Route("/api/kb/articles/{article_id}", put_article, methods=["PUT"]),
            Route("/api/kb/articles/{article_id}", delete_article, methods=["DELETE"]),
            Route("/_control/outage", outage, methods=["POST"]),
            Route("/_control/recover", recover, methods=["POST"]),
            Route("/_control/stats", stats, methods=["GET"]),
        ]
    )
    app.state.kb = kb
    return app


def main(argv: list[str] | None = None) -> None:
    """``python -m demo.kb_host --articles helpdesk.json --port 9000``."""
    import uvicorn

    parser = argparse.ArgumentParser(description="Serve a help-desk KB (seed 002, Contract 1).")
    parser.add_argument("--articles", type=Path, help="JSON list of Contract 1 articles.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    args = parser.parse_args(argv)
    store = KbStore.from_json(args.articles) if args.articles else KbStore()
    app = create_kb_host(store, token=os.environ.get("KB_HOST_TOKEN") or None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
