"""The schema catalog: tables, columns, keys, indexes, documentation and domains.

Folded from ``tribal.schema.changes`` (what the databases look like) and
``tribal.tables.documented`` (what the documenter wrote about them) into PostgreSQL
schema ``tribal_catalog``. :mod:`projections.catalog.queries` reads it for the API
(``get_table_schema``, ``get_join_path``, ``get_domain_overview``, ``list_domains``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from projections.catalog.projection import DEFAULT_SCHEMA, CatalogProjection

if TYPE_CHECKING:
    from runtime.settings import TribalSettings


def catalog_projection(dsn: str, schema: str = DEFAULT_SCHEMA) -> CatalogProjection:
    """The catalog projection writing into ``schema`` of the database at ``dsn``."""
    return CatalogProjection(dsn, schema=schema)


def from_settings(settings: TribalSettings) -> CatalogProjection:
    """The installation's catalog projection (``projections.registry`` entry point)."""
    return catalog_projection(settings.postgres_dsn)


__all__ = ["DEFAULT_SCHEMA", "CatalogProjection", "catalog_projection", "from_settings"]
