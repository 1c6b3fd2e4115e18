"""The demo store schema (``demo/data/schema.sql``) in a database of its own."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest

from demo import DATA
from events.schema import TableObserved
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
        conn = await asyncpg.connect(self.dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()


@pytest.fixture
async def demo_db(postgres_dsn: str) -> AsyncIterator[DemoDatabase]:
    name = f"doc_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f"CREATE DATABASE {name}")
        demo = DemoDatabase(postgres_dsn.rsplit("/", 1)[0] + "/" + name)
        await demo.execute(SCHEMA_SQL.read_text())
        yield demo
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await admin.close()
