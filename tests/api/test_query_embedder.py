"""The API's query embedder: questions asked together are encoded together."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from api.services.context import QueryEmbedder
from streams.embedder.model import SentenceTransformerEmbedder


class Counting:
    """The real model, with the size of every batch that reaches it."""

    def __init__(self, inner: SentenceTransformerEmbedder, fail: bool = False) -> None:
        self.inner = inner
        self.name = inner.name
        self.batches: list[int] = []
        self.fail = fail

    @property
    def dims(self) -> int:
        return self.inner.dims

    def encode(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        if self.fail:
            raise RuntimeError("injected model fault")
        return self.inner.encode(texts)


QUESTIONS = [f"my miner number {i} shows zero hashrate" for i in range(20)]


async def test_questions_asked_together_are_encoded_in_one_batch(
    embedder: SentenceTransformerEmbedder,
) -> None:
    model = Counting(embedder)
    queries = QueryEmbedder(model, batch=len(QUESTIONS))
    vectors = await asyncio.gather(*(queries.embed(q) for q in QUESTIONS))
    assert model.batches == [len(QUESTIONS)]
    alone = embedder.encode([QUESTIONS[7]])[0]
    assert np.allclose(vectors[7], alone, atol=1e-5)


async def test_a_repeated_question_is_encoded_once(embedder: SentenceTransformerEmbedder) -> None:
    model = Counting(embedder)
    queries = QueryEmbedder(model)
    first = await asyncio.gather(*(queries.embed("printer offline") for _ in range(5)))
    again = await queries.embed("printer offline")
    assert model.batches == [1]
    assert all(v == again for v in first)


async def test_a_batch_never_exceeds_the_limit(embedder: SentenceTransformerEmbedder) -> None:
    model = Counting(embedder)
    queries = QueryEmbedder(model, batch=8)
    await asyncio.gather(*(queries.embed(q) for q in QUESTIONS))
    assert max(model.batches) <= 8
    assert sum(model.batches) == len(QUESTIONS)


async def test_a_caller_giving_up_does_not_cancel_the_others(
    embedder: SentenceTransformerEmbedder,
) -> None:
    queries = QueryEmbedder(Counting(embedder))
    impatient = asyncio.ensure_future(queries.embed("router keeps rebooting"))
    patient = asyncio.ensure_future(queries.embed("router keeps rebooting"))
    await asyncio.sleep(0)
    impatient.cancel()
    assert len(await patient) == embedder.dims


async def test_an_injected_model_fault_fails_every_waiting_question(
    embedder: SentenceTransformerEmbedder,
) -> None:
    queries = QueryEmbedder(Counting(embedder, fail=True))
    results = await asyncio.gather(*(queries.embed(q) for q in QUESTIONS[:3]),
                                   return_exceptions=True)  # fmt: skip
    assert all(isinstance(r, RuntimeError) for r in results)
    with pytest.raises(RuntimeError):  # and the next question tries again
        await queries.embed(QUESTIONS[0])


async def test_a_question_every_caller_gave_up_on_is_never_encoded(
    embedder: SentenceTransformerEmbedder,
) -> None:
    model = Counting(embedder)
    queries = QueryEmbedder(model, batch=1)
    first = asyncio.ensure_future(queries.embed("first in the queue"))
    dropped = asyncio.ensure_future(queries.embed("nobody waits for this"))
    await asyncio.sleep(0)  # both queued; the first batch (one text) is encoding
    dropped.cancel()
    await first
    await asyncio.sleep(0.05)
    assert model.batches == [1]
    assert queries.cached("nobody waits for this") is None
