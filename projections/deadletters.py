"""Dead letters as a table: counts and the latest reasons for ``tribal status``."""

from __future__ import annotations

from typing import Any

from events.deadletter import DeadLettered
from projections.base import Applied
from projections.pg import PgProjection


def storable(text: str) -> str:
    """``text`` as PostgreSQL ``text`` takes it: a NUL or a lone surrogate (a hostile key,
    a reason quoting the bad payload) escaped, not refused: the store of dead letters is
    the one place that must take every letter.

    >>> storable("key\\x00\\ud800")
    'key\\\\x00\\\\ud800'
    """
    text = text.replace("\x00", "\\x00")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class DeadLetterProjection(PgProjection):
    name: str = "deadletters"
    topics: tuple[str, ...] = ("deadletter",)
    tables = (
        """CREATE TABLE IF NOT EXISTS {s}.deadletters (
            topic          text    NOT NULL,
            partition      integer NOT NULL,
            "offset"       bigint  NOT NULL,
            origin_topic   text    NOT NULL,
            origin_partition integer NOT NULL,
            origin_offset  bigint  NOT NULL,
            origin_key     text,
            error_code     text    NOT NULL,
            error_message  text    NOT NULL,
            payload_bytes  integer NOT NULL,
            occurred_at    timestamptz NOT NULL,
            PRIMARY KEY (topic, partition, "offset")
        )""",
    )

    @PgProjection.handles(DeadLettered)
    async def on_dead_lettered(self, conn: Any, e: DeadLettered, applied: Applied) -> None:
        await conn.execute(
            f"INSERT INTO {self._s}.deadletters VALUES "
            "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
            applied.topic,
            applied.partition,
            applied.offset,
            e.origin_topic,
            e.origin_partition,
            e.origin_offset,
            None if e.origin_key is None else storable(e.origin_key),
            storable(e.error_code),
            storable(e.error_message),
            len(e.payload),
            e.occurred_at,
        )

    async def summary(self, last: int = 5) -> dict[str, Any]:
        """Total, counts per error code, and the latest reasons."""
        rows = await self.pool.fetch(
            f"SELECT error_code, count(*) AS n FROM {self._s}.deadletters "
            "GROUP BY error_code ORDER BY n DESC"
        )
        latest = await self.pool.fetch(
            f"SELECT origin_topic, origin_offset, error_code, error_message, occurred_at FROM "
            f"{self._s}.deadletters ORDER BY occurred_at DESC LIMIT $1",
            last,
        )
        return {
            "total": sum(r["n"] for r in rows),
            "by_code": {r["error_code"]: r["n"] for r in rows},
            "latest": [dict(r) for r in latest],
        }
