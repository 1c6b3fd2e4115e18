"""The embedding model on ONNX Runtime: the same weights, about twice as fast on a CPU.

The sentence-transformers model is exported once with ``torch.onnx`` (eager attention,
so that onnxruntime's BERT optimiser can fuse attention, layer norms and GELU), saved
under a cache directory keyed by the model's files, and run with ``onnxruntime`` and
``tokenizers``: texts sorted by length and padded per batch, mean pooling over the
attention mask, unit length, truncated where sentence-transformers truncates. Vectors
match sentence-transformers' at cosine ≥ 0.9999 (``make bench``, embedder).

``optimum`` is not used: it pins ``transformers`` below what sentence-transformers needs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from streams.embedder.model import (
    BACKGROUND_SLICE,
    DEFAULT_MODEL,
    LoadedOnFirstUse,
    ModelLock,
    SentenceTransformerEmbedder,
    _shared_model,
    bundled_model_path,
    in_slices,
)

log = logging.getLogger(__name__)

_SESSIONS: dict[str, tuple[Any, ModelLock]] = {}
_EXPORTING = threading.Lock()


def cache_root() -> Path:
    """Where exported models live: ``TRIBAL_ONNX_CACHE``, else ``~/.cache/tribal/onnx``."""
    configured = os.environ.get("TRIBAL_ONNX_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "tribal" / "onnx"


def _fingerprint(model_dir: Path) -> str:
    """A short digest of the model's weights and configuration files."""
    digest = hashlib.sha256()
    for path in sorted(model_dir.rglob("*")):
        if path.is_file() and path.suffix in (".json", ".safetensors", ".bin", ".txt"):
            stat = path.stat()
            digest.update(f"{path.relative_to(model_dir)}:{stat.st_size}".encode())
    return digest.hexdigest()[:16]


def _mean_pooling(model_dir: Path) -> bool:
    pooling = model_dir / "1_Pooling" / "config.json"
    if not pooling.exists():
        return False
    return bool(json.loads(pooling.read_text()).get("pooling_mode_mean_tokens"))


def max_seq_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256


def export(model_dir: Path, target: Path) -> Path:
    """``model_dir`` as a fused ONNX graph at ``target`` (written once, atomically)."""
    import torch
    from onnxruntime.transformers import optimizer

    model, _ = _shared_model(model_dir)
    base = model[0].auto_model.eval()
    if hasattr(base, "set_attn_implementation"):
        base.set_attn_implementation("eager")  # fusable attention

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = base

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.base(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    sample = model.tokenizer(["an example"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    raw = target.with_suffix(f".{os.getpid()}.raw.onnx")
    with torch.no_grad():
        torch.onnx.export(
            Encoder().eval(),
            tuple(sample[n] for n in names),
            str(raw),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
    config = base.config
    fused = optimizer.optimize_model(
        str(raw),
        model_type="bert",
        num_heads=int(config.num_attention_heads),
        hidden_size=int(config.hidden_size),
        opt_level=1,
    )
    partial = target.with_suffix(f".{os.getpid()}.partial")
    fused.save_model_to_file(str(partial))
    partial.replace(target)
    raw.unlink(missing_ok=True)
    return target


@contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """Held by one process at a time (the processes of one stack start together, and
    only one of them should spend the half minute an export takes)."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".export.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _session(onnx_path: Path, background: bool = False) -> tuple[Any, ModelLock]:
    """The process's session of ``onnx_path`` with its lock. ``background``: a second
    session for bulk work, made on (and so running all its threads at the priority of)
    the calling thread, :func:`streams.embedder.model.background_executor`'s."""
    import onnxruntime as ort

    key = f"{onnx_path}#background" if background else str(onnx_path)
    with _EXPORTING:
        found = _SESSIONS.get(key)
        if found is None:
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(
                str(onnx_path), options, providers=["CPUExecutionProvider"]
            )
            found = (session, ModelLock())
            _SESSIONS[key] = found
    return found


@dataclass(eq=False, repr=False)
class OnnxEmbedder(LoadedOnFirstUse):
    """A sentence-transformers model (mean pooling) exported to ONNX and run with
    onnxruntime; loaded, and exported the first time, on first use."""

    name: str = DEFAULT_MODEL
    path: Path | None = None
    batch_size: int = 32
    cache: Path | None = None
    _session: Any = field(default=None, init=False)
    _tokenizer: Any = field(default=None, init=False)
    _lock: ModelLock = field(default_factory=ModelLock, init=False)
    _dims: int = field(default=0, init=False)
    _fallback: SentenceTransformerEmbedder | None = field(default=None, init=False)
    _target: Path | None = field(default=None, init=False)

    def model_dir(self) -> Path:
        return self.path or (
            bundled_model_path() if self.name == DEFAULT_MODEL else Path(self.name)
        )

    def _load(self) -> int:
        """Open the session, or fall back to the same model on torch when it cannot be."""
        if self._session is None and self._fallback is None:
            try:
                self._open()
            except Exception as exc:  # no export possible here: the same model on torch
                log.warning("ONNX embedding unavailable (%s): the model runs on torch", exc)
                self._fallback = SentenceTransformerEmbedder(self.name, self.path)
        return self._fallback.dims if self._fallback is not None else self._dims

    def _open(self) -> None:
        if self._session is None:
            from tokenizers import Tokenizer

            where = self.model_dir()
            if not _mean_pooling(where):
                raise ValueError(f"{where}: only mean-pooling models run on ONNX here")
            target = (self.cache or cache_root()) / _fingerprint(where) / "model.onnx"
            with _EXPORTING, _exclusive(target.parent):
                if not target.exists():
                    log.info("exporting %s to ONNX at %s (once)", self.name, target)
                    export(where, target)
            tokenizer = Tokenizer.from_file(str(where / "tokenizer.json"))
            tokenizer.enable_truncation(max_length=max_seq_length(where))
            tokenizer.no_padding()
            self._tokenizer = tokenizer
            self._target = target
            self._session, self._lock = _session(target)
            self._dims = int(json.loads((where / "config.json").read_text())["hidden_size"])

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if self._fallback is not None:
            return self._fallback.encode(texts)
        session = self._session
        with self._lock:
            return in_slices(texts, self.batch_size, lambda part: self._run(session, part))

    def encode_background(self, texts: list[str]) -> list[list[float]]:
        """Like :meth:`encode`, on a session of its own whose threads run at the calling
        thread's priority (the background thread's: live calls never wait for it, and
        get the cores first)."""
        self._load()
        if self._fallback is not None:
            return self._fallback.encode_background(texts)
        assert self._target is not None
        session, lock = _session(self._target, background=True)

        def run(part: list[str]) -> list[list[float]]:
            with lock:
                return self._run(session, part)

        return in_slices(texts, min(self.batch_size, BACKGROUND_SLICE), run)

    def _run(self, session: Any, texts: list[str]) -> list[list[float]]:
        """Unit vectors of ``texts``, padded to the longest of them."""
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        [hidden] = session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return [row.tolist() for row in pooled]
