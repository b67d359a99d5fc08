"""Provides distribution statistics for grouped measurements: box-plot numbers and a rank test.

Pure numpy/pandas. Quartiles use linear interpolation (numpy's default, what seaborn's box
plots show); whiskers follow Tukey: the furthest data point within 1.5 IQR of the box.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

STATS = ("count", "median", "q1", "q3", "whisker_lo", "whisker_hi", "min", "max", "mean", "cv")


def box_stats(frame: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """Per group of `keys`: count, median, quartiles, Tukey whiskers, min, max, mean, cv.

    Columns are named `<value>_<stat>` (count is shared and named `count`). Groups whose
    values are all missing get count 0 and NaN statistics.
    """
    data = frame[keys + [value]].dropna(subset=[value])
    if data.empty:
        index = pd.MultiIndex.from_arrays([[] for _ in keys], names=keys)
        return pd.DataFrame({c if c == "count" else f"{value}_{c}": pd.Series(dtype=float) for c in STATS}, index=index)
    grouped = data.groupby(keys, observed=True, sort=True)[value]
    out = pd.DataFrame({
        "count": grouped.size(),
        "median": grouped.median(),
        "q1": grouped.quantile(0.25),
        "q3": grouped.quantile(0.75),
        "min": grouped.min(),
        "max": grouped.max(),
        "mean": grouped.mean(),
        "std": grouped.std(ddof=1),
    })
    iqr = out["q3"] - out["q1"]
    lo_fence = (out["q1"] - 1.5 * iqr).rename("lo")
    hi_fence = (out["q3"] + 1.5 * iqr).rename("hi")
    fences = data.join(lo_fence, on=keys).join(hi_fence, on=keys)
    inside = fences[(fences[value] >= fences["lo"]) & (fences[value] <= fences["hi"])]
    whiskers = inside.groupby(keys, observed=True)[value].agg(["min", "max"])
    out["whisker_lo"] = whiskers["min"]
    out["whisker_hi"] = whiskers["max"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["cv"] = np.where(out["mean"] != 0, out["std"] / out["mean"].abs(), np.nan)
    out = out.drop(columns="std")
    out.columns = [c if c == "count" else f"{value}_{c}" for c in out.columns]
    return out


def mann_whitney(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected,
    continuity-corrected; scipy's `method='asymptotic'`). NaN when a sample is empty."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        return math.nan
    both = np.concatenate([a, b])
    ranks = pd.Series(both).rank(method="average").to_numpy()
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    _, counts = np.unique(both, return_counts=True)
    n = n1 + n2
    tie = (counts**3 - counts).sum() / (n * (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie))
    if sigma == 0:
        return 1.0
    u = max(u1, n1 * n2 - u1)
    z = (u - mu - 0.5) / sigma
    return min(1.0, math.erfc(z / math.sqrt(2.0)))
