"""Processes that start together set one index up together: the API and the projections
of one `tribal up` both call ``setup`` on an empty Weaviate."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from devstack.endpoints import WeaviateEndpoint
from projections.index.weaviate import WeaviateIndex

pytestmark = [pytest.mark.slow, pytest.mark.weaviate]


async def test_concurrent_setups_of_one_weaviate_index_all_succeed(
    weaviate: WeaviateEndpoint,
) -> None:
    prefix = f"T{uuid.uuid4().hex[:10]}"
    w = weaviate
    indexes = [
        WeaviateIndex(w.http_host, w.http_port, w.grpc_host, w.grpc_port, prefix) for _ in range(4)
    ]
    try:
        results = await asyncio.gather(*(i.setup() for i in indexes), return_exceptions=True)
        assert [r for r in results if isinstance(r, BaseException)] == []
    finally:
        await indexes[0].drop()
        for i in indexes:
            await i.close()
