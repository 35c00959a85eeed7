"""Small statistics the benchmark scripts share (imported by name: each script runs from this folder)."""

from __future__ import annotations


def percentile(samples: list[float], q: float) -> float:
    """The nearest-rank `q`-quantile of `samples` (q in [0, 1])."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
