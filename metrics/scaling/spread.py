"""Provides whether a result held between two configurations: a two-sided Mann-Whitney U test of
their runs (exact for small samples), said in words, and said only where the runs can tell.
"""

from __future__ import annotations

import math

import numpy as np

from gpuscope.metrics.distribution import mann_whitney

ALPHA = 0.05
MIN_RUNS_TEST = 3


def compare(sample: np.ndarray, base: np.ndarray, higher: object, what: str, where: str) -> tuple[float, str]:
    """(p-value, verdict) of a two-sided Mann-Whitney test of `sample` against `base`, said
    only when both sides have MIN_RUNS_TEST runs and the test can reach p < ALPHA at all."""
    n1, n2 = sample.size, base.size
    if n1 == 0 or n2 == 0:
        return math.nan, f"n/a: no {what}"
    if n1 < MIN_RUNS_TEST or n2 < MIN_RUNS_TEST:
        return math.nan, f"too few runs to tell ({n1} and {n2}; the test needs {MIN_RUNS_TEST} on each side)"
    if math.comb(n1 + n2, n1) <= 2.0 / ALPHA:  # the smallest p the exact test can give; no float overflow at 500+ runs
        return math.nan, f"too few runs to tell ({n1} and {n2}: the test cannot reach p < {ALPHA:g})"
    p = mann_whitney(sample, base)
    if not math.isfinite(p):
        return math.nan, "n/a: the test failed"
    if p >= ALPHA:
        return p, f"within run-to-run spread (p = {p:.2g})"
    larger = np.median(sample) > np.median(base)
    if isinstance(higher, (bool, np.bool_)):
        word = "better" if larger == bool(higher) else "worse"
    else:
        word = "higher" if larger else "lower"
    return p, f"{word} than at {where}, beyond run-to-run spread (p = {p:.2g})"
