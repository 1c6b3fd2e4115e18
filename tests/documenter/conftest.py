"""The demo store schema (``demo/data/schema.sql``) in a database of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest

from demo import DATA
from events.schema import TableObserved
from runtime.databases import execute, temporary_database
from sources.pg_catalog import introspect

SCHEMA_SQL = DATA / "schema.sql"
DATABASE = "shop"


@dataclass
class DemoDatabase:
    dsn: str

    async def observe(self) -> list[TableObserved]:
        """Every table as the PostgreSQL source would observe it."""
        conn = await asyncpg.connect(self.dsn)
        try:
            return await introspect(conn, DATABASE)
        finally:
            await conn.close()

    async def execute(self, sql: str) -> None:
        await execute(self.dsn, sql)


@pytest.fixture
async def demo_db(postgres_dsn: str) -> AsyncIterator[DemoDatabase]:
    async with temporary_database(postgres_dsn, "doc", SCHEMA_SQL.read_text()) as dsn:
        yield DemoDatabase(dsn)
