"""Help-desk articles from a real Contract 1 host into `tribal.kb.articles` (seed 002)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from demo.kb_host import KbStore
from devstack import Broker
from devstack.pipeline import Pipeline, isolated_settings
from events.kb import KbArticleDeleted, KbArticleUpserted
from sources.base import build_source
from sources.checkpoint import FileCheckpoint, MemoryCheckpoint
from sources.config import ConfigError, SourceConfig
from sources.kb import KbSource, KbState, from_config, plan
from sources.kb_client import KbHostError, KbListing
from sources.sink import KafkaSink, MemorySink
from tests.sources.kb_fixtures import KbHost, helpdesk_articles, running_kb_host

FAST = {"backoff_initial": 0.05, "backoff_max": 0.3, "backoff_jitter": 0.05, "retry_for": 10}


@pytest.fixture
def host() -> Iterator[KbHost]:
    with running_kb_host(KbStore(helpdesk_articles())) as running:
        yield running


def kb_source(url: str, **options: Any) -> KbSource:
    return from_config(SourceConfig(kind="kb", name="helpdesk", url=url, **(FAST | options)))


def upserted_ids(sink: MemorySink) -> list[str]:
    return [e.article_id for e in sink.events() if isinstance(e, KbArticleUpserted)]


def deleted_ids(sink: MemorySink) -> list[str]:
    return [e.article_id for e in sink.events() if isinstance(e, KbArticleDeleted)]


def edited(article_id: str, content: str, **meta: Any) -> dict[str, Any]:
    article = next(a for a in helpdesk_articles() if a["id"] == article_id)
    metadata = {k: v for k, v in article["metadata"].items() if k != "last_updated"}
    return article | {"content": content, "metadata": metadata | meta}


async def test_every_article_arrives_keyed_by_its_id_across_pages(host: KbHost) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    assert await kb_source(host.url, page_size=7).sync_once(sink, checkpoint) == 20
    assert host.store.requests == 3  # 7 + 7 + 6
    assert {(e.topic, e.key) for e in sink.emitted} == {
        ("kb.articles", a["id"]) for a in helpdesk_articles()
    }
    first = next(e for e in sink.events() if isinstance(e, KbArticleUpserted))
    source = next(a for a in helpdesk_articles() if a["id"] == first.article_id)
    assert (first.title, first.url, first.content) == (
        source["title"],
        source["url"],
        source["content"],
    )
    assert list(first.intent) == source["metadata"]["intent"]
    assert list(first.device) == source["metadata"]["device"]
    assert first.author == "FutureBit Support"
    assert (
        first.last_updated.isoformat().replace("+00:00", "Z") == source["metadata"]["last_updated"]
    )
    state = KbState.load(checkpoint.state)
    assert len(state.hashes) == 20
    assert state.cursor == datetime(2024, 12, 15, 10, tzinfo=UTC)
    assert sink.flushes == 1


async def test_an_updated_article_arrives_once_and_unchanged_ones_stay_quiet(
    host: KbHost,
) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    source = kb_source(host.url)
    await source.sync_once(sink, checkpoint)
    host.store.upsert(edited("kb-002", "Apollo II devices now need firmware 2.1 first."))
    sink.emitted.clear()
    assert await source.sync_once(sink, checkpoint) == 1
    [event] = sink.events()
    assert isinstance(event, KbArticleUpserted)
    assert (event.article_id, event.content) == (
        "kb-002",
        "Apollo II devices now need firmware 2.1 first.",
    )
    assert await source.sync_once(sink, checkpoint) == 0


async def test_a_deleted_article_arrives_as_a_deletion_on_the_next_full_snapshot(
    host: KbHost,
) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    source = kb_source(host.url, full_sync_every=0.5)
    await source.sync_once(sink, checkpoint)
    host.store.delete("kb-003")
    sink.emitted.clear()
    assert await source.sync_once(sink, checkpoint) == 0  # incremental: cannot see it
    await asyncio.sleep(0.6)
    assert await source.sync_once(sink, checkpoint) == 1
    assert deleted_ids(sink) == ["kb-003"]
    assert "kb-003" not in KbState.load(checkpoint.state).hashes
    assert await source.sync_once(sink, checkpoint) == 0


async def test_a_listing_that_fails_half_way_deletes_nothing(host: KbHost) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    source = kb_source(host.url, page_size=7, full_sync_every=0, retry_for=0.3)
    await source.sync_once(sink, checkpoint)
    saved = dict(checkpoint.state)
    host.store.outage(after_requests=1)  # page 1 answers, then the host fails
    with pytest.raises(KbHostError):
        await source.sync_once(sink, checkpoint)
    assert deleted_ids(sink) == []
    assert checkpoint.state == saved
    host.store.recover()
    assert await source.sync_once(sink, checkpoint) == 0


async def test_a_host_that_changes_while_paging_is_listed_again_before_any_deletion(
    host: KbHost,
) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    source = kb_source(host.url, page_size=7, full_sync_every=0)
    await source.sync_once(sink, checkpoint)
    sink.emitted.clear()
    mid_pass = host.store.requests + 2

    def swap(n: int) -> None:  # one gone, one new: `total` stays 20, articles shift
        if n == mid_pass:
            host.store.delete("kb-019")
            host.store.upsert(edited("kb-001", "copy", last_updated="2025-01-01") | {"id": "n1"})

    host.store.on_request = swap
    await source.sync_once(sink, checkpoint)
    assert (upserted_ids(sink), deleted_ids(sink)) == (["n1"], ["kb-019"])


async def test_a_host_that_never_settles_while_paging_deletes_nothing(host: KbHost) -> None:
    sink, checkpoint = MemorySink(), MemoryCheckpoint()
    source = kb_source(host.url, page_size=7, full_sync_every=0)
    await source.sync_once(sink, checkpoint)
    cursor = checkpoint.state["cursor"]
    host.store.delete("kb-019")

    def churn(n: int) -> None:  # every page sees a different knowledge base
        host.store.upsert(edited("kb-020", f"churn {n}"))

    host.store.on_request = churn
    await source.sync_once(sink, checkpoint)
    assert deleted_ids(sink) == []
    assert checkpoint.state["cursor"] == cursor
    host.store.on_request = None
    await source.sync_once(sink, checkpoint)
    assert deleted_ids(sink) == ["kb-019"]


def test_an_incomplete_listing_never_implies_deletions() -> None:
    state = KbState({"kb-1": "h1", "kb-2": "h2"})
    listing = KbListing({}, total=2, updated_at=None, complete=False)
    events, after = plan(state, listing, full=True)
    assert (events, after) == ([], state)


async def test_filters_and_pagination_select_what_the_host_selects(host: KbHost) -> None:
    sink = MemorySink()
    source = kb_source(host.url, intent="not_hashing", device="Apollo II", page_size=1)
    await source.sync_once(sink, MemoryCheckpoint())
    expected = [
        a["id"]
        for a in sorted(helpdesk_articles(), key=lambda a: a["metadata"]["last_updated"])
        if "not_hashing" in a["metadata"]["intent"] and "Apollo II" in a["metadata"]["device"]
    ]
    assert upserted_ids(sink) == expected == ["kb-002", "kb-013", "kb-001"]
    assert host.store.requests == 3


async def test_500s_are_retried_with_backoff_and_nothing_is_lost(
    host: KbHost, caplog: pytest.LogCaptureFixture
) -> None:
    host.store.outage(count=4)
    sink = MemorySink()
    with caplog.at_level(logging.WARNING):
        assert await kb_source(host.url).sync_once(sink, MemoryCheckpoint()) == 20
    assert host.store.errors_served == 4
    assert "HTTP 500 Internal server error: Knowledge base unavailable" in caplog.text


async def _until(done: Callable[[], bool], task: asyncio.Task[None]) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, "source did not catch up"
        assert not task.done(), "source.run ended"
        await asyncio.sleep(0.05)


async def _outage_loses_nothing(host: KbHost, outage: Callable[[], None], **opts: Any) -> None:
    sink, stop = MemorySink(), asyncio.Event()
    source = kb_source(host.url, interval=0.2, full_sync_every=1.0, **opts)
    task = asyncio.create_task(source.run(sink, MemoryCheckpoint(), stop))
    try:
        await _until(lambda: len(sink.emitted) == 20, task)
        outage()
        host.store.upsert(edited("kb-001", "new") | {"id": "kb-021"})
        host.store.upsert(edited("kb-004", "Apollo II setup, revised."))
        host.store.delete("kb-005")
        await _until(lambda: len(sink.emitted) >= 23, task)
        await asyncio.sleep(1.5)  # a full pass more: nothing else arrives
    finally:
        stop.set()
        try:
            await asyncio.wait_for(task, 15)
        except TimeoutError:
            task.cancel()
    assert sorted(upserted_ids(sink)[20:]) == ["kb-004", "kb-021"]
    assert deleted_ids(sink) == ["kb-005"]
    assert len(sink.emitted) == 23


async def test_a_short_500_outage_while_running_loses_nothing(host: KbHost) -> None:
    await _outage_loses_nothing(host, lambda: host.store.outage(seconds=2.5))
    assert host.store.errors_served > 3


async def test_a_host_that_goes_away_entirely_loses_nothing(host: KbHost) -> None:
    def go_away() -> None:  # connection refused rather than 500s, then back on its port
        host.stop()
        threading.Timer(2.5, host.start).start()

    await _outage_loses_nothing(host, go_away)


@pytest.mark.slow
async def test_a_30_second_outage_loses_nothing_with_default_backoff(host: KbHost) -> None:
    defaults = {
        "backoff_initial": 0.5,
        "backoff_max": 30.0,
        "backoff_jitter": 1.0,
        "retry_for": 120,
    }
    started = time.monotonic()
    await _outage_loses_nothing(host, lambda: host.store.outage(seconds=30), **defaults)
    assert time.monotonic() - started > 30


async def test_a_restarted_source_re_emits_nothing(host: KbHost, tmp_path: Path) -> None:
    checkpoint = FileCheckpoint(tmp_path, "kb-helpdesk")
    assert await kb_source(host.url).sync_once(MemorySink(), checkpoint) == 20
    restarted, sink = kb_source(host.url), MemorySink()
    assert await restarted.sync_once(sink, FileCheckpoint(tmp_path, "kb-helpdesk")) == 0
    host.store.upsert(edited("kb-010", "Pool settings moved to Mining > Pools."))
    assert await restarted.sync_once(sink, checkpoint) == 1
    assert upserted_ids(sink) == ["kb-010"]


async def test_articles_sharing_the_cursor_timestamp_are_neither_missed_nor_re_emitted() -> None:
    stamp = "2025-03-01T12:00:00Z"
    earlier = edited("kb-002", "b", last_updated="2025-02-01T00:00:00Z")
    store = KbStore([edited("kb-001", "a", last_updated=stamp), earlier])
    with running_kb_host(store) as host:
        sink, checkpoint = MemorySink(), MemoryCheckpoint()
        source = kb_source(host.url, overlap=0)
        await source.sync_once(sink, checkpoint)
        store.upsert(edited("kb-003", "c", last_updated=stamp))  # same second, later
        sink.emitted.clear()
        assert await source.sync_once(sink, checkpoint) == 1
        assert upserted_ids(sink) == ["kb-003"]
        assert await source.sync_once(sink, checkpoint) == 0


async def test_secrets_stay_out_of_logs_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    secret = "s3cret-token"
    with running_kb_host(KbStore(helpdesk_articles()), token=secret) as host:
        host.store.outage(count=2)
        with caplog.at_level(logging.DEBUG):
            assert (
                await kb_source(host.url, token=secret).sync_once(MemorySink(), MemoryCheckpoint())
                == 20
            )
            with pytest.raises(KbHostError) as info:
                await kb_source(host.url, token="wrong").sync_once(MemorySink(), MemoryCheckpoint())
    assert info.value.status == 401
    assert secret not in caplog.text
    with pytest.raises(ConfigError) as bad:
        from_config(SourceConfig(kind="kb", name="k", url="http://h", token=[secret]))
    assert "token" in str(bad.value)
    assert secret not in str(bad.value)


def test_kb_sources_are_built_from_config_and_bad_options_are_named() -> None:
    source = build_source(SourceConfig(kind="kb", name="helpdesk", url="http://kb:9000"))
    assert isinstance(source, KbSource)
    assert source.name == "helpdesk"
    with pytest.raises(ConfigError, match="url"):
        build_source(SourceConfig(kind="kb", name="helpdesk"))
    with pytest.raises(ConfigError, match="intervall"):
        build_source(SourceConfig(kind="kb", name="helpdesk", url="http://kb", intervall=5))


async def test_articles_reach_kafka_keyed_by_article_id(
    broker: Broker, tmp_path: Path, host: KbHost
) -> None:
    pipeline = Pipeline(isolated_settings(broker.bootstrap, tmp_path))
    await pipeline.create_topics()
    checkpoint = MemoryCheckpoint()
    source = kb_source(host.url, full_sync_every=0)
    async with KafkaSink(broker.bootstrap, pipeline.serde, pipeline.settings.topic_prefix) as sink:
        assert await source.sync_once(sink, checkpoint) == 20
        host.store.delete("kb-001")
        assert await source.sync_once(sink, checkpoint) == 1
    records = await pipeline.keyed("kb.articles")
    assert len(records) == 21
    lanes: dict[str, list[type]] = {}
    for key, event in records:
        assert isinstance(event, KbArticleUpserted | KbArticleDeleted)
        assert key == event.article_id
        lanes.setdefault(event.article_id, []).append(type(event))
    assert lanes["kb-001"] == [KbArticleUpserted, KbArticleDeleted]
    assert len(lanes) == 20
