"""The temporal entity graph: entities, aliases and relationships over two time axes.

Folded from ``tribal.memory.facts`` (and ``MemoryForgotten`` on
``tribal.memory.turns``) into PostgreSQL schema ``tribal_graph``. World time is
``valid_from``/``valid_to``; system time is ``recorded_at``/``expired_at``, the
``occurred_at`` of the events that recorded and superseded each version. Nothing is
updated in place but the current-state rows: every change of a relationship is a new
version, so :mod:`projections.graph.queries` can answer "what was true then" and
"what did we know then". Every query is confined to one ``group_id``.
"""

from __future__ import annotations

from projections.graph.projection import DEFAULT_SCHEMA, GraphProjection

graph_projection = GraphProjection
"""``graph_projection(dsn, schema=None)``: the graph projection writing into ``schema`` (by
default ``tribal_graph``) of the database at ``dsn``."""

from_settings = GraphProjection.from_settings
"""The installation's graph projection (``projections.registry`` entry point)."""


__all__ = ["DEFAULT_SCHEMA", "GraphProjection", "from_settings", "graph_projection"]
