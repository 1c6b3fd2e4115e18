"""The eval report: a table per kind, a row per corpus.

The headline column is leave-one-corpus-out (weights that never saw the corpus); the
product through HTTP (weights fitted on every corpus, in-sample) and both baselines
stand beside it. The issue's targets are checked on the held-out numbers, per corpus.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SYSTEMS = ("loco", "hybrid", "bm25", "vector")
LABELS = {"loco": "held out", "hybrid": "product (in-sample)", "bm25": "BM25", "vector": "vector"}
METRICS: dict[str, tuple[tuple[str, str, float | None], ...]] = {
    "tables": (("all", "recall@5", 0.90), ("paraphrase", "recall@5", 0.85), ("all", "mrr", None)),
    "code": (("all", "recall@5", 0.85), ("paraphrase", "recall@5", None), ("all", "mrr", None)),
    "kb": (
        ("all", "hit_rate@0.7", 0.80),
        ("all", "precision@0.7", 0.90),
        ("all", "unanswerable_none_or_low", 0.95),
    ),
}
"""Per kind: (split, metric, target on the held-out number)."""
SCORE_TARGETS = (("top_at_0.7_right", 0.9), ("right_top_at_0.5", 0.8))
"""Tables and code: scores mean what they say (held out)."""
CODE_MARGIN = 0.05
"""Code recall@5 held out must beat plain vector search by this much on every corpus."""
BASELINE_FREE = {"unanswerable_none_or_low"}
"""Metrics not compared with the baselines (a system that never answers wins them)."""


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _value(row: dict[str, Any], system: str, split: str, metric: str) -> float | None:
    found = (row.get(system) or {}).get(split, {}).get(metric)
    return None if found is None else float(found)


def beats(mine: float | None, theirs: float | None) -> bool:
    """Above the baseline, or both at the ceiling; a baseline with nothing to measure
    (``None``) is beaten by any number."""
    if theirs is None:
        return mine is not None
    if mine is None:
        return False
    return mine > theirs or mine == theirs == 1.0


def verdicts(report: dict[str, Any]) -> list[str]:
    """What does not hold, per corpus, on the held-out numbers."""
    failed = []
    for kind, rows in report.get("corpora", {}).items():
        for name, row in rows.items():
            if not row.get("hybrid"):
                continue
            where = f"{kind} {name}"
            if row.get("loco") is None:
                failed.append(f"{where}: no held-out number (the only corpus of its kind)")
                continue
            for split, metric, floor in METRICS[kind]:
                mine = _value(row, "loco", split, metric)
                if floor is not None and (mine is None or mine < floor):
                    failed.append(f"{where} {split} {metric} = {_fmt(mine)} < {floor}")
                if metric in BASELINE_FREE:
                    continue
                for base in ("bm25", "vector"):
                    theirs = _value(row, base, split, metric)
                    if not beats(mine, theirs):
                        failed.append(
                            f"{where} {split} {metric}: {_fmt(mine)} not above {base} "
                            f"{_fmt(theirs)}"
                        )
            if kind == "code":
                mine = _value(row, "loco", "all", "recall@5") or 0.0
                vector = _value(row, "vector", "all", "recall@5") or 0.0
                if mine < vector + CODE_MARGIN:
                    failed.append(f"{where} recall@5 {mine:.3f} < vector {vector:.3f} + 0.05")
            if kind in ("tables", "code"):
                scores = row.get("scores") or {}
                for metric, floor in SCORE_TARGETS:
                    got = scores.get(metric)
                    if got is None or got < floor:
                        failed.append(f"{where} scores: {metric} = {_fmt(got)} < {floor}")
            joins = row.get("joins") or {}
            if joins.get("n") and joins.get("exact") != 1.0:
                failed.append(f"{where} joins exact on {joins['exact']:.3f} of {joins['n']}")
    return failed


def _rows(kind: str, rows: dict[str, Any]) -> list[list[str]]:
    out = []
    for name, row in rows.items():
        if not row.get("hybrid"):
            continue
        for split, metric, floor in METRICS[kind]:
            values = [_value(row, s, split, metric) for s in SYSTEMS]
            ok = floor is None or (values[0] is not None and values[0] >= floor)
            if metric not in BASELINE_FREE:
                ok = ok and all(beats(values[0], v) for v in values[2:])
            out.append([
                f"{name} (n={row['n']})", f"{split} {metric}", *(_fmt(v) for v in values),
                "" if floor is None else f">= {floor:.2f}", "✓" if ok else "✗",
            ])  # fmt: skip
        for metric, floor in SCORE_TARGETS if kind != "kb" else ():
            got = (row.get("scores") or {}).get(metric)
            ok = got is not None and got >= floor
            out.append([f"{name} (n={row['n']})", f"score {metric}", _fmt(got), "", "", "",
                        f">= {floor:.2f}", "✓" if ok else "✗"])  # fmt: skip
        joins = row.get("joins") or {}
        if joins.get("n"):
            ok = joins["exact"] == 1.0
            out.append([f"{name}", f"joins exact ({joins['n']} pairs)", "",
                        _fmt(joins["exact"]), "", "", "= 1.00", "✓" if ok else "✗"])  # fmt: skip
    return out


HEADERS = ["corpus", "metric", *(LABELS[s] for s in SYSTEMS), "target", ""]
TITLES = {"tables": "search_tables", "code": "search_code",
          "kb": "retrieve_knowledge (sources scored >= 0.7)"}  # fmt: skip


def render(report: dict[str, Any], console: Console) -> None:
    for kind, rows in report.get("corpora", {}).items():
        lines = _rows(kind, rows)
        if not lines:
            continue
        t = Table(title=f"{TITLES[kind]}: held out = leave one corpus out", title_justify="left")
        for i, header in enumerate(HEADERS):
            t.add_column(header, justify="left" if i < 2 else "right")
        for line in lines:
            t.add_row(*line)
        console.print(t)


def markdown(report: dict[str, Any]) -> str:
    """The per-corpus quality tables for the README."""
    out: list[str] = []
    for kind, rows in report.get("corpora", {}).items():
        lines = _rows(kind, rows)
        if not lines:
            continue
        out += [f"**{TITLES[kind]}**", "", "| " + " | ".join(HEADERS) + " |",
                "|---|---|" + "---:|" * (len(HEADERS) - 2)]  # fmt: skip
        out += ["| " + " | ".join(line) + " |" for line in lines]
        out.append("")
    return "\n".join(out)


def write(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
