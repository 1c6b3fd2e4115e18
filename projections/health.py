"""Stage health: what each projection runner last said about itself, readable anywhere.

A runner may live in another process than the API (``tribal worker``, ``tribal
project``), so it writes one row per stage to PostgreSQL every second: how far behind
it is, whether it is *stuck* (has work and has not advanced for ``stuck_after_s``), where
(topic, partition, offset) and the last error. ``/healthz``, ``/metrics`` and ``tribal
status`` read the rows. A runner that stopped writing while it had work is stuck too:
its row goes stale.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from projections.rows import from_row

HEALTH_SCHEMA = "tribal_ops"


@dataclass(frozen=True, kw_only=True)
class StageHealth:
    """One stage's latest report; built by keyword (``partition`` and ``offset`` are both
    ints, easily swapped)."""

    stage: str
    lag_messages: int
    stuck: bool
    topic: str | None = None
    """Where the stage stands still: the topic and partition that have had work longest
    without advancing (None while every partition advances)."""
    partition: int | None = None
    offset: int | None = None
    """The next offset the stage has to apply on the partition that does not advance."""
    stalled_s: float = 0.0
    """Seconds that partition has had work without advancing."""
    last_error: str | None = None
    error_kind: str | None = None
    reported_at: float = 0.0

    def stale(self, now: float, stuck_after_s: float) -> bool:
        """The runner stopped reporting while it had work: treat as stuck."""
        return self.lag_messages > 0 and now - self.reported_at > stuck_after_s + 5.0

    def as_dict(self, now: float | None = None) -> dict[str, Any]:
        body = asdict(self)
        body["reported_s_ago"] = round((now or time.time()) - self.reported_at, 1)
        body["stalled_s"] = round(self.stalled_s, 1)
        del body["reported_at"]
        return body


_DDL = f"""CREATE TABLE IF NOT EXISTS "{HEALTH_SCHEMA}".stage_health (
    stage        text PRIMARY KEY,
    lag_messages bigint  NOT NULL,
    stuck        boolean NOT NULL,
    topic        text,
    partition    integer,
    "offset"     bigint,
    stalled_s    double precision NOT NULL DEFAULT 0,
    last_error   text,
    error_kind   text,
    reported_at  timestamptz NOT NULL DEFAULT now()
)"""


class HealthBoard:
    """Stage reports in PostgreSQL (the ``tribal_ops`` schema, beside the dead letters)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._pool: Any = None

    async def _ready(self) -> Any:
        if self._pool is None:
            import asyncpg

            pool = await asyncpg.create_pool(self.dsn, min_size=1, max_size=2)
            async with pool.acquire() as conn, conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext('tribal-setup'))")
                await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{HEALTH_SCHEMA}"')
                await conn.execute(_DDL)
            self._pool = pool
        return self._pool

    async def report(self, health: StageHealth) -> None:
        """Replace the stage's row with ``health``."""
        pool = await self._ready()
        await pool.execute(
            f'INSERT INTO "{HEALTH_SCHEMA}".stage_health (stage, lag_messages, stuck, topic, '
            'partition, "offset", stalled_s, last_error, error_kind, reported_at) '
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now()) ON CONFLICT (stage) DO UPDATE "
            "SET lag_messages = EXCLUDED.lag_messages, stuck = EXCLUDED.stuck, "
            'topic = EXCLUDED.topic, partition = EXCLUDED.partition, "offset" = '
            'EXCLUDED."offset", stalled_s = EXCLUDED.stalled_s, last_error = '
            "EXCLUDED.last_error, error_kind = EXCLUDED.error_kind, reported_at = now()",
            health.stage,
            health.lag_messages,
            health.stuck,
            health.topic,
            health.partition,
            health.offset,
            health.stalled_s,
            health.last_error,
            health.error_kind,
        )

    async def read(self) -> list[StageHealth]:
        """Every stage's latest report."""
        pool = await self._ready()
        rows = await pool.fetch(
            f"SELECT *, extract(epoch FROM reported_at) AS reported "
            f'FROM "{HEALTH_SCHEMA}".stage_health ORDER BY stage'
        )
        return [from_row(StageHealth, r, reported_at=float(r["reported"])) for r in rows]

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


def stuck_stages(reports: list[StageHealth], stuck_after_s: float) -> list[dict[str, Any]]:
    """The stages to name in ``/healthz``: stuck by their own report, or gone silent."""
    now = time.time()
    out = []
    for h in reports:
        if h.stuck or h.stale(now, stuck_after_s):
            body = h.as_dict(now)
            if not h.stuck:
                body["stuck"] = True
                body["last_error"] = body["last_error"] or "the stage stopped reporting"
            out.append(body)
    return out
