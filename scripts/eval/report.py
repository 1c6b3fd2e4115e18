"""The eval report: one table per tool, a row per (split, metric), the hybrid system
(the API) beside both baselines, and the issue-7 targets checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SYSTEMS = ("hybrid", "bm25", "vector")
SPLITS = ("all", "literal", "paraphrase")
RANKING = ("recall@1", "recall@5", "mrr")
KNOWLEDGE = ("precision@0.7", "hit_rate@0.7", "unanswerable_none_or_low")
TARGETS: dict[tuple[str, str, str], float] = {
    ("tables", "all", "recall@5"): 0.90,
    ("tables", "paraphrase", "recall@5"): 0.85,
    ("code", "all", "recall@5"): 0.85,
    ("knowledge", "all", "precision@0.7"): 0.90,
    ("knowledge", "all", "hit_rate@0.7"): 0.80,
    ("knowledge", "all", "unanswerable_none_or_low"): 1.0,
}
"""Issue 7's "Done when" thresholds on the hybrid system."""
SECTIONS = (
    ("tables", "search_tables", RANKING),
    ("code", "search_code", RANKING),
    ("knowledge", "retrieve_knowledge (sources scored >= 0.7)", KNOWLEDGE),
)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def beats(hybrid: float | None, baseline: float | None) -> bool:
    """Hybrid above the baseline, or both at the ceiling; a baseline that gave no
    answer to measure (``None``, e.g. no source ever reached 0.7) is beaten."""
    if baseline is None:
        return hybrid is not None
    if hybrid is None:
        return False
    return hybrid > baseline or hybrid == baseline == 1.0


def verdicts(report: dict[str, Any]) -> list[str]:
    """What does not hold: a target missed or a number not above a baseline."""
    failed = []
    for (section, split, metric), floor in TARGETS.items():
        got = report[section].get("hybrid", {}).get(split, {}).get(metric)
        if section in report and report[section] and (got is None or got < floor):
            failed.append(f"{section} {split} {metric} = {_fmt(got)} < {floor}")
    for section, _, metrics in SECTIONS:
        systems = report.get(section, {})
        if not systems.get("hybrid") or not systems["hybrid"]["all"].get("n"):
            continue
        for split in SPLITS:
            for metric in metrics:
                mine = systems["hybrid"][split].get(metric)
                for base in ("bm25", "vector"):
                    theirs = systems.get(base, {}).get(split, {}).get(metric)
                    if not beats(mine, theirs):
                        failed.append(
                            f"{section} {split} {metric}: hybrid {_fmt(mine)} "
                            f"not above {base} {_fmt(theirs)}"
                        )
    joins = report.get("joins", {})
    if joins.get("n") and joins.get("exact") != 1.0:
        failed.append(f"join hop counts exact on {joins['exact']:.3f} of {joins['n']} pairs")
    return failed


def _table(title: str, section: str, systems: dict[str, Any], metrics: tuple[str, ...]) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("split")
    t.add_column("metric")
    for system in SYSTEMS:
        t.add_column(system, justify="right")
    t.add_column("target", justify="right")
    t.add_column("", justify="center")
    for split in SPLITS:
        n = systems["hybrid"][split].get("n", 0)
        for metric in metrics:
            values = [systems.get(s, {}).get(split, {}).get(metric) for s in SYSTEMS]
            floor = TARGETS.get((section, split, metric))
            ok = all(beats(values[0], v) for v in values[1:]) and (
                floor is None or (values[0] is not None and values[0] >= floor)
            )
            t.add_row(
                f"{split} (n={n})", metric, *(_fmt(v) for v in values),
                "" if floor is None else f">= {floor:.2f}", "✓" if ok else "✗",
            )  # fmt: skip
    return t


HELD_OUT = (("TableDoc", "tables", RANKING), ("CodeChunk", "code", RANKING),
            ("KbChunk", "knowledge", KNOWLEDGE[:2]))  # fmt: skip
"""Calibration kind, report section and the metrics its held-out estimate has."""


def held_out_rows(report: dict[str, Any]) -> list[tuple[str, str, str, float | None, float | None]]:
    """(section, split, metric, in-sample hybrid, leave-one-query-out) for every
    metric the calibration fit estimated on held-out queries."""
    rows = []
    fits = report.get("calibration_fit", {})
    for kind, section, metrics in HELD_OUT:
        estimate = fits.get(kind, {}).get("held_out")
        if not estimate:
            continue
        for split in SPLITS:
            for metric in metrics:
                mine = report.get(section, {}).get("hybrid", {}).get(split, {}).get(metric)
                rows.append((section, split, metric, mine, estimate.get(split, {}).get(metric)))
    return rows


def render(report: dict[str, Any], console: Console) -> None:
    for section, title, metrics in SECTIONS:
        systems = report.get(section, {})
        if systems.get("hybrid") and systems["hybrid"]["all"].get("n"):
            console.print(_table(title, section, systems, metrics))
    rows = held_out_rows(report)
    if rows:
        t = Table(title="held out: each query ranked by weights fitted without it",
                  title_justify="left")  # fmt: skip
        for column in ("tool", "split", "metric"):
            t.add_column(column)
        for column in ("fitted on all", "held out"):
            t.add_column(column, justify="right")
        for section, split, metric, mine, out in rows:
            t.add_row(section, split, metric, _fmt(mine), _fmt(out))
        console.print(t)
    joins = report["joins"]
    console.print(f"get_join_path: exact hop count {joins['exact']:.3f} on {joins['n']} pairs")
    for w in joins["wrong"]:
        console.print(f"  wrong: {w}")


def markdown(report: dict[str, Any]) -> str:
    """The quality table for the README (hybrid | bm25 | vector per split and metric)."""
    lines = ["| tool | split | metric | hybrid (Tribal) | BM25 only | vector only | target |",
             "|---|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for section, _, metrics in SECTIONS:
        systems = report.get(section, {})
        if not systems.get("hybrid"):
            continue
        for split in SPLITS:
            n = systems["hybrid"][split].get("n", 0)
            for metric in metrics:
                vals = [_fmt(systems.get(s, {}).get(split, {}).get(metric)) for s in SYSTEMS]
                floor = TARGETS.get((section, split, metric))
                target = "" if floor is None else f"≥ {floor:.2f}"
                lines.append(f"| {section} | {split} ({n}) | {metric} | **{vals[0]}** | "
                             f"{vals[1]} | {vals[2]} | {target} |")  # fmt: skip
    joins = report["joins"]
    lines.append(f"| joins | all ({joins['n']}) | exact hop count | **{joins['exact']:.3f}** "
                 "| | | = 1.00 |")  # fmt: skip
    rows = held_out_rows(report)
    if rows:
        lines += ["", "| tool | split | metric | fitted on all queries | held out |",
                  "|---|---|---|---:|---:|"]  # fmt: skip
        lines += [f"| {s} | {sp} | {m} | {_fmt(a)} | {_fmt(b)} |" for s, sp, m, a, b in rows]
    return "\n".join(lines) + "\n"


def write(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
