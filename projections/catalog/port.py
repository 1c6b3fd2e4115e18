"""The catalog's read port: what :mod:`projections.catalog.queries` asks of its store."""

from __future__ import annotations

from typing import Protocol

from projections.rows import Rows


class CatalogReads(Rows, Protocol):
    """A store the catalog's reads run over: rows by query (an asyncpg pool or connection)."""
