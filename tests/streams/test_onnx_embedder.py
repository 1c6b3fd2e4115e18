"""The ONNX embedder gives sentence-transformers' vectors (one contract, two adapters)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from streams.embedder.model import SentenceTransformerEmbedder
from streams.embedder.onnx import OnnxEmbedder
from streams.embedder.select import embedder_for

pytestmark = pytest.mark.slow

TEXTS = [
    "How do I reset my password?",
    "def retry(fn, attempts=3):\n    for n in range(attempts):\n        return fn()",
    "The orders table holds one row per checkout, keyed by order_id." * 20,  # truncated
    "",
    "Zürich naïve café — ünïcödé",
]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


def test_onnx_vectors_match_the_torch_ones(tmp_path: Path) -> None:
    onnx = OnnxEmbedder(cache=tmp_path)
    torch = SentenceTransformerEmbedder()
    assert onnx.dims == torch.dims == 384
    for a, b in zip(onnx.encode(TEXTS), torch.encode(TEXTS), strict=True):
        assert _cos(a, b) >= 0.9999
        assert abs(math.sqrt(sum(x * x for x in a)) - 1.0) < 1e-4
    assert onnx.encode([]) == []
    assert (tmp_path.glob("*/model.onnx")).__next__().exists()  # exported once, cached


def test_the_backend_setting_picks_the_adapter() -> None:
    assert isinstance(embedder_for("sentence-transformers/all-MiniLM-L6-v2", "onnx"), OnnxEmbedder)
    assert isinstance(
        embedder_for("sentence-transformers/all-MiniLM-L6-v2", "torch"),
        SentenceTransformerEmbedder,
    )


def test_onnx_is_the_default_backend() -> None:
    from runtime.settings import TribalSettings

    assert TribalSettings.model_fields["embedding_backend"].default == "onnx"


def test_an_export_that_cannot_be_written_runs_the_same_model_on_torch(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")  # the cache root is a file: no export can be stored under it
    onnx = OnnxEmbedder(cache=blocked)
    torch = SentenceTransformerEmbedder()
    [vector] = onnx.encode(["How do I reset my password?"])
    assert _cos(vector, torch.encode(["How do I reset my password?"])[0]) >= 0.9999
    assert onnx.dims == 384
    assert onnx.encode_background(TEXTS[:2]) == torch.encode_background(TEXTS[:2])


def test_background_encoding_gives_the_foreground_vectors(tmp_path: Path) -> None:
    onnx = OnnxEmbedder(cache=tmp_path)
    for a, b in zip(onnx.encode_background(TEXTS), onnx.encode(TEXTS), strict=True):
        assert _cos(a, b) >= 0.99999


def test_background_work_runs_on_its_own_session_at_a_lower_priority(tmp_path: Path) -> None:
    import os
    import threading

    from streams.embedder.model import BACKGROUND_NICE, background_executor
    from streams.embedder.onnx import _session

    onnx = OnnxEmbedder(cache=tmp_path)
    onnx.encode(["warm"])

    def in_background() -> int:
        onnx.encode_background(["a bulk text", "another one"])
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    assert background_executor().submit(in_background).result() == BACKGROUND_NICE
    target = next(tmp_path.glob("*/model.onnx"))
    live, background = _session(target)[0], _session(target, background=True)[0]
    assert live is not background  # a live call never waits for a bulk one
