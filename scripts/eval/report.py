"""The eval report: one rich table per metric family, literal vs paraphrased side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SYSTEMS = ("hybrid", "bm25", "vector")
SPLITS = ("all", "literal", "paraphrase")


def _table(title: str, section: dict[str, Any], metrics: tuple[str, ...]) -> Table:
    t = Table(title=title)
    t.add_column("system")
    for split in SPLITS:
        for m in metrics:
            t.add_column(f"{split} {m}", justify="right")
    for system in SYSTEMS:
        if system not in section:
            continue
        row = [system]
        for split in SPLITS:
            values = section[system].get(split, {})
            row += [f"{values.get(m, 0):.3f}" for m in metrics]
        t.add_row(*row)
    return t


def render(report: dict[str, Any], console: Console) -> None:
    ranking = ("recall@1", "recall@5", "mrr")
    console.print(_table("search_tables", report["tables"], ranking))
    console.print(_table("search_code", report["code"], ranking))
    kb = ("precision@0.7", "hit_rate@0.7", "unanswerable_none_or_low")
    console.print(_table("retrieve_knowledge (sources >= 0.7)", report["knowledge"], kb))
    joins = report["joins"]
    console.print(f"get_join_path: exact hop count {joins['exact']:.3f} on {joins['n']} pairs")
    for w in joins["wrong"]:
        console.print(f"  wrong: {w}")


def write(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
