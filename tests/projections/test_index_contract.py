"""The search index contract, run against every adapter (pgvector and Weaviate)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from events.chunks import DocumentRetracted
from events.memory import EpisodeRecorded, MemoryForgotten, SummaryCreated
from events.schema import TableDropped
from projections.index.pgvector import PgVectorIndex
from projections.index.port import Filters, Kind, MissingTenantError, SearchIndex, SearchMode
from projections.index.projection import IndexProjection
from projections.index.weaviate import WeaviateIndex
from streams.embedder.model import SentenceTransformerEmbedder
from tests.projections.test_index_events import (
    CODE,
    KB,
    MODEL,
    Feed,
    code_doc,
    embedded,
    kb_doc,
    table_doc,
)
from tests.projections.test_runner import fresh_database


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


async def fresh_index(request: pytest.FixtureRequest, prefix: str) -> SearchIndex:
    """An index of the adapter ``request.param`` names, not set up yet, that no other test
    shares: in a fresh database, or in collections named ``<prefix><10 hex digits>``."""
    if request.param == "pgvector":
        dsn = await fresh_database(request.getfixturevalue("postgres_dsn"))
        return PgVectorIndex(dsn, model=MODEL)
    w = request.getfixturevalue("weaviate")
    prefix = f"{prefix}{uuid.uuid4().hex[:10]}"
    return WeaviateIndex(w.http_host, w.http_port, w.grpc_host, w.grpc_port, prefix, MODEL)


@pytest.fixture(
    params=[
        pytest.param("pgvector", marks=pytest.mark.postgres),
        pytest.param("weaviate", marks=pytest.mark.weaviate),
    ]
)
async def index(request: pytest.FixtureRequest) -> AsyncIterator[SearchIndex]:
    idx = await fresh_index(request, "T")
    await idx.setup()
    yield idx
    await idx.drop()
    await idx.close()


@pytest.fixture
def feed(index: SearchIndex) -> Feed:
    return Feed(IndexProjection(index))


async def load_corpus(feed: Feed, embedder: SentenceTransformerEmbedder) -> None:
    docs = [kb_doc(k) for k in KB] + [code_doc(p) for p in CODE]
    await feed(*docs)
    await feed(*(embedded(d, embedder) for d in docs))


def q(embedder: SentenceTransformerEmbedder, text: str) -> list[float]:
    return embedder.encode([text])[0]


async def test_text_vector_and_hybrid_search_rank_the_relevant_article_first(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    await load_corpus(feed, embedder)
    query = "my miner shows zero hashrate, is the pool configuration wrong?"
    vec = q(embedder, query)
    for mode in SearchMode:
        hits = await index.search(query, vec, Kind.KB_CHUNK, mode=mode, limit=3)
        assert hits, mode
        assert hits[0].object.document_id == "kb:apollo", mode
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        assert hits[0].object.url == "https://docs.example.com/apollo"
    vector_hits = await index.search(None, vec, Kind.KB_CHUNK, mode=SearchMode.VECTOR)
    assert vector_hits[0].score > vector_hits[-1].score
    assert await index.count(Kind.KB_CHUNK) == 3
    assert await index.count(Kind.CODE_CHUNK) == 3


async def test_a_search_deeper_than_any_store_allows_answers_what_there_is(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    await load_corpus(feed, embedder)
    query = "pool configuration"
    for mode in SearchMode:  # a far page asks for offset + limit candidates, four per side
        hits = await index.search(query, q(embedder, query), Kind.KB_CHUNK, mode=mode, limit=20_011)
        assert 1 <= len(hits) <= 3, mode


async def test_filters_narrow_results_including_path_globs(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    await load_corpus(feed, embedder)
    vec = q(embedder, "embedding vectors and chunks")

    async def paths(filters: Filters) -> set[str | None]:
        hits = await index.search("chunks", vec, Kind.CODE_CHUNK, filters, limit=10)
        return {h.object.path for h in hits}

    assert await paths(Filters(path_glob="streams/*")) == {
        "streams/embedder/model.py",
        "streams/chunker/files.py",
    }
    assert await paths(Filters(path_glob="*/http.p?")) == {"api/http.py"}
    assert await paths(Filters(symbol_kind="class")) == {"streams/chunker/files.py"}
    assert await paths(Filters(repo="elsewhere")) == set()
    assert len(await paths(Filters(repo="tribal", language="python"))) == 3

    async def docs(filters: Filters) -> set[str]:
        hits = await index.search("Apollo", vec, Kind.KB_CHUNK, filters, limit=10)
        return {h.object.document_id for h in hits}

    assert await docs(Filters(intent="not_hashing")) == {"kb:apollo"}
    assert await docs(Filters(device="Apollo II")) == {"kb:apollo", "kb:refund"}
    assert await docs(Filters(document_id="kb:wifi")) == {"kb:wifi"}
    after = datetime(2025, 1, 1, tzinfo=UTC)
    assert await docs(Filters(updated_after=after)) == set()
    assert len(await docs(Filters(updated_before=after))) == 3


async def test_applying_the_same_events_twice_changes_nothing(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    docs = [kb_doc(k) for k in KB]
    batch = feed.wrap([*docs, *(embedded(d, embedder) for d in docs)])
    assert await feed.projection.apply(batch) == 6
    before = await index.search("pool", q(embedder, "pool"), Kind.KB_CHUNK)
    assert await feed.projection.apply(batch) == 0  # positions skip it
    # The same events at new offsets (a producer retry) rewrite identical objects.
    await feed(*docs, *(embedded(d, embedder) for d in docs))
    after = await index.search("pool", q(embedder, "pool"), Kind.KB_CHUNK)
    assert await index.count(Kind.KB_CHUNK) == 3
    assert [(h.object.chunk_id, round(h.score, 4)) for h in after] == [
        (h.object.chunk_id, round(h.score, 4)) for h in before
    ]
    assert await index.positions("index") == {
        ("tribal.chunks", 0): 6,
        ("tribal.embeddings", 0): 6,
    }


async def test_retracted_documents_and_dropped_tables_disappear_from_search(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    await load_corpus(feed, embedder)
    orders = table_doc("orders", "Customer orders with totals and shipping status")
    await feed(orders, table_doc("refunds", "Money returned to customers"))
    hits = await index.search("orders shipping", None, Kind.TABLE_DOC, Filters(database="shop"))
    assert hits[0].object.fully_qualified_name == "shop.public.orders"
    assert hits[0].object.domain == "sales"
    await feed(
        TableDropped(database="shop", schema_name="public", table_name="orders"),
        DocumentRetracted(document_id="kb:wifi", reason="article deleted"),
    )
    hits = await index.search("orders shipping", None, Kind.TABLE_DOC)
    assert "shop.public.orders" not in {h.object.fully_qualified_name for h in hits}
    assert await index.count(Kind.TABLE_DOC) == 1
    assert await index.count(Kind.KB_CHUNK, filters=Filters(document_id="kb:wifi")) == 0
    assert await index.search("wireless network password", None, Kind.KB_CHUNK) == []


async def test_a_new_document_version_removes_the_stale_chunks(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    v1 = kb_doc("apollo", extra="Firmware 1.2 fixes the fan noise.")
    await feed(v1, embedded(v1, embedder))
    assert await index.count(Kind.KB_CHUNK) == 2
    v2 = kb_doc("apollo")
    await feed(v2, embedded(v2, embedder))
    assert await index.count(Kind.KB_CHUNK) == 1
    assert await index.search("fan noise firmware", None, Kind.KB_CHUNK) == []
    hits = await index.search(None, q(embedder, "0 H/s pool"), Kind.KB_CHUNK, limit=5)
    assert [h.object.chunk_id for h in hits] == [v2.chunks[0].chunk_id]


async def test_vectors_that_arrive_before_their_text_join_it(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    doc = code_doc("api/http.py")
    await feed(embedded(doc, embedder))
    vec = q(embedder, "HTTP route for search queries")
    assert await index.search(None, vec, Kind.CODE_CHUNK) == []
    assert await index.count(Kind.CODE_CHUNK) == 0
    await feed(doc)
    hits = await index.search(None, vec, Kind.CODE_CHUNK, mode=SearchMode.VECTOR)
    assert [h.object.path for h in hits] == ["api/http.py"]
    assert hits[0].vector_score is not None
    assert hits[0].vector_score > 0.4
    # And text first, then vectors, then the text again: the vector survives.
    await feed(doc)
    assert len(await index.search(None, vec, Kind.CODE_CHUNK, mode=SearchMode.VECTOR)) == 1


async def test_vectors_of_another_model_are_not_mixed_in(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    doc = code_doc("api/http.py")
    await feed(doc, embedded(doc, embedder, model="some/other-model"))
    vec = q(embedder, "HTTP route for search queries")
    assert await index.search(None, vec, Kind.CODE_CHUNK, mode=SearchMode.VECTOR) == []


def episode(group: str, text: str, embedder: SentenceTransformerEmbedder) -> EpisodeRecorded:
    return EpisodeRecorded(
        group_id=group,
        episode_id=uuid.uuid4(),
        source_event_id=uuid.uuid4(),
        content=text,
        content_type="message",
        source="user",
        embedding=q(embedder, text),
        embedding_model=MODEL,
    )


async def test_memory_kinds_are_isolated_by_tenant_and_need_one(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    text = "The customer's Apollo II stopped hashing after the firmware update"
    summary = SummaryCreated(
        group_id="acme.eu:s1",
        summary_id=uuid.uuid4(),
        summary_type="window",
        content="Apollo stopped hashing; firmware suspected",
        generated_by="local",
        model="extractive",
    )
    await feed(episode("acme.eu:s1", text, embedder), episode("globex:s9", text, embedder))
    await feed(summary)
    vec = q(embedder, "apollo not hashing after update")
    for tenant, group in (("acme.eu", "acme.eu:s1"), ("globex", "globex:s9")):
        hits = await index.search("hashing", vec, Kind.EPISODE, tenant=tenant)
        assert [h.object.group_id for h in hits] == [group]
    hits = await index.search("hashing", vec, Kind.SUMMARY, tenant="acme.eu")
    assert [h.object.chunk_id for h in hits] == [str(summary.summary_id)]
    assert await index.search("hashing", vec, Kind.SUMMARY, tenant="globex") == []
    assert await index.search("hashing", vec, Kind.EPISODE, tenant="nobody") == []
    with pytest.raises(MissingTenantError):
        await index.search("hashing", vec, Kind.EPISODE)
    with pytest.raises(MissingTenantError):
        await index.count(Kind.SUMMARY)
    await feed(MemoryForgotten(group_id="acme.eu:s1"))
    assert await index.count(Kind.EPISODE, tenant="acme.eu") == 0
    assert await index.count(Kind.EPISODE, tenant="globex") == 1
    await feed(MemoryForgotten(group_id="globex:_tenant", scope="tenant"))
    assert await index.count(Kind.EPISODE, tenant="globex") == 0
    assert await index.search("hashing", vec, Kind.EPISODE, tenant="globex") == []


async def test_a_shadow_generation_swaps_in_atomically_while_searching(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    old = kb_doc("apollo")
    await feed(old, embedded(old, embedder))
    vec = q(embedder, "Apollo")
    shadow = await index.begin_generation()
    new = [kb_doc("apollo"), kb_doc("wifi")]
    rebuild = Feed(IndexProjection(shadow))
    await rebuild(*new, *(embedded(d, embedder) for d in new))
    seen: list[int] = []
    stop = asyncio.Event()

    async def search_forever() -> None:
        while not stop.is_set():
            seen.append(len(await index.search("Apollo", vec, Kind.KB_CHUNK, limit=10)))

    searcher = asyncio.create_task(search_forever())
    await asyncio.sleep(0.2)
    await index.finish_generation(shadow)
    await asyncio.sleep(0.2)
    stop.set()
    await searcher
    assert set(seen) == {1, 2}, seen  # the old or the new generation, never a mix or none
    assert seen.index(2) > 0
    assert 1 not in seen[seen.index(2) :]
    assert await index.count(Kind.KB_CHUNK) == 2
    assert await index.positions("index") == {("tribal.chunks", 0): 2, ("tribal.embeddings", 0): 2}


async def test_a_document_just_written_is_found_by_keywords_hundreds_of_others_share(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    # Weaviate 1.35's BlockMax WAND gives a term still in its memtable an upper bound of
    # 0: once `limit` documents matched the common words, the last one written, the only
    # one with the rare word, was pruned unscored (weaviate#11780); with
    # USE_INVERTED_SEARCHABLE=false the map-collection index scores it.
    common = [
        code_doc(f"src/shelf_{n}.py", f"def rebalance_inventory_{n}(): rebalance shelf {n}")
        for n in range(300)
    ]
    rare = code_doc("src/shelf_300.py", "def rebalance_nyboba_inventory(): the nyboba shelf")
    await feed(*common)
    await feed(rare)  # written last: the highest document ids
    await feed(*(embedded(d, embedder) for d in [*common, rare]))
    query = "rebalance nyboba inventory"
    for mode in (SearchMode.BM25, SearchMode.HYBRID):
        [first, *_] = await index.search(
            query, q(embedder, query), Kind.CODE_CHUNK, mode=mode, limit=3
        )
        assert (first.object.path, first.lexical_score is not None) == (rare.path, True), mode


async def test_a_conversation_is_read_whole_newest_first_with_its_vectors(
    index: SearchIndex, feed: Feed, embedder: SentenceTransformerEmbedder
) -> None:
    said = datetime(2023, 5, 1, 9, 0, tzinfo=UTC)
    turns = [
        episode("acme:s1", text, embedder).model_copy(
            update={"occurred_at": said + timedelta(minutes=i)}
        )
        for i, text in enumerate(["We moved to Lisbon", "How is the flat?", "Tiny but bright"])
    ]
    await feed(*turns, episode("acme:s2", "Another chat entirely", embedder))
    recent = await index.recent(Kind.EPISODE, "acme", Filters(group_id="acme:s1"), 10)
    assert [o.text for o in recent] == ["Tiny but bright", "How is the flat?", "We moved to Lisbon"]
    assert all(o.vector is not None and len(o.vector) == 384 for o in recent)
    latest = await index.recent(Kind.EPISODE, "acme", Filters(group_id="acme:s1"), 2)
    assert [o.text for o in latest] == ["Tiny but bright", "How is the flat?"]
    assert await index.recent(Kind.EPISODE, "nobody", Filters(group_id="acme:s1"), 10) == []


async def test_a_groups_episodes_rank_exactly_by_meaning_among_many_groups(
    index: SearchIndex, feed: Feed
) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((240, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    episodes = [
        EpisodeRecorded(
            group_id=f"acme:s{i % 24}", episode_id=uuid.uuid4(), source_event_id=uuid.uuid4(),
            content=f"turn {i}", content_type="message", source="user",
            embedding=[float(x) for x in v], embedding_model=MODEL,
        )
        for i, v in enumerate(vectors)
    ]  # fmt: skip
    await feed(*episodes)
    asked = [float(x) for x in vectors[5] + 0.5 * vectors[29]]
    hits = await index.search(
        None, asked, Kind.EPISODE, Filters(group_id="acme:s5"), 5, "acme", SearchMode.VECTOR
    )
    mine = [(i, v) for i, v in enumerate(vectors) if i % 24 == 5]
    nearest = sorted(mine, key=lambda iv: -float(iv[1] @ np.asarray(asked)))[:5]
    assert [h.object.text for h in hits] == [f"turn {i}" for i, _ in nearest]
