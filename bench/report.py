"""A benchmark's results: the machine it ran on, the JSON file, the table on stdout."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from devstack.pipeline import REPO

console = Console(width=max(Console().width, 150))


def load() -> dict[str, float]:
    """The machine's load averages now: what else was running shows in the numbers."""
    one, five, _ = os.getloadavg()
    return {"load_1m": round(one, 2), "load_5m": round(five, 2)}


def _git(*argv: str) -> str:
    try:
        done = subprocess.run(["git", *argv], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.strip()


def machine(*packages: str) -> dict[str, Any]:
    """What ran where: the commit and how many files were edited on top of it (the
    checkout may be shared), cores, memory, platform, load and Python, with the versions
    of ``packages`` (distribution names; ``-`` becomes ``_`` in the keys)."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {
        "commit": _git("rev-parse", "--short", "HEAD"),
        "uncommitted_files": len(_git("status", "--porcelain").splitlines()),
        "cpu_count": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        **load(),
        **{name.replace("-", "_"): version(name) for name in packages},
    }


def save(doc: dict[str, Any], out: Path) -> Path:
    """``doc`` as indented JSON at ``out`` (its directory made as needed), with the
    machine it ran on (:func:`machine`) unless it says so itself."""
    doc.setdefault("machine", machine())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    return out


def print_table(
    title: str, columns: Sequence[str], rows: Iterable[Sequence[object]], *, left: int = 1
) -> None:
    """A table of ``rows`` (one value per column), the first ``left`` columns left-aligned."""
    table = Table(title=title, title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i < left else "right")
    for row in rows:
        table.add_row(*(str(value) for value in row))
    console.print(table)
