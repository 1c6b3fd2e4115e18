"""Fit the calibrated relevance (``projections/index/calibration.json``) on the labelled sets.

Every labelled query is searched the way its service searches
(same lexical query, same candidate depth, hybrid mode); each candidate's features
(:func:`api.services.relevance.features`) are labelled relevant or not, and a logistic
regression maps them to a probability of relevance. Four weights and an intercept per
kind, fitted on 150-1,000 labelled candidates: too few parameters to memorise a set.
``make eval`` reports the fit; ``make eval EVAL_ARGS=--fit`` also writes it where the
API reads it from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

from api.services import catalog, code, knowledge
from api.services.interpret import interpret
from api.services.relevance import features
from projections.index.port import Hit, Kind, SearchMode
from projections.index.scoring import CALIBRATION_FILE, FEATURES
from scripts.eval.runs import Runner, code_hit

DEV_EVERY = 1
"""Fit on every n-th query (1: all of them)."""
DEPTH = {Kind.TABLE_DOC: catalog.CANDIDATES, Kind.CODE_CHUNK: code.CANDIDATES,
         Kind.KB_CHUNK: knowledge.CANDIDATES}  # fmt: skip
UNUSED = {Kind.TABLE_DOC: {"gap", "support"}, Kind.CODE_CHUNK: {"gap", "support"},
          Kind.KB_CHUNK: set[str]()}  # fmt: skip
"""Features a kind does not have (always 0): left out of its fit."""


def dev(queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [q for i, q in enumerate(queries) if i % DEV_EVERY == 0]


def _label(kind: Kind, item: dict[str, Any]) -> Callable[[Hit], bool]:
    if kind == Kind.TABLE_DOC:
        return lambda h: h.object.fully_qualified_name in item["expect"]
    if kind == Kind.CODE_CHUNK:
        ok = code_hit(item)
        return lambda h: ok({"repo": h.object.repo, "path": h.object.path,
                             "symbol": h.object.symbol,
                             "fully_qualified_name": h.object.fully_qualified_name})  # fmt: skip
    names = set(item["expect"])
    return lambda h: (h.object.url or "").rstrip("/").rsplit("/", 1)[-1] in names


async def fit(run: Runner, kind: Kind, queries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``{"intercept": b0, <feature>: weight, ..., "n": rows, "positives": p}``."""
    used = [f for f in FEATURES if f not in UNUSED[kind]]
    x: list[list[float]] = []
    y: list[int] = []
    for item in dev(queries):
        text = item["q"]
        if kind != Kind.KB_CHUNK:
            text = interpret(item["q"]).lexical_query(item["q"])
        vector = list(run.embedder.encode([item["q"]])[0])
        hits = await run.index.search(
            text, vector, kind, None, DEPTH[kind], "default", SearchMode.HYBRID
        )
        correct = _label(kind, item)
        for h, f in zip(hits, features(kind, item["q"], hits), strict=True):
            row = dict(zip(FEATURES, f.as_list(), strict=True))
            x.append([row[name] for name in used])
            y.append(int(correct(h)))
    if len(set(y)) < 2:
        return {"n": len(y), "error": "one class only"}
    model = LogisticRegression(C=10.0, max_iter=1000).fit(x, y)
    weights = dict(zip(used, (round(float(c), 3) for c in model.coef_[0]), strict=True))
    return {"intercept": round(float(model.intercept_[0]), 3),
            **{f: weights.get(f, 0.0) for f in FEATURES},
            "n": len(y), "positives": sum(y)}  # fmt: skip


def write(fits: dict[str, dict[str, Any]], backend: str, path: Path = CALIBRATION_FILE) -> None:
    """Store the fits where :func:`projections.index.scoring.calibration` reads them."""
    kinds = {k: {n: f[n] for n in ("intercept", *FEATURES)} for k, f in fits.items()}
    when = datetime.now(UTC).date().isoformat()
    rows = ", ".join(f"{k} {f['n']} candidates ({f['positives']} relevant)"
                     for k, f in fits.items())  # fmt: skip
    record = {"fitted_on": f"{when}, {backend}, make eval labelled sets: {rows}", "kinds": kinds}
    path.write_text(json.dumps(record, indent=2) + "\n")
