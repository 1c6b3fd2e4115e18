"""Fit the calibrated relevance (``projections.index.scoring.CALIBRATION``) on the dev split.

Every third labelled query (the dev split) is searched in hybrid mode with the service's
own query interpretation; each candidate's (vector score, lexical score) is labelled
relevant or not, and a logistic regression maps them to a probability of relevance.
The fitted constants are reported; ``scoring.py`` holds the ones the API serves with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

from api.services.interpret import interpret
from projections.index.port import Hit, Kind, SearchMode
from scripts.eval.runs import Runner, code_hit

DEV_EVERY = 3


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
    x: list[list[float]] = []
    y: list[int] = []
    for item in dev(queries):
        text = item["q"]
        if kind != Kind.KB_CHUNK:
            text = interpret(item["q"]).lexical_query(item["q"])
        vector = list(run.embedder.encode([item["q"]])[0])
        hits = await run.index.search(text, vector, kind, None, 20, "default", SearchMode.HYBRID)
        correct = _label(kind, item)
        for h in hits:
            x.append([h.vector_score or 0.0, h.lexical_score or 0.0])
            y.append(int(correct(h)))
    if len(set(y)) < 2:
        return {"n": len(y), "error": "one class only"}
    model = LogisticRegression(C=10.0).fit(x, y)
    bv, bl = (round(float(c), 3) for c in model.coef_[0])
    return {"n": len(y), "positives": sum(y), "intercept": round(float(model.intercept_[0]), 3),
            "vector": bv, "lexical": bl}  # fmt: skip
