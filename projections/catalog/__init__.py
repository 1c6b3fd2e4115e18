"""The schema catalog: tables, columns, keys, indexes, documentation and domains.

Folded from ``tribal.schema.changes`` (what the databases look like) and
``tribal.tables.documented`` (what the documenter wrote about them) into PostgreSQL
schema ``tribal_catalog``. :mod:`projections.catalog.queries` reads it for the API
(``get_table_schema``, ``get_join_path``, ``get_domain_overview``, ``list_domains``).
"""

from __future__ import annotations

from projections.catalog.projection import DEFAULT_SCHEMA, CatalogProjection

catalog_projection = CatalogProjection
"""``catalog_projection(dsn, schema=None)``: the catalog projection writing into ``schema`` (by
default ``tribal_catalog``) of the database at ``dsn``."""

from_settings = CatalogProjection.from_settings
"""The installation's catalog projection (``projections.registry`` entry point)."""


__all__ = ["DEFAULT_SCHEMA", "CatalogProjection", "catalog_projection", "from_settings"]
