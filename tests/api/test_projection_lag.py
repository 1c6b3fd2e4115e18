"""``/healthz`` measures each projection's lag from the offsets the projection stored: the
API builds no projection and creates none of their tables to read them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest
from starlette.testclient import TestClient

from api.app import create_app
from devstack.pipeline import Pipeline, isolated_settings
from projections.pg import OFFSETS_DDL
from runtime.databases import fresh_database
from tests.projections.test_runner import dead

pytestmark = pytest.mark.slow


async def tables(dsn: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT table_schema || '.' || table_name AS t FROM information_schema.tables "
            "WHERE table_schema LIKE 'tribal%'"
        )
    finally:
        await conn.close()
    return {r["t"] for r in rows}


async def record_applied(dsn: str, ends: dict[tuple[str, int], int]) -> None:
    """What the dead-letter projection writes with its data: the next offset per partition."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute('CREATE SCHEMA IF NOT EXISTS "tribal_ops"')
        await conn.execute(OFFSETS_DDL.format(schema='"tribal_ops"'))
        await conn.executemany(
            'INSERT INTO "tribal_ops".projection_offsets (projection, topic, partition, '
            "next_offset) VALUES ('deadletters', $1, $2, $3)",
            [(t, p, o) for (t, p), o in ends.items()],
        )
    finally:
        await conn.close()


def test_lag_is_read_from_the_stored_offsets_without_creating_projection_tables(
    tansu_bootstrap: str, postgres_dsn: str, tmp_path: Path
) -> None:
    dsn = asyncio.run(fresh_database(postgres_dsn, "lag"))
    settings = isolated_settings(tansu_bootstrap, tmp_path, postgres_dsn=dsn)
    pipeline = Pipeline(settings)
    asyncio.run(pipeline.create_topics())
    asyncio.run(pipeline.produce("deadletter", [(f"kb-{n}", dead(n)) for n in range(3)]))
    records = asyncio.run(pipeline.read_all("deadletter"))
    with TestClient(create_app(settings)) as client:
        behind = client.get("/healthz").json()["projections"]
        assert behind["deadletters"]["lag_messages"] == 3
        assert behind["catalog"]["lag_messages"] == 0
        made = asyncio.run(tables(dsn))
        for store in ("tribal_ops.deadletters", "tribal_ops.projection_offsets"):
            assert store not in made
        assert not {t for t in made if t.startswith(("tribal_catalog.", "tribal_graph."))}

        ends: dict[tuple[str, int], int] = {}
        name = pipeline.topic("deadletter")
        for r in records:
            ends[(name, r.partition)] = max(ends.get((name, r.partition), 0), r.offset + 1)
        asyncio.run(record_applied(dsn, ends))
        caught_up = client.get("/healthz").json()["projections"]
    assert caught_up["deadletters"]["lag_messages"] == 0
