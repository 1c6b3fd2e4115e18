"""Which embedding adapter runs: the fastest this CPU has (``auto``), ONNX Runtime, or
sentence-transformers."""

from __future__ import annotations

import logging
import threading

from streams.embedder.model import Embedder, SentenceTransformerEmbedder, native_bfloat16

log = logging.getLogger(__name__)

BACKENDS = ("auto", "onnx", "torch", "torch-bf16")


def embedder_for(name: str, backend: str = "torch") -> Embedder:
    """The embedding model ``name`` on ``backend`` (``TRIBAL_EMBEDDING_BACKEND``):

    - ``onnx``: the ONNX export (falls back to ``torch`` when it cannot run: no
      onnxruntime, another pooling);
    - ``torch``: sentence-transformers itself, in float32;
    - ``torch-bf16``: sentence-transformers in bfloat16;
    - ``auto``: ``onnx``, and on a CPU that computes bfloat16 natively also
      ``torch-bf16``, each timed at load (:class:`~streams.embedder.fastest.FastestEmbedder`).
    """
    if backend not in BACKENDS:
        raise ValueError(f"embedding backend {backend!r}: one of {', '.join(BACKENDS)}")
    if backend == "torch-bf16":
        return SentenceTransformerEmbedder(name, bfloat16=True)
    if backend in ("onnx", "auto"):
        onnx = _onnx(name)
        if backend == "onnx" or not native_bfloat16():
            return onnx
        return _fastest(name, onnx)
    return SentenceTransformerEmbedder(name)


_FASTEST: dict[str, Embedder] = {}
_CHOOSING = threading.Lock()


def _fastest(name: str, onnx: Embedder) -> Embedder:
    """One timed choice per model and process (a worker's agents share it)."""
    from streams.embedder.fastest import FastestEmbedder

    with _CHOOSING:
        found = _FASTEST.get(name)
        if found is None:
            bf16 = SentenceTransformerEmbedder(name, bfloat16=True)
            found = _FASTEST[name] = FastestEmbedder(name, [onnx, bf16])
        return found


def _onnx(name: str) -> Embedder:
    try:
        import onnxruntime  # noqa: F401

        from streams.embedder.onnx import OnnxEmbedder, _mean_pooling

        onnx = OnnxEmbedder(name)
        if _mean_pooling(onnx.model_dir()):
            return onnx
    except (ImportError, RuntimeError) as exc:
        log.warning("ONNX embedding unavailable (%s): torch", exc)
    return SentenceTransformerEmbedder(name)
