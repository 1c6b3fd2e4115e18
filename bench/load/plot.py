"""The lag series of a load as a PNG (matplotlib) or, without it, as CSV."""

from __future__ import annotations

import csv
import importlib
from pathlib import Path
from typing import Any


def write_lag_plot(result: dict[str, Any], out: Path) -> Path:
    """The lag series as a PNG when matplotlib is importable, else as CSV."""
    rows = [s for s in result["samples"] if "error" not in s]
    names = sorted({f"projection:{k}" for s in rows for k in s["projection_lag"]})
    names += sorted({f"worker:{k}" for s in rows for k in s["group_lag"]})

    def value(s: dict[str, Any], name: str) -> int:
        kind, _, key = name.partition(":")
        found = (s["projection_lag"] if kind == "projection" else s["group_lag"]).get(key, 0)
        return int(found)

    try:
        # imported by name: matplotlib is optional and not a dependency of Tribal
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        path = out.with_suffix(".csv")
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["t_s", "phase", *names])
            for s in rows:
                writer.writerow([s["t_s"], s["phase"], *(value(s, n) for n in names)])
        return path
    fig, ax = plt.subplots(figsize=(10, 5))
    for name in names:
        ax.plot([s["t_s"] for s in rows], [value(s, name) for s in rows], label=name)
    ax.set_xlabel("seconds since load start")
    ax.set_ylabel("messages behind")
    ax.set_title("Tribal consumer lag under load")
    ax.legend(fontsize="small")
    path = out.with_suffix(".png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
