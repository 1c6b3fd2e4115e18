"""PostgreSQL databases made for one run (the demo, a test stack, the eval, a benchmark):
created on the server an admin DSN reaches, as its user, and dropped when done."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg


def database_dsn(admin_dsn: str, name: str) -> str:
    """The DSN of database ``name`` on ``admin_dsn``'s server, as the same user."""
    return admin_dsn.rsplit("/", 1)[0] + f"/{name}"


async def execute(dsn: str, script: str) -> None:
    """Run ``script`` (any number of statements) in the database ``dsn`` names."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(script)
    finally:
        await conn.close()


async def create_database(admin_dsn: str, name: str, *, if_missing: bool = False) -> str:
    """Create database ``name`` (with ``if_missing``, unless it exists); return its DSN."""
    conn = await asyncpg.connect(admin_dsn)
    try:
        exists = if_missing and await conn.fetchval(
            "SELECT 1 FROM pg_database WHERE datname = $1", name
        )
        if not exists:
            await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return database_dsn(admin_dsn, name)


async def fresh_database(admin_dsn: str, prefix: str, script: str = "") -> str:
    """A new database no other run shares, ``<prefix>_<10 hex digits>``, with ``script``
    run in it; return its DSN."""
    dsn = await create_database(admin_dsn, f"{prefix}_{uuid.uuid4().hex[:10]}")
    if script:
        await execute(dsn, script)
    return dsn


async def drop_database(admin_dsn: str, dsn: str) -> None:
    """Drop the database ``dsn`` names, closing its connections; a missing one is fine."""
    name = dsn.rsplit("/", 1)[1].split("?", 1)[0]
    await execute(admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@asynccontextmanager
async def temporary_database(admin_dsn: str, prefix: str, script: str = "") -> AsyncIterator[str]:
    """A :func:`fresh_database` for the length of a ``with`` block: its DSN, dropped after."""
    dsn = await fresh_database(admin_dsn, prefix, script)
    try:
        yield dsn
    finally:
        await drop_database(admin_dsn, dsn)
