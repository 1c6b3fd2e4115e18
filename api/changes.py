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
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from api.errors import error_response
from api.routes import service_error, tenant_of
from api.services.context import ServiceContext
from api.services.errors import ServiceError
from api.services.memory import check_group
from projections.graph.models import InvalidGroupIdError, require_group_id
from projections.graph.projection import DEFAULT_SCHEMA

POLL_S = 0.25
BATCH = 500
log = logging.getLogger(__name__)

_SINCE = """
SELECT r.relationship_id, r.version, r.change, r.relation_type, r.fact,
       r.source_entity_id, se.name AS source_name, r.target_entity_id, te.name AS target_name,
       r.valid_from, r.valid_to, r.recorded_at, r.invalidated_by, r.reason, r."offset"
FROM "{s}".relationships r
LEFT JOIN "{s}".entities se ON se.group_id = r.group_id AND se.entity_id = r.source_entity_id
LEFT JOIN "{s}".entities te ON te.group_id = r.group_id AND te.entity_id = r.target_entity_id
WHERE r.group_id = $1 AND r."offset" > $2 ORDER BY r."offset", r.version LIMIT $3
"""


async def _cursor_now(db: Any, group_id: str) -> int:
    try:
        value = await db.fetchval(
            f'SELECT max("offset") FROM "{DEFAULT_SCHEMA}".relationships WHERE group_id = $1',
            group_id,
        )
    except Exception:  # the graph projection has not created its tables yet
        return -1
    return -1 if value is None else int(value)


async def fact_changes(
    db: Any, group_id: str, after: int, poll_s: float = POLL_S
) -> AsyncIterator[dict[str, Any]]:
    """SSE events (``asserted`` / ``invalidated``) for versions recorded after ``after``."""
    query = _SINCE.format(s=DEFAULT_SCHEMA)
    while True:
        try:
            rows = await db.fetch(query, group_id, after, BATCH)
        except Exception as exc:  # keep the stream open across a store restart
            log.warning("change feed: %s", exc)
            rows = []
        for row in rows:
            after = max(after, int(row["offset"]))
            body = {k: v for k, v in dict(row).items() if k != "offset"}
            yield {
                "event": row["change"],
                "id": str(row["offset"]),
                "data": json.dumps(body, default=str),
            }
        if len(rows) < BATCH:
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
