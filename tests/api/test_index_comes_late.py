"""An API that started before its search index answered starts searching once it does."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from api.services.context import close_context, index_unavailable, open_context
from devstack.postgres import postgres_node
from runtime.embedded.process import free_port
from runtime.settings import TribalSettings

pytestmark = pytest.mark.slow


async def test_the_index_is_set_up_in_the_background_once_its_store_answers(
    tmp_path: Path,
) -> None:
    port = free_port()
    settings = TribalSettings(
        postgres_dsn=f"postgresql://postgres@127.0.0.1:{port}/postgres", data_dir=tmp_path
    )
    ctx = await open_context(settings, load_model=False)
    try:
        assert ctx.index is None
        code, message = index_unavailable(ctx)
        assert code == "INDEX_UNAVAILABLE"
        assert "retrying" in message
        node = postgres_node(tmp_path / "pg", port=port, durable=False).start()
        try:
            for _ in range(300):
                if ctx.index is not None:
                    break
                await asyncio.sleep(0.1)
            assert ctx.index is not None
            assert "index_setup" not in ctx.extra
        finally:
            await close_context(ctx)
            node.stop()
    finally:
        ctx.extra.pop("index_setup", None)


async def test_an_api_without_any_index_says_none_is_configured(tmp_path: Path) -> None:
    ctx = await open_context(TribalSettings(data_dir=tmp_path), load_model=False)
    try:
        assert index_unavailable(ctx) == ("INDEX_UNAVAILABLE", "no search index is configured")
    finally:
        await close_context(ctx)
