"""Every embedding backend gives sentence-transformers' float32 vectors (one contract:
ONNX, torch in bfloat16, and the backend chosen by timing)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from streams.embedder.fastest import SMALL, FastestEmbedder, _label
from streams.embedder.model import SentenceTransformerEmbedder, native_bfloat16
from streams.embedder.onnx import OnnxEmbedder
from streams.embedder.select import embedder_for

MODEL = "sentence-transformers/all-MiniLM-L6-v2"

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


def test_bfloat16_vectors_match_the_float32_ones() -> None:
    bf16 = SentenceTransformerEmbedder(bfloat16=True)
    float32 = SentenceTransformerEmbedder()
    for a, b in zip(bf16.encode(TEXTS), float32.encode(TEXTS), strict=True):
        assert _cos(a, b) >= 0.999
        assert abs(math.sqrt(sum(x * x for x in a)) - 1.0) < 1e-3


def test_the_backend_setting_picks_the_adapter() -> None:
    assert isinstance(embedder_for(MODEL, "onnx"), OnnxEmbedder)
    torch = embedder_for(MODEL, "torch")
    assert isinstance(torch, SentenceTransformerEmbedder)
    assert not torch.bfloat16
    bf16 = embedder_for(MODEL, "torch-bf16")
    assert isinstance(bf16, SentenceTransformerEmbedder)
    assert bf16.bfloat16
    auto = embedder_for(MODEL, "auto")
    if native_bfloat16():  # both timed at load
        assert isinstance(auto, FastestEmbedder)
        assert [type(c) for c in auto.candidates] == [OnnxEmbedder, SentenceTransformerEmbedder]
        assert embedder_for(MODEL, "auto") is auto  # timed once per process
    else:  # bfloat16 would be emulated: ONNX alone, nothing timed
        assert isinstance(auto, OnnxEmbedder)


def test_an_unknown_backend_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"'cuda'.*auto, onnx, torch, torch-bf16"):
        embedder_for(MODEL, "cuda")


def test_auto_is_the_default_backend() -> None:
    from runtime.settings import TribalSettings

    assert TribalSettings.model_fields["embedding_backend"].default == "auto"


def test_the_chosen_backends_are_the_fastest_timed_at_load(tmp_path: Path) -> None:
    fastest = FastestEmbedder(
        MODEL, [OnnxEmbedder(cache=tmp_path), SentenceTransformerEmbedder(bfloat16=True)]
    )
    assert fastest.dims == 384
    timings = fastest.timings
    assert set(timings) == {"onnx", "torch-bf16"}
    one = min(timings, key=lambda name: timings[name]["one_ms"])
    batch = max(timings, key=lambda name: timings[name]["batch_per_s"])
    assert _label(fastest.backend_for(1)) == one
    assert _label(fastest.backend_for(SMALL - 1)) == one
    assert _label(fastest.backend_for(SMALL)) == batch
    reference = OnnxEmbedder(cache=tmp_path).encode(TEXTS)
    for texts in (TEXTS[:1], TEXTS * 2):
        for a, b in zip(fastest.encode(texts), reference * 2, strict=False):
            assert _cos(a, b) >= 0.999
    assert len(fastest.encode_background(TEXTS)) == len(TEXTS)


class _Reversed:
    """A stub backend (no real model computes wrong vectors on purpose): the reference's
    vectors reversed, so that they disagree with it."""

    name = MODEL
    dims = 384

    def __init__(self, reference: OnnxEmbedder) -> None:
        self.reference = reference

    def encode(self, texts: list[str]) -> list[list[float]]:
        return [v[::-1] for v in self.reference.encode(texts)]


def test_a_backend_whose_vectors_disagree_is_never_chosen_with_a_stub_backend(
    tmp_path: Path,
) -> None:
    onnx = OnnxEmbedder(cache=tmp_path)
    fastest = FastestEmbedder(MODEL, [onnx, _Reversed(onnx)])
    assert fastest.backend_for(1) is onnx
    assert fastest.backend_for(100) is onnx
    assert list(fastest.timings) == ["onnx"]


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


def test_while_one_caller_times_the_backends_the_others_use_the_reference(
    tmp_path: Path,
) -> None:
    onnx = OnnxEmbedder(cache=tmp_path)
    fastest = FastestEmbedder(MODEL, [onnx, SentenceTransformerEmbedder(bfloat16=True)])
    with fastest._choosing:  # another caller is timing them now
        assert fastest.backend_for(100) is onnx
        [vector] = fastest.encode(["a question that cannot wait"])
        assert fastest.dims == 384
        assert fastest.timings == {}
    assert _cos(vector, onnx.encode(["a question that cannot wait"])[0]) >= 0.9999
    fastest.encode(["now it is timed"])
    assert set(fastest.timings) == {"onnx", "torch-bf16"}
