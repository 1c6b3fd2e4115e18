"""Tenant isolation: no graph query runs without a valid group_id, none crosses groups."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devstack import Broker
from events.facts import EntitiesExtracted, EntityMerged
from events.memory import MemoryForgotten
from projections.graph import changes, graph_projection
from projections.graph import queries as q
from projections.graph.models import InvalidGroupIdError
from projections.runner import ProjectionRunner
from tests.pipelines import fresh_pipeline
from tests.projections.feed import opened
from tests.projections.test_graph import (
    ACME,
    ALICE,
    AT_ACME,
    BOB,
    EPISODE,
    day,
    entity,
    people,
    works_at,
    year,
)
from tests.projections.test_runner import fresh_database
from tests.projections.topic_feed import TopicFeed

PUBLIC_QUERIES = [
    fn
    for module in (q, changes)
    for name, fn in inspect.getmembers(module, inspect.iscoroutinefunction)
    if not name.startswith("_") and fn.__module__ == module.__name__
]
BAD_GROUP_IDS = [None, "", "   ", "tenant", ":session", "tenant:", "a:b:c", "a:b; DROP", "*:*", 7]
OTHER_ARGS: dict[str, Any] = {"entity_id": ALICE, "name_like": "a", "after": -1, "limit": 1}


def call(fn: Callable[..., Any], group_id: object, db: Any = None) -> Any:
    params = inspect.signature(fn).parameters
    args = {name: OTHER_ARGS[name] for name in params if name in OTHER_ARGS}
    return fn(db, group_id=group_id, **args)


def test_every_public_graph_query_requires_a_group_id() -> None:
    assert {fn.__name__ for fn in PUBLIC_QUERIES} >= {
        "facts_for",
        "entity_with_history",
        "search_entities",
        "changes_after",
        "last_offset",
    }
    for fn in PUBLIC_QUERIES:
        group_id = inspect.signature(fn).parameters.get("group_id")
        assert group_id is not None, f"{fn.__name__} takes no group_id"
        assert group_id.default is inspect.Parameter.empty, f"{fn.__name__} defaults group_id"


@pytest.mark.parametrize("fn", PUBLIC_QUERIES, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("group_id", BAD_GROUP_IDS, ids=repr)
async def test_no_graph_query_runs_with_a_missing_or_malformed_group_id(
    fn: Callable[..., Any], group_id: object
) -> None:
    # db=None: reaching the database at all would raise AttributeError, not this.
    with pytest.raises(InvalidGroupIdError):
        await call(fn, group_id)


@pytest.mark.parametrize("fn", PUBLIC_QUERIES, ids=lambda fn: fn.__name__)
async def test_no_graph_query_can_be_called_without_group_id(fn: Callable[..., Any]) -> None:
    params = inspect.signature(fn).parameters
    args = {name: OTHER_ARGS[name] for name in params if name in OTHER_ARGS}
    with pytest.raises(TypeError):
        await fn(None, **args)


async def test_one_tenants_memory_is_never_visible_to_another(postgres_dsn: str) -> None:
    a, b = "tenantA:s1", "tenantB:s1"
    async with opened(graph_projection(await fresh_database(postgres_dsn))) as graph:
        # Same entity and relationship ids in both groups: isolation must not rely on ids.
        await TopicFeed(graph)(
            people(a),
            works_at(AT_ACME, ACME, year(2020), 1, a),
            EntitiesExtracted(group_id=b, episode_id=EPISODE[1], generated_by="local",
                              model="rules", entities=(entity(BOB, "Bob", "person"),),
                              occurred_at=day(1)),
            EntityMerged(group_id=b, existing_entity_id=BOB, merged_entity_id=ALICE,
                         stage="exact", entity=entity(BOB, "Bob", "person"), occurred_at=day(2)),
        )  # fmt: skip
        assert [f.target_name for f in await q.facts_for(graph.pool, a)] == ["Acme"]
        assert await q.facts_for(graph.pool, b) == []
        assert await q.facts_for(graph.pool, "tenantB:s2") == []
        assert [e.name for e in await q.search_entities(graph.pool, b, "")] == ["Bob"]
        assert await q.search_entities(graph.pool, b, "alice") == []
        alice_in_a = await q.entity_with_history(graph.pool, a, ALICE)
        assert alice_in_a is not None
        assert alice_in_a.entity.name == "Alice"  # B's merge of ALICE's id stays in B
        alice_in_b = await q.entity_with_history(graph.pool, b, ALICE)
        assert alice_in_b is not None
        assert alice_in_b.entity.name == "Bob"
        assert alice_in_b.relationships == ()


@pytest.mark.slow
async def test_the_runner_builds_the_graph_from_facts_and_forgets_from_turns(
    broker: Broker, postgres_dsn: str, tmp_path: Path
) -> None:
    pipeline = await fresh_pipeline(broker, tmp_path)
    groups = ("acme:s1", "acme:s2", "globex:s1")
    await pipeline.produce(
        "memory.facts",
        [(g, e) for g in groups for e in (people(g), works_at(AT_ACME, ACME, year(2020), 1, g))],
    )
    await pipeline.produce("memory.turns", [("acme:s1", MemoryForgotten(group_id="acme:s1"))])

    graph = graph_projection(await fresh_database(postgres_dsn))
    runner = ProjectionRunner(graph, pipeline.settings, pipeline.serde)
    await runner.start()
    try:
        await runner.catch_up()
        counts = {g: len(await q.facts_for(graph.pool, g)) for g in groups}
        [fact] = await q.facts_for(graph.pool, "globex:s1")
    finally:
        await runner.stop()
    assert runner.applied == 7
    assert counts == {"acme:s1": 0, "acme:s2": 1, "globex:s1": 1}
    assert fact.provenance.topic == pipeline.topic("memory.facts")
    assert isinstance(fact.provenance.offset, int)
    assert fact.provenance.change == "asserted"
