"""Small `runs` tables (one row per run) for the scaling tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def make_runs(resources, times, **columns) -> pd.DataFrame:
    """A runs table in the readers' contract; `columns` override or add (scalars or lists)."""
    n = len(resources)
    frame = {
        "source": [f"run_{i}.log" for i in range(n)], "format": "test", "series": "s", "benchmark": "bench",
        "resource_kind": "gpus", "resources": resources, "resources_from": "test",
        "time_s": [float(t) for t in times], "time_from": "test", "status": "ok", "converged": pd.array([pd.NA] * n, dtype="boolean"),
        "quality_name": None, "quality": np.nan, "quality_higher_is_better": pd.array([pd.NA] * n, dtype="boolean"),
        "epochs": pd.array([pd.NA] * n, dtype="Int64"), "samples": np.nan,
    }  # fmt: skip
    frame.update(columns)
    out = pd.DataFrame(frame)
    for c in ("nodes", "gpus", "threads", "processes"):
        if c not in out:
            out[c] = pd.array([pd.NA] * n, dtype="Int64")
    return out


def row(summary: pd.DataFrame, resources: int, series: str = "s") -> pd.Series:
    return summary[(summary["series"] == series) & (summary["resources"] == resources)].iloc[0]
