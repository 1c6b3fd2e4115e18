"""The graph's read port: what :mod:`projections.graph.queries` and
:mod:`projections.graph.changes` ask of their store."""

from __future__ import annotations

from typing import Any, Protocol

from projections.rows import Rows


class GraphReads(Rows, Protocol):
    """A store the graph's reads run over (an asyncpg pool or connection)."""

    async def fetchval(self, query: str, *args: Any) -> Any:
        """The first column of the first row ``query`` returns, or None."""
        ...
