"""Versions and liveness of services somebody else started."""

from __future__ import annotations

import asyncio
import importlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scripts import services


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


def kafka_answers(bootstrap: str) -> bool:
    host, _, port = bootstrap.split(",")[0].rpartition(":")
    try:
        return bool(services.kafka_brokers(host, int(port)))
    except (OSError, RuntimeError, ValueError):
        return False


def weaviate_version(url: str) -> str:
    return str(services.weaviate_meta(url).get("version", ""))


def docker_engine_answers(timeout: float = 2.0) -> bool:
    """A Docker engine that answers ping within ``timeout`` (a client alone is not enough)."""
    try:
        docker: Any = importlib.import_module("docker")
        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False
