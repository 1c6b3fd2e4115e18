"""The search index: one port (:mod:`.port`), two adapters, one projection.

``index_from_settings(settings)`` picks the adapter: pgvector in
``TRIBAL_POSTGRES_DSN`` when ``TRIBAL_WEAVIATE_URL`` is empty (embedded), else Weaviate
(distributed). Adapters are imported lazily, so the unused one's client need not load.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from projections.index.port import Filters, Hit, IndexedObject, Kind, SearchIndex, SearchMode
from projections.index.projection import IndexProjection

if TYPE_CHECKING:
    from runtime.settings import TribalSettings

__all__ = [
    "Filters",
    "Hit",
    "IndexProjection",
    "IndexedObject",
    "Kind",
    "SearchIndex",
    "SearchMode",
    "index_from_settings",
]


def index_from_settings(settings: TribalSettings, dims: int = 384) -> SearchIndex:
    """The live index generation the settings point at (not set up yet: call ``setup``)."""
    if settings.weaviate_url:
        from projections.index.weaviate import WeaviateIndex

        return WeaviateIndex.from_url(
            settings.weaviate_url,
            settings.weaviate_grpc_port,
            prefix=settings.weaviate_prefix,
            model=settings.embedding_model,
            dims=dims,
        )
    if not settings.postgres_dsn:
        raise ValueError("the search index needs TRIBAL_POSTGRES_DSN or TRIBAL_WEAVIATE_URL")
    from projections.index.pgvector import PgVectorIndex

    return PgVectorIndex(settings.postgres_dsn, model=settings.embedding_model, dims=dims)


def from_settings(settings: TribalSettings) -> IndexProjection:
    """The index projection over the live generation (used by ``projections.registry``)."""
    return IndexProjection(index_from_settings(settings))
