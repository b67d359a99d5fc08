"""Provides the per-run table for many profiles at once, and its grouped means (seed 001).

    from gpuscope.metrics.kernels.runs import run_efficiencies, runs_table, grouped_table
    row = {"file": path, **fields, **run_efficiencies(kernels, peak, batch_s)}

One row per profile: its configuration fields (from the file name, `parsers.run_config`), the
peak it is measured against (each profile its own GPU's: `peak_gpu`, `peak_tflops`, `peak_gbs`), the
seed's three efficiencies (`kernel_efficiency`: compute, FLOPS, bandwidth, with the achieved
TFLOP/s and GB/s), and, when a marker file gave a batch duration, the seed's scaled
efficiencies (`parsers.markers.scaled_efficiencies`: profiled FLOPs and bytes over the wall time
of 25 batches). `grouped_table` is the seed's `efficiency_df.groupby([...]).mean()` over them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePath
from typing import Any, Sequence

import pandas as pd

from gpuscope.metrics.kernels import efficiency as ke
from gpuscope.metrics.kernels.table import NA, grouped
from gpuscope.metrics.table import Column, ResultTable

SCALED_BATCHES = 25
"""The seed spreads the profiled FLOPs/bytes over 25 batches (its PyProf window)."""

EFFICIENCY_COLUMNS = (
    Column("launches", "Launches", "d", NA),
    Column("compute_efficiency_pct", "Compute eff %", ".2f", NA),
    Column("tflops_per_s", "TFLOP/s", ".3f", NA),
    Column("flops_efficiency_pct", "FLOPS eff %", ".2f", NA),
    Column("bandwidth_gbs", "GB/s", ".2f", NA),
    Column("bandwidth_efficiency_pct", "BW eff %", ".2f", NA),
    Column("batch_s", "Batch (s)", ".4f", NA),
    Column("scaled_flops_efficiency_pct", "Scaled FLOPS eff %", ".2f", NA),
    Column("scaled_bandwidth_efficiency_pct", "Scaled BW eff %", ".2f", NA),
)
PEAK_COLUMNS = (
    Column("peak_gpu", "GPU", "", NA),
    Column("peak_tflops", "Peak TFLOPS", "g", NA),
    Column("peak_gbs", "Peak GB/s", "g", NA),
)
"""The peak each run is measured against: the GPU its profile names (or --gpu, the flags, NVML)."""
SCALED_KEYS = ("batch_s", "scaled_flops_efficiency_pct", "scaled_bandwidth_efficiency_pct")
NO_MARKERS_NOTE = ("Scaled efficiencies need marker CSVs (name_str,timestamp): markers_<profile name>.csv "
                   "next to the profiles, in a folder beside theirs, or given with --markers.")
SCALED_NOTE = ("Scaled efficiencies (seed 001): the profile's FLOPs and bytes over 25 batches of wall time; "
               "batch = min(median 'End of Batch' interval, median 'Forward Pass' interval after the first 26). "
               "The seed also takes TAU's batch time into the minimum; gpuscope has no TAU input.")


def _ok(value: float | None) -> bool:
    return value is not None and value == value and value > 0


def run_efficiencies(kernels: pd.DataFrame, tflops: float | None, gbs: float | None, batch_s: float | None) -> dict[str, Any]:
    """The efficiency columns for one run's kernel table; None where a peak or an input is missing."""
    s = ke.sums(kernels)
    tflops_s, gbs_s = ke.tflops_per_s(s), ke.bandwidth_gbs(s)
    row: dict[str, Any] = {
        "launches": int(s.launches.sum()),
        "compute_efficiency_pct": ke.compute_efficiency_pct(s),
        "tflops_per_s": tflops_s,
        "flops_efficiency_pct": tflops_s / tflops * 100 if tflops_s is not None and _ok(tflops) else None,
        "bandwidth_gbs": gbs_s,
        "bandwidth_efficiency_pct": gbs_s / gbs * 100 if gbs_s is not None and _ok(gbs) else None,
        "batch_s": batch_s if _ok(batch_s) else None,
        "scaled_flops_efficiency_pct": None,
        "scaled_bandwidth_efficiency_pct": None,
    }
    if _ok(batch_s):
        # Seed cell In [23]: FLOPs.sum() / (25 * batch) * 1e-12 / peak * 100 (bytes alike, 1e-9).
        seconds = SCALED_BATCHES * float(batch_s)  # type: ignore[arg-type]
        if _ok(tflops) and s.null_flops < s.used_rows:
            row["scaled_flops_efficiency_pct"] = float(s.flops.sum()) / seconds * 1e-12 / float(tflops) * 100  # type: ignore[arg-type]
        if _ok(gbs) and s.null_bytes < s.used_rows:
            row["scaled_bandwidth_efficiency_pct"] = float(s.nbytes.sum()) / seconds * 1e-9 / float(gbs) * 100  # type: ignore[arg-type]
    return row


def peak_fields(gpu: str | None, tflops: float | None, gbs: float | None) -> dict[str, Any]:
    """The PEAK_COLUMNS of one run (None where unknown)."""
    return {"peak_gpu": gpu or None, "peak_tflops": tflops, "peak_gbs": gbs}


def runs_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Rows from `run_efficiencies` (plus `file`, config fields and `peak_fields`) as a frame whose
    efficiency and peak columns are float64 (None as NaN), so grouping averages them."""
    frame = pd.DataFrame(list(rows))
    for column in (*EFFICIENCY_COLUMNS, *PEAK_COLUMNS[1:]):
        if column.key in frame:
            dtype = pd.Int64Dtype() if column.key == "launches" else float
            frame[column.key] = pd.to_numeric(frame[column.key], errors="coerce").astype(dtype)
    return frame


def short_names(paths: Sequence[str]) -> dict[str, str]:
    """Each path's shortest ending that no other path shares: the file name, else `folder/name`,
    and so on, so profiles with the same file name in different folders keep distinct labels."""
    parts = {path: PurePath(str(path)).parts for path in dict.fromkeys(paths)}
    names: dict[str, str] = {}
    depth = 1
    while len(names) < len(parts):
        tails = Counter(p[-depth:] for p in parts.values())
        for path, p in parts.items():
            if path not in names and (tails[p[-depth:]] == 1 or depth >= len(p)):
                names[path] = str(PurePath(*p[-depth:]))
        depth += 1
    return names


def _shown_columns(frame: pd.DataFrame) -> list[Column]:
    has_scaled = any(k in frame and frame[k].notna().any() for k in SCALED_KEYS)
    return [c for c in EFFICIENCY_COLUMNS if c.key in frame and (has_scaled or c.key not in SCALED_KEYS)]


def _scaled_note(frame: pd.DataFrame) -> str:
    has_scaled = "batch_s" in frame and frame["batch_s"].notna().any()
    return SCALED_NOTE if has_scaled else NO_MARKERS_NOTE


def runs_table(frame: pd.DataFrame, fields: Sequence[str], compact: bool = True) -> ResultTable:
    """One row per profile. `compact` (screen, text): config fields with one value across all
    runs move to a note, so the table shows what differs; CSV/JSON keep every field."""
    shown_fields = [f for f in fields if f in frame]
    notes = []
    if compact and len(frame):
        same = [f for f in shown_fields if frame[f].astype(pd.StringDtype()).nunique(dropna=False) == 1]
        if same:
            notes.append("Same in every run: " + ", ".join(f"{f}={frame[f].iloc[0]}" for f in same))
        shown_fields = [f for f in shown_fields if f not in same]
    peaks = [c for c in PEAK_COLUMNS if c.key in frame]
    if compact and peaks and all(frame[c.key].astype(pd.StringDtype()).nunique(dropna=False) == 1 for c in peaks):
        peaks = []  # one peak for every run: the summary says which
    columns = [Column("file", "File"), *(Column(f) for f in shown_fields), *peaks, *_shown_columns(frame)]
    notes.append(_scaled_note(frame))
    if compact and "file" in frame:  # short labels, not paths: the folder is the same for most runs
        labels = short_names([str(f) for f in frame["file"]])
        frame = frame.assign(file=[labels[str(f)] for f in frame["file"]])
    return ResultTable.from_frame(frame, "Runs", columns, notes)


def grouped_table(frame: pd.DataFrame, by: Sequence[str]) -> ResultTable:
    """Mean efficiencies per group of runs, like the seed's `groupby(['batch_size', 'nodes']).mean()`.
    Only efficiency columns are averaged (the seed's config values are strings). Raises ValueError
    for a field that is not a column."""
    values = [c.key for c in _shown_columns(frame) if c.key != "launches"]
    missing = [f for f in by if f not in frame]
    if missing:
        fields = [c for c in frame.columns if c not in values and c not in ("file", "launches", *(p.key for p in PEAK_COLUMNS))]
        raise ValueError(f"cannot group by {', '.join(missing)}: the runs have fields {', '.join(fields) or '(none)'}")
    means = grouped(frame[list(by) + values], by)
    columns = [*(Column(f) for f in by), Column("runs", "Runs", "d"), *(c for c in _shown_columns(frame) if c.key in values)]
    title = "Runs grouped by " + ", ".join(by)
    return ResultTable.from_frame(means, title, columns, ["Means over the runs in each group (seed 001).", _scaled_note(frame)])
