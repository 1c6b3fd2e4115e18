"""PostgreSQL 18 + pgvector: :class:`runtime.embedded.postgres.EmbeddedPostgres`."""

from __future__ import annotations

import asyncio
import importlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from runtime.embedded.postgres import EmbeddedPostgres


def postgres_node(
    state_dir: Path, *, port: int | None = None, tie_to_parent: bool = True, durable: bool = True
) -> EmbeddedPostgres:
    """An :class:`EmbeddedPostgres` for ``state_dir/data`` (not started)."""
    state_dir = Path(state_dir).absolute()
    state_dir.mkdir(parents=True, exist_ok=True)
    # The server may run as an unprivileged account (when we are root): let it in.
    state_dir.chmod(state_dir.stat().st_mode | 0o055)
    return EmbeddedPostgres(
        state_dir / "data",
        port=port,
        log_path=state_dir / "postgres.log",
        tie_to_parent=tie_to_parent,
        durable=durable,
    )


def postgres_server_version(dsn: str) -> str:
    """``SHOW server_version`` through asyncpg, on a private loop in a worker thread.

    A fixture runs while pytest-asyncio owns this thread's event loop; asyncio.run here
    would replace (and then clear) that loop.
    """

    async def query() -> str:
        asyncpg: Any = importlib.import_module("asyncpg")
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return str(await conn.fetchval("SHOW server_version"))
        finally:
            await conn.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        version = pool.submit(asyncio.run, query()).result(timeout=30)
    return version.split()[0]
