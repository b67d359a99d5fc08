"""Provides the profiler-metrics table: what nvprof `--metrics` measured per kernel.

    from gpuscope.metrics.kernels.profiler_metrics import metrics_table
    table = metrics_table(frame)     # the nvprof reader's --metrics tables, columns file, joined_to

One row per kernel (and device, and file): invocations, FLOPs and bytes (totals over the
invocations: Avg per invocation x Invocations), FLOP/byte, then the profiler's own figures as
it printed them, per invocation: `<metric>_pct` (efficiencies and utilisations in %),
`<metric>_gbs` (throughputs) and `<metric>_level` (nvprof's 0-10 utilisation levels). These
have no times, so efficiencies against a peak come from the trace they were joined to.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscope.metrics.table import Column, ResultTable

OWN_SUFFIXES = {"_pct": ("%", ".2f"), "_gbs": ("GB/s", ".2f"), "_level": ("(0-10)", "g")}
"""Column-name ending of the profiler's own figures -> (title unit, format)."""
BASE_COLUMNS = (
    Column("kernel", "Kernel"),
    Column("device", "Device"),
    Column("calls", "Invocations", "d"),
    Column("flops", "FLOPs", ".4g", "n/a"),
    Column("bytes", "Bytes", ",.0f", "n/a"),
    Column("intensity", "FLOP/byte", ".3g", "n/a"),
)


def own_columns(frame: pd.DataFrame) -> list[Column]:
    """The profiler's own figures present in `frame`, titled with their unit."""
    out = []
    for key in frame.columns:
        for suffix, (unit, fmt) in OWN_SUFFIXES.items():
            if str(key).endswith(suffix):
                out.append(Column(key, f"{key[: -len(suffix)]} {unit}", fmt, "n/a"))
    return out


def metrics_table(frame: pd.DataFrame | None) -> ResultTable | None:
    """The table, or None when no `--metrics` file was read."""
    if frame is None or not len(frame):
        return None
    shown = frame.copy()
    flops = pd.to_numeric(shown["flops"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    nbytes = pd.to_numeric(shown["bytes"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.where(np.isfinite(flops) & np.isfinite(nbytes) & (nbytes > 0), flops / nbytes, np.nan)
    shown["intensity"] = intensity
    columns = list(BASE_COLUMNS)
    if shown["file"].nunique() > 1:  # which file, and which trace it was joined to
        columns[:0] = [Column("file", "File"), Column("joined_to", "Joined to")]
    columns += own_columns(shown)
    notes = ["FLOPs and bytes: totals over the invocations (nvprof's per-invocation Avg x Invocations); "
             "%, GB/s and levels: nvprof's own per-invocation averages."]
    joined = shown["joined_to"].dropna().unique()
    if len(joined):
        notes.append(f"FLOPs and bytes joined into the launches of {', '.join(map(str, joined))} (same run): the ranking's efficiencies use them.")
    if shown["joined_to"].isna().any():
        notes.append("No trace or summary of the same run was read with some of these metrics: those kernels have no "
                     "times here, so no efficiency against a peak (read the --print-gpu-trace CSV or the summary with them).")
    return ResultTable.from_frame(shown, "Profiler metrics (nvprof --metrics)", columns, notes)
