"""Reading PostgreSQL rows: the reads the read ports are made of, and rows into results.

Shared by the catalog's and the graph's reads (and their projections), which must not
import each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

D = TypeVar("D", bound="DataclassInstance")

Row = Mapping[str, Any]
"""A row as asyncpg returns it (an ``asyncpg.Record``): its columns by name."""


class Rows(Protocol):
    """The reads the catalog's and the graph's read ports share.

    An asyncpg pool or connection has them, so either serves any read port made of them.
    """

    async def fetch(self, query: str, *args: Any) -> list[Row]:
        """Every row ``query`` returns."""
        ...

    async def fetchrow(self, query: str, *args: Any) -> Row | None:
        """The first row ``query`` returns, or None."""
        ...


def quoted(schema: str) -> str:
    """``schema`` as a quoted identifier, ready to qualify a table name in SQL."""
    return f'"{schema}"'


def contains_pattern(text: str) -> str:
    """A ``LIKE``/``ILIKE`` pattern matching what contains ``text``, ``%`` and ``_`` in it
    matching themselves."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def from_row(result: type[D], row: Row, **computed: Any) -> D:
    """A ``result`` dataclass whose fields are ``row``'s columns of the same names, but
    for those given in ``computed`` (renamed, decoded or derived columns)."""
    named = {f.name: row[f.name] for f in dataclasses.fields(result) if f.name not in computed}
    return result(**named, **computed)
