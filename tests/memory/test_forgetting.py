"""Forgetting reaches the memory lanes: the episoder passes ``MemoryForgotten`` on to
``memory.episodes`` in order, and the extractor and summarizer drop the group's state,
so what the group says afterwards is remembered afresh, not deduplicated against
memory that was erased."""

from __future__ import annotations

from collections.abc import Sequence

from devstack.memory import conversation, memory
from events.facts import EntitiesExtracted
from events.memory import EpisodeRecorded, MemoryForgotten
from streams.memory.episoder import Episoder

A, A2, B = "acme:s1", "acme:s2", "globex:s1"


def _entities(events: Sequence[object]) -> int:
    return sum(len(e.entities) for e in events if isinstance(e, EntitiesExtracted))


async def test_the_episoder_passes_forgetting_on_between_the_episodes_in_order() -> None:
    m = memory()
    first, second = conversation(A, limit=2)
    forget = MemoryForgotten(group_id=A, reason="user asked")
    emits = await m.episoder([first, forget, second])
    assert [e.topic for e in emits] == ["memory.episodes"] * 3
    assert [type(e.event) for e in emits] == [EpisodeRecorded, MemoryForgotten, EpisodeRecorded]
    assert emits[1].key == A
    assert emits[1].event == forget
    assert [e.event for e in await m.episoder([forget])] == [forget]


async def test_after_forgetting_a_group_what_it_says_again_is_extracted_again() -> None:
    m = memory()
    turns = conversation(A, limit=30)
    episodes = [e.event for e in await m.episoder(turns)]
    first = [e.event for e in await m.extractor.process_events(episodes)]
    assert _entities(first) > 0
    assert [e.event for e in await m.extractor.process_events(episodes)] == []  # seen
    await m.extractor.process_events([MemoryForgotten(group_id=A)])
    assert A not in m.extractor.groups()
    again = [e.event for e in await m.extractor.process_events(episodes)]
    assert _entities(again) == _entities(first)


async def test_forgetting_one_group_keeps_the_others_and_a_tenant_forget_takes_all_of_it() -> None:
    m = memory()
    turns = [*conversation(A, limit=20), *conversation(A2, limit=20), *conversation(B, limit=20)]
    episodes = [e.event for e in await m.episoder(turns)]
    await m.extractor.process_events(episodes)
    await m.summarizer.process_events(episodes)
    await m.extractor.process_events([MemoryForgotten(group_id=A)])
    assert {A2, B} <= set(m.extractor.groups())
    assert A not in m.extractor.groups()
    tenant = MemoryForgotten(group_id="acme:_tenant", scope="tenant")
    for lane in (m.extractor, m.summarizer):
        await lane.process_events([tenant])
        assert [g for g in lane.groups() if g.startswith("acme:")] == []
    assert B in m.extractor.groups()


async def test_a_tenant_forget_reaches_every_partition_of_the_episodes_topic() -> None:
    """A tenant's groups are spread over every partition of ``memory.episodes``, each
    partition maybe owned by another worker: each partition gets its own copy, in its
    order; a one-group forget stays on its group's partition."""
    episoder = Episoder(None, embedding_enabled=False, episode_partitions=4)
    tenant = MemoryForgotten(group_id="acme:_tenant", scope="tenant")
    copies = await episoder([tenant])
    assert [(e.topic, e.partition, e.event) for e in copies] == [
        ("memory.episodes", p, tenant) for p in range(4)
    ]
    group = MemoryForgotten(group_id=A)
    [one] = await episoder([group])
    assert (one.key, one.partition) == (A, None)
