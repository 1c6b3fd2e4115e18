"""Percentiles and latency summaries, one definition for every benchmark."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between the two nearest ranks; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(
    values: Sequence[float], *quantiles: int, unit: str = "", digits: int = 3
) -> dict[str, float]:
    """``p<q>_<unit>`` for each of ``quantiles`` (default 50, 95, 99), then ``max_<unit>``
    (NaN when there are no values)."""
    suffix = f"_{unit}" if unit else ""
    row = {f"p{q}{suffix}": round(percentile(values, q), digits) for q in quantiles or (50, 95, 99)}
    row[f"max{suffix}"] = round(max(values), digits) if values else float("nan")
    return row


def mean(values: Sequence[float], digits: int = 2) -> float:
    return round(statistics.fmean(values), digits) if values else float("nan")
