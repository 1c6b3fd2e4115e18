"""``GET /v1/memory/changes?group_id=…``: new and invalidated facts as server-sent events.

Polls the temporal graph every :data:`POLL_S`. Relationship versions are insert-only
and carry the (partition, offset) of the event that recorded them, and a group's
facts share one partition of ``tribal.memory.facts`` (keyed by ``group_id``), so the
offset is a resumable cursor: it is each event's SSE ``id``, and a client that
reconnects with ``Last-Event-ID`` (or ``?after=``) misses nothing. Without one the
feed starts with changes recorded after the request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from api.endpoint import service_error
from api.errors import error_response
from api.routes import tenant_of
from api.services.context import ServiceContext
from api.services.errors import ServiceError
from api.services.memory import check_group
from projections.graph.changes import changes_after, last_offset
from projections.graph.models import InvalidGroupIdError, require_group_id
from projections.graph.port import GraphReads

POLL_S = 0.25
BATCH = 500
log = logging.getLogger(__name__)


async def _cursor_now(db: GraphReads, group_id: str) -> int:
    try:
        value = await last_offset(db, group_id)
    except Exception:  # the graph projection has not created its tables yet
        return -1
    return -1 if value is None else value


async def fact_changes(
    db: GraphReads, group_id: str, after: int, poll_s: float = POLL_S
) -> AsyncIterator[dict[str, Any]]:
    """SSE events (``asserted`` / ``invalidated``) for versions recorded after ``after``."""
    while True:
        try:
            changes = await changes_after(db, group_id, after, limit=BATCH)
        except Exception as exc:  # keep the stream open across a store restart
            log.warning("change feed: %s", exc)
            changes = []
        for change in changes:
            after = max(after, change.offset)
            body = {k: v for k, v in asdict(change).items() if k != "offset"}
            yield {
                "event": change.change,
                "id": str(change.offset),
                "data": json.dumps(body, default=str),
            }
        if len(changes) < BATCH:
            await asyncio.sleep(poll_s)


def change_routes(ctx: Callable[[], ServiceContext]) -> list[Route]:
    async def changes(request: Request) -> Response:
        group_id = request.query_params.get("group_id", "")
        try:
            check_group(require_group_id(group_id), tenant_of(request))
        except InvalidGroupIdError as exc:
            return error_response(422, exc.code, str(exc))
        except ServiceError as exc:
            return service_error(exc)
        db = ctx().db
        if db is None:
            return error_response(
                503, "STORE_UNAVAILABLE", "no PostgreSQL is configured", recoverable=True
            )
        raw = request.headers.get("last-event-id") or request.query_params.get("after")
        try:
            after = int(raw) if raw else await _cursor_now(db, group_id)
        except ValueError:
            return error_response(422, "INVALID_REQUEST", "after/Last-Event-ID must be an offset")
        return EventSourceResponse(fact_changes(db, group_id, after), ping=15)

    return [Route("/v1/memory/changes", changes, methods=["GET"])]
