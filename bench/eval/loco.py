"""Leave one corpus out: the calibration fitted on the other corpora of a kind, measured
on the one left out, for every corpus. These are the headline numbers of ``make eval``.

Each corpus's queries are searched in its own tenant (the candidates a user of that
corpus would get); the candidates' features and labels are computed once
(:func:`bench.eval.calibrate.groups`), then every corpus is ranked by weights that
never saw it. The same candidates ranked by weights fitted on every corpus give the
in-sample column printed beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.eval import calibrate
from bench.eval.corpora import Corpus
from bench.eval.metrics import Ranked, Sourced, by_kind, knowledge_by_kind
from bench.eval.runs import Runner
from projections.index.port import Kind

KINDS = {"tables": Kind.TABLE_DOC, "code": Kind.CODE_CHUNK, "kb": Kind.KB_CHUNK}


def _metrics(kind: Kind, ranks: list[Ranked], sourced: list[Sourced]) -> dict[str, Any]:
    if kind in calibrate.PAIRWISE:
        return by_kind(ranks)
    return knowledge_by_kind(sourced)


def scores_mean(
    kind: Kind, train: Sequence[calibrate.Group], test: Sequence[calibrate.Group]
) -> dict[str, Any]:
    """Do the top result's scores mean what they say? Of tops scored >= 0.7, the share
    that is right; of right tops, the share scored >= 0.5; and the reliability curve
    (mean predicted score and observed precision per tenth) of every candidate."""
    fitted = calibrate._fit(kind, train)
    confident = right_confident = right_tops = right_tops_half = 0
    predicted: list[float] = []
    observed: list[int] = []
    for g in test:
        if not len(g.y):
            continue
        p = fitted.predict(g.x, g.article)
        j = int(np.argmax(p))
        if p[j] >= 0.7:
            confident += 1
            right_confident += int(g.y[j])
        if g.y[j]:
            right_tops += 1
            right_tops_half += int(p[j] >= 0.5)
        predicted += [float(v) for v in p]
        observed += [int(v) for v in g.y]
    bins = []
    for lo in np.arange(0.0, 1.0, 0.1):
        inside = [
            (pr, ob)
            for pr, ob in zip(predicted, observed, strict=True)
            if lo <= pr < lo + 0.1 or (lo >= 0.9 and pr == 1.0)
        ]
        if inside:
            n = len(inside)
            bins.append({"from": round(float(lo), 1), "n": n,
                         "predicted": round(sum(a for a, _ in inside) / n, 3),
                         "observed": round(sum(b for _, b in inside) / n, 3)})  # fmt: skip
    return {
        "top_at_0.7_right": round(right_confident / confident, 3) if confident else None,
        "top_at_0.7_n": confident,
        "right_top_at_0.5": round(right_tops_half / right_tops, 3) if right_tops else None,
        "reliability": bins,
    }


async def leave_one_corpus_out(
    run: Runner, corpora: Sequence[Corpus], urls: dict[str, dict[str, str]]
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """``({kind: {corpus: {"loco": metrics, "in_sample": metrics, "scores": ...}}},
    {calibration kind: fit on every corpus})``."""
    out: dict[str, dict[str, Any]] = {}
    fits: dict[str, dict[str, Any]] = {}
    for name, kind in KINDS.items():
        mine = [c for c in corpora if c.kind == name]
        if not mine:
            continue
        found = {
            c.name: await calibrate.groups(run, kind, c.queries, c.tenant, c.name, urls.get(c.name))
            for c in mine
        }
        everything = [g for gs in found.values() for g in gs]
        fits[kind.value] = calibrate.fit_groups(kind, everything)
        out[name] = {}
        for c in mine:
            train = [g for other, gs in found.items() if other != c.name for g in gs]
            answerable = [g for g in found[c.name] if g.item.get("expect", True)]
            row: dict[str, Any] = {
                "n": len(c.queries),
                # The ceiling of any ranking: questions with a right candidate at all.
                "candidate_recall": round(
                    sum(1 for g in answerable if g.y.any()) / len(answerable), 3
                )
                if answerable
                else None,
            }
            if len({int(v) for g in train for v in g.y}) == 2:
                row["loco"] = _metrics(kind, *calibrate.score(kind, train, found[c.name]))
                row["scores"] = scores_mean(kind, train, found[c.name])
            else:
                row["loco"] = None  # the only corpus of its kind: nothing to fit on
            if "error" not in fits[kind.value]:
                row["in_sample"] = _metrics(kind, *calibrate.score(kind, everything, found[c.name]))
            out[name][c.name] = row
    return out, fits


def reliability_plot(results: dict[str, dict[str, Any]], path: Path) -> Path | None:
    """Predicted score against observed precision, one line per corpus, per kind (PNG)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # matplotlib is in the dev extra
        return None
    kinds = [k for k in ("tables", "code", "kb") if results.get(k)]
    if not kinds:
        return None
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4.5), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect")
        for corpus, row in results[kind].items():
            bins = (row.get("scores") or {}).get("reliability") or []
            if bins:
                ax.plot([b["predicted"] for b in bins], [b["observed"] for b in bins],
                        marker="o", label=corpus)  # fmt: skip
        ax.set_title(f"{kind}: held-out score vs precision")
        ax.set_xlabel("predicted relevance (left-out corpus)")
        ax.set_ylabel("observed share relevant")
        ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
