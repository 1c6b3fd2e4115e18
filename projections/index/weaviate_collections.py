"""Which Weaviate collection holds what: one per kind plus pending vectors and offsets.

Each is named ``{prefix}{Logical}_{generation}``; the live generation is reached through
the aliases ``{prefix}{Logical}``. The adapter's writes (:mod:`projections.index.weaviate`)
and reads (:mod:`projections.index.weaviate_search`) both find their collections here.
"""

from __future__ import annotations

from typing import Any

from weaviate.collections.classes.filters import _Filters

from projections.index import weaviate_schema as ws
from projections.index.port import Filters, Kind
from projections.index.scoring import weaviate_tenant


def stored_vector(obj: Any) -> list[float] | None:
    """The self-provided (unnamed) vector of a returned object, if any."""
    vectors = obj.vector or {}
    value = vectors.get("default")
    return list(value) if value is not None else None


class WeaviateCollections:
    """The collections of one generation, through the client once it is connected."""

    def __init__(self, prefix: str, generation: str | None) -> None:
        self.prefix = prefix
        self.generation = generation
        """``None``: the live generation, through aliases; else a concrete shadow."""
        self.client: Any = None

    def name(self, logical: str) -> str:
        """The alias (live generation) or the collection (a shadow) of ``logical``."""
        alias = f"{self.prefix}{logical}"
        return alias if self.generation is None else f"{alias}_{self.generation}"

    def col(self, logical: str, tenant: str | None = None) -> Any:
        """The collection, within the Weaviate tenant of ``tenant`` when one is given."""
        col = self.client.collections.use(self.name(logical))
        return col.with_tenant(weaviate_tenant(tenant)) if tenant is not None else col

    def kind_col(self, kind: Kind, tenant: str) -> Any:
        """Where objects of ``kind`` and ``tenant`` are written."""
        return self.col(kind.value, tenant if kind.is_memory else None)

    def scoped(
        self, kind: Kind, tenant: str | None, filters: Filters | None
    ) -> tuple[Any, _Filters | None]:
        """The collection to read ``kind`` from and the filter to read it with.

        Memory kinds keep each tenant in a Weaviate tenant of its own; the other kinds
        carry ``tenant`` as a property, filtered on.
        """
        if kind.is_memory:
            return self.col(kind.value, tenant), ws.to_filter(None, filters)
        return self.col(kind.value), ws.to_filter(tenant, filters)

    async def concrete(self, kind: Kind) -> Any:
        """The collection itself: the tenants API does not resolve aliases."""
        name = self.name(kind.value)
        if self.generation is None:
            alias = await self.client.alias.get(alias_name=name)
            name = alias.collection if alias is not None else name
        return self.client.collections.use(name)
