"""The embedding backend chosen by timing: every way this CPU can run the model, each
timed once at load on the same texts, each call on the fastest for its size.

On most CPUs that is the ONNX export for everything. On a CPU that computes bfloat16
natively (AMX, AVX-512 BF16), torch in bfloat16 encodes a batch about twice as fast as
onnxruntime in float32, while a question alone is still fastest on ONNX: so a lone
question runs on one and a batch on the other. A backend whose vectors drift from the
float32 ones (cosine below :data:`AGREEMENT` on any probe text) is never chosen.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from streams.embedder.model import Embedder, LoadedOnFirstUse, encode_background

log = logging.getLogger(__name__)

SMALL = 8
"""Calls of fewer texts than this are timed and run as "small" (a question, a name or
two); larger ones as batches."""

AGREEMENT = 0.999
"""Lowest cosine to the reference backend's vector, on every probe text, for a backend
to be chosen."""

PROBE = [
    f"{who} said the {what} for {where} was moved to {when}, after the review of item {i}."
    for i, (who, what, where, when) in enumerate(
        (who, what, where, when)
        for who in ("Maya", "The billing team", "Our support lead", "Jonas")
        for what in ("invoice export", "quarterly report", "trip", "migration")
        for where in ("the Leeds office", "region north", "customer 4711", "the staging cluster")
        for when in ("next Tuesday", "early March")
    )
][:48]
"""Texts of the length of a turn or a passage, the same for every backend."""


def _seconds(run: Callable[[list[str]], object], texts: list[str], repeats: int = 2) -> float:
    """Best of ``repeats`` timings of ``run(texts)``, after one untimed call (kernels
    are built on first use)."""
    run(texts)
    best = math.inf
    for _ in range(repeats):
        started = time.perf_counter()
        run(texts)
        best = min(best, time.perf_counter() - started)
    return best


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@dataclass(eq=False, repr=False)
class FastestEmbedder(LoadedOnFirstUse):
    """``candidates`` (the first one the reference, the others optional) timed once on
    :data:`PROBE` when first used: small calls run on the fastest at one text, batches on
    the fastest at a batch. A candidate that fails to load, or whose vectors disagree
    with the reference's, is left out."""

    name: str
    candidates: list[Embedder]
    small: Embedder | None = field(default=None, init=False)
    batch: Embedder | None = field(default=None, init=False)
    timings: dict[str, dict[str, float]] = field(default_factory=dict, init=False)
    _choosing: threading.Lock = field(default_factory=threading.Lock, init=False)

    def _load(self) -> int:
        self._chosen()
        return self.candidates[0].dims

    def _chosen(self) -> bool:
        """Time the candidates unless done; False while another caller is timing them
        (that caller pays for it, the others use the reference meanwhile)."""
        if self.small is not None and self.batch is not None:
            return True
        if not self._choosing.acquire(blocking=False):
            return False
        try:
            if self.small is None or self.batch is None:
                self._choose()
            return True
        finally:
            self._choosing.release()

    def _choose(self) -> None:
        reference, *others = self.candidates
        expected = reference.encode(PROBE)
        usable = [reference]
        for other in others:
            try:
                vectors = other.encode(PROBE)
            except Exception as exc:  # the reference still runs
                log.warning("embedding backend %s unavailable: %s", _label(other), exc)
                continue
            agreement = min(_cosine(a, b) for a, b in zip(expected, vectors, strict=True))
            if agreement >= AGREEMENT:
                usable.append(other)
            else:
                log.warning("embedding backend %s left out: cosine %.5f", _label(other), agreement)
        for backend in usable:
            self.timings[_label(backend)] = {
                "one_ms": round(_seconds(backend.encode, PROBE[:1], repeats=5) * 1000, 2),
                "batch_per_s": round(len(PROBE) / _seconds(backend.encode, PROBE), 1),
            }
        self.small = min(usable, key=lambda b: self.timings[_label(b)]["one_ms"])
        self.batch = max(usable, key=lambda b: self.timings[_label(b)]["batch_per_s"])
        log.info(
            "embedding: %s for single texts, %s for batches (%s)",
            _label(self.small),
            _label(self.batch),
            self.timings,
        )

    def backend_for(self, count: int) -> Embedder:
        """The backend a call of ``count`` texts runs on (timing first if not yet; the
        reference while another caller is timing)."""
        if not self._chosen():
            return self.candidates[0]
        chosen = self.small if count < SMALL else self.batch
        assert chosen is not None
        return chosen

    def _encode(self, texts: list[str]) -> list[list[float]]:
        return self.backend_for(len(texts)).encode(texts)

    def encode_background(self, texts: list[str]) -> list[list[float]]:
        """Bulk work, always on the batch backend (in its own low-priority slices)."""
        return encode_background(self.backend_for(SMALL), texts)


def _label(backend: Embedder) -> str:
    """The backend's ``TRIBAL_EMBEDDING_BACKEND`` name."""
    if type(backend).__name__ == "OnnxEmbedder":
        return "onnx"
    return "torch-bf16" if getattr(backend, "bfloat16", False) else "torch"
