"""The embedder: real all-MiniLM-L6-v2 vectors, cached so a text is embedded once."""

from __future__ import annotations

import math

import pytest

from events.chunks import Chunk, ChunksEmbedded, DocumentChunked, DocumentRetracted
from events.documents import DomainDocumented, TableDocumented, table_search_text
from runtime.databases import fresh_database
from streams.embedder.cache import MemoryEmbeddingCache, PostgresEmbeddingCache
from streams.embedder.embed import DocumentEmbedder
from streams.embedder.model import DEFAULT_MODEL, SentenceTransformerEmbedder


class CountingEmbedder:
    """The real model, with a count of the calls that reach it."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[int] = []

    @property
    def dims(self) -> int:
        return self.inner.dims

    def encode(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return self.inner.encode(texts)


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def _doc(doc_id: str, *texts: str) -> DocumentChunked:
    return DocumentChunked(
        document_id=doc_id,
        document_version="a" * 64,
        source_type="kb",
        chunked_by="text",
        chunks=tuple(Chunk(chunk_id=f"{doc_id}#{i}", index=i, text=t) for i, t in enumerate(texts)),
    )


async def test_chunks_get_normalised_384_dim_vectors_named_after_the_model(
    minilm: SentenceTransformerEmbedder,
) -> None:
    embedder = DocumentEmbedder(minilm, MemoryEmbeddingCache())
    [emit] = await embedder([_doc("kb:1", "How do I reset my router?", "Hold reset.")])
    event = emit.event
    assert isinstance(event, ChunksEmbedded)
    assert (emit.topic, emit.key) == ("embeddings", "kb:1")
    assert (event.model, event.dims) == (DEFAULT_MODEL, 384)
    assert [v.chunk_id for v in event.vectors] == ["kb:1#0", "kb:1#1"]
    norm = math.sqrt(sum(x * x for x in event.vectors[0].vector))
    assert norm == pytest.approx(1.0, abs=1e-3)


async def test_similar_texts_are_closer_than_unrelated_ones(
    minilm: SentenceTransformerEmbedder,
) -> None:
    a, b, c = minilm.encode(["reset the router", "restart my wifi modem", "quarterly tax filing"])

    def cos(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cos(a, b) > cos(a, c)


async def test_a_cache_hit_makes_no_model_call(minilm: SentenceTransformerEmbedder) -> None:
    model = CountingEmbedder(minilm)
    embedder = DocumentEmbedder(model, MemoryEmbeddingCache())
    first = await embedder([_doc("kb:1", "alpha text", "beta text"), _doc("kb:2", "gamma")])
    assert model.calls == [3]  # one call for the whole batch
    again = await embedder([_doc("kb:1", "alpha text", "beta text")])
    assert model.calls == [3]  # unchanged chunks: no call at all
    changed = await embedder([_doc("kb:1", "alpha text", "beta text, edited")])
    assert model.calls == [3, 1]  # only the edited chunk
    assert first[0].event.vectors == again[0].event.vectors  # type: ignore[attr-defined]
    assert changed[0].event.vectors != first[0].event.vectors  # type: ignore[attr-defined]
    assert embedder.stats.hits == 3


async def test_retractions_need_no_vectors(minilm: SentenceTransformerEmbedder) -> None:
    model = CountingEmbedder(minilm)
    out = await DocumentEmbedder(model, MemoryEmbeddingCache())(
        [DocumentRetracted(document_id="x")]
    )
    assert out == []
    assert model.calls == []


async def test_the_postgres_cache_is_shared_across_workers(
    minilm: SentenceTransformerEmbedder, postgres_dsn: str
) -> None:
    dsn = await fresh_database(postgres_dsn, "emb")
    first, second = (
        await PostgresEmbeddingCache.connect(dsn),
        await PostgresEmbeddingCache.connect(dsn),
    )
    try:
        model_a, model_b = CountingEmbedder(minilm), CountingEmbedder(minilm)
        out_a = await DocumentEmbedder(model_a, first)([_doc("kb:1", "shared text")])
        out_b = await DocumentEmbedder(model_b, second)([_doc("kb:1", "shared text")])
        assert (model_a.calls, model_b.calls) == ([1], [])
        assert out_a[0].event.vectors == out_b[0].event.vectors  # type: ignore[attr-defined]
    finally:
        await first.close()
        await second.close()


async def test_documented_tables_are_embedded_as_one_chunk_search_documents(
    minilm: SentenceTransformerEmbedder,
) -> None:
    table = TableDocumented(
        fully_qualified_name="billing.public.cust_mstr", database="billing",
        schema_name="public", table_name="cust_mstr", domain="customers",
        description="Each row is one customer master record.", generated_by="template",
        model="none", content="", metadata_hash="b" * 64,
        column_descriptions={"crdt_lmt_amt": "Credit limit amount."},
    )  # fmt: skip
    domain = DomainDocumented(
        domain="customers", database="billing", description="Customers.", tables=(),
        generated_by="template", model="none", content="",
    )  # fmt: skip
    [emit] = await DocumentEmbedder(minilm, MemoryEmbeddingCache())([table, domain])
    event = emit.event
    assert isinstance(event, ChunksEmbedded)
    assert (emit.key, event.document_id) == ("table:billing.public.cust_mstr",) * 2
    assert event.document_version == "b" * 64
    assert [v.chunk_id for v in event.vectors] == ["table:billing.public.cust_mstr"]
    [expected] = minilm.encode([table_search_text(table)])
    assert event.vectors[0].vector == pytest.approx(expected, abs=1e-5)
