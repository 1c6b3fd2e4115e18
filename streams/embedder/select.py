"""Which embedding adapter runs: ONNX Runtime when it can, else sentence-transformers."""

from __future__ import annotations

import logging

from streams.embedder.model import Embedder, SentenceTransformerEmbedder

log = logging.getLogger(__name__)


def embedder_for(name: str, backend: str = "torch") -> Embedder:
    """The embedding model ``name`` on ``backend`` (``TRIBAL_EMBEDDING_BACKEND``); the
    ONNX one falls back to ``torch`` when it cannot run (no onnxruntime, another pooling)."""
    if backend == "onnx":
        try:
            import onnxruntime  # noqa: F401

            from streams.embedder.onnx import OnnxEmbedder, _mean_pooling

            onnx = OnnxEmbedder(name)
            if _mean_pooling(onnx.model_dir()):
                return onnx
        except (ImportError, RuntimeError) as exc:
            log.warning("ONNX embedding unavailable (%s): torch", exc)
    return SentenceTransformerEmbedder(name)
