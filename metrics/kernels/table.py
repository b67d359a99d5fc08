"""Provides the per-kernel roofline table and the seed's grouped mean table.

    from gpuscope.metrics.kernels.table import kernel_table, to_result_table, grouped
    frame = kernel_table(read.table, choose_peak(gpu="K40m"))

One row per kernel name (launches with a null, zero or negative duration are left out, as in
`kernel_efficiency.usable`, and counted in `frame.attrs['excluded_rows']`):

* calls (launches; a summary row counts its Instances), total_ns, share_pct = total_ns / Σ total_ns * 100
* flops, bytes: summed over the kernel's launches; null when no launch has a value
* flop_per_s = flops / total_ns * 1e9; flops_eff_pct = flop_per_s / (peak TFLOPS * 1e12) * 100
* gbs = bytes / total_ns (B/ns = GB/s; equal to the seed's duration-weighted mean bandwidth);
  bw_eff_pct = gbs / peak GB/s * 100
* intensity = flops / bytes (FLOP/byte); ridge = peak FLOP/s / peak B/s
* verdict: 'memory-bound' when intensity < ridge, 'compute-bound' when >= ridge, null (n/a) when
  flops, bytes or a peak is missing (or bytes is 0)
* roof_flop_per_s = min(peak FLOP/s, intensity * peak B/s), the attainable FLOP/s at that intensity
* below_roof_pct = (1 - flop_per_s / roof) * 100: how far achieved FLOP/s is below the roof
  (negative = above the roof: a wrong peak or broken counts); null when the roof is 0.

Profiles of GPUs with different peaks, read together: each launch carries its own GPU's peak
(columns `peak_tflops`, `peak_gbs`; `kernel_efficiency.PEAK_COLUMNS`) and `peak` is not used
for the numbers. A kernel's peak is then its launches' time-weighted mean peak, so its
efficiency is its FLOPs (bytes) over what its GPUs could do in its time, Σ duration x peak; null
when one of its launches has no peak. A kernel whose launches ran under different peaks has no
single roof: its ridge, verdict and roof are null.

Every number is finite or <NA> (nullable Float64), never inf or NaN.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.kernels.efficiency import PEAK_COLUMNS, usable
from gpuscope.metrics.table import Column, ResultTable

KERNEL_METRIC_COLUMNS = (
    "kernel", "calls", "total_ns", "share_pct", "flops", "flop_per_s", "flops_eff_pct", "bytes", "gbs",
    "bw_eff_pct", "intensity", "ridge", "verdict", "roof_flop_per_s", "below_roof_pct",
)
NA = "n/a"
"""What the screen, text and markdown show for a value that cannot be computed (JSON: null, CSV: empty)."""
RESULT_COLUMNS = (
    Column("kernel", "Kernel"),
    Column("calls", "Calls", "d", NA),
    Column("total_ms", "Total (ms)", ".3f", NA),
    Column("share_pct", "Share %", ".1f", NA),
    Column("flop_per_s", "FLOP/s", ".3g", NA),
    Column("flops_eff_pct", "FLOPS eff %", ".2f", NA),
    Column("gbs", "GB/s", ".2f", NA),
    Column("bw_eff_pct", "BW eff %", ".2f", NA),
    Column("intensity", "FLOP/byte", ".3g", NA),
    Column("verdict", "Bound", "", NA),
    Column("below_roof_pct", "Below roof %", ".1f", NA),
)


def _peak_values(peak: Any) -> tuple[float | None, float | None]:
    """(peak FLOP/s, peak B/s) from a ChosenPeak-like object (tflops, gbs) or a (tflops, gbs) pair."""
    if peak is None:
        return None, None
    tflops, gbs = (peak.tflops, peak.gbs) if hasattr(peak, "tflops") else peak
    ok = lambda v: v is not None and np.isfinite(float(v)) and float(v) > 0  # noqa: E731
    return (float(tflops) * 1e12 if ok(tflops) else None, float(gbs) * 1e9 if ok(gbs) else None)


def _clean(values: np.ndarray) -> pd.array:
    values = np.asarray(values, dtype="float64")
    out = pd.array(np.where(np.isfinite(values), values, 0.0), dtype=pd.Float64Dtype())
    out[~np.isfinite(values)] = pd.NA
    return out


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den where both are finite and den != 0, NaN (later <NA>) elsewhere."""
    num = np.asarray(num, dtype="float64")
    den = np.asarray(den, dtype="float64")
    ok = np.isfinite(num) & np.isfinite(den) & (den != 0)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=ok)
    return out


def _kernel_peaks(frame: pd.DataFrame, groups: Any, peak: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per kernel (in `groups`' order): peak FLOP/s, peak B/s (NaN when unknown) and whether all
    its launches had the same peaks. One `peak` for every launch unless `frame` has PEAK_COLUMNS."""
    n = groups.ngroups
    if not any(name in frame for name in PEAK_COLUMNS):
        peak_fs, peak_bs = _peak_values(peak)
        return np.full(n, np.nan if peak_fs is None else peak_fs), np.full(n, np.nan if peak_bs is None else peak_bs), np.ones(n, bool)
    out, same = [], np.ones(n, bool)
    launches, duration = groups.size().to_numpy(), groups["duration_ns"].sum().to_numpy()
    for name, scale in (("peak_tflops", 1e12), ("peak_gbs", 1e9)):
        per_launch = frame[name] * scale if name in frame else pd.Series(np.nan, index=frame.index)
        work = (per_launch * frame["duration_ns"]).groupby(frame["kernel"], sort=False, observed=True).sum()  # Σ duration x peak
        by_kernel = per_launch.groupby(frame["kernel"], sort=False, observed=True)
        low, high = by_kernel.min().to_numpy(), by_kernel.max().to_numpy()
        known = by_kernel.count().to_numpy() == launches  # every launch has a peak
        same &= ~known | (low == high)
        out.append(np.where(known, np.where(low == high, low, _divide(work.to_numpy(), duration)), np.nan))
    return out[0], out[1], same


def kernel_table(table: pd.DataFrame, peak: Any = None) -> pd.DataFrame:
    """The per-kernel roofline table (see the module docstring), longest total time first."""
    frame, excluded, findings = usable(table)
    if frame.empty:
        out = pd.DataFrame({c: pd.Series(dtype="string" if c in ("kernel", "verdict") else ("Int64" if c == "calls" else "Float64"))
                            for c in KERNEL_METRIC_COLUMNS})
        out.attrs.update(excluded_rows=excluded, findings=findings)
        return out
    groups = frame.groupby("kernel", sort=False, observed=True)
    summed = groups[["duration_ns"]].sum()
    summed["calls"] = groups["calls"].sum()  # a summary row counts its Instances / Calls
    summed["flops"] = groups["flops"].sum(min_count=1)
    summed["bytes"] = groups["bytes"].sum(min_count=1)
    peak_fs, peak_bs, one_peak = _kernel_peaks(frame, groups, peak)
    summed = summed.reset_index()
    summed["kernel"] = summed["kernel"].astype(object).astype(str)
    dur = summed["duration_ns"].to_numpy(dtype="float64")
    flops = summed["flops"].to_numpy(dtype="float64")
    nbytes = summed["bytes"].to_numpy(dtype="float64")
    flop_per_s = _divide(flops * 1e9, dur)
    byte_per_s = _divide(nbytes * 1e9, dur)
    intensity = _divide(flops, nbytes)
    ridge = np.where(one_peak, _divide(peak_fs, peak_bs), np.nan)  # one roof per kernel, or none
    roof = np.where(np.isfinite(intensity) & np.isfinite(ridge), np.minimum(peak_fs, intensity * peak_bs), np.nan)
    verdict = np.where(~np.isfinite(intensity) | ~np.isfinite(ridge), None,
                       np.where(intensity < ridge, "memory-bound", "compute-bound"))
    out = pd.DataFrame({
        "kernel": pd.array(summed["kernel"], dtype="string"),
        "calls": pd.array(summed["calls"], dtype="Int64"),
        "total_ns": _clean(dur),
        "share_pct": _clean(_divide(dur * 100, np.full(dur.shape, dur.sum()))),
        "flops": _clean(flops),
        "flop_per_s": _clean(flop_per_s),
        "flops_eff_pct": _clean(_divide(flop_per_s, peak_fs) * 100),
        "bytes": _clean(nbytes),
        "gbs": _clean(byte_per_s * 1e-9),
        "bw_eff_pct": _clean(_divide(byte_per_s, peak_bs) * 100),
        "intensity": _clean(intensity),
        "ridge": _clean(ridge),
        "verdict": pd.array(verdict, dtype="string"),
        "roof_flop_per_s": _clean(roof),
        "below_roof_pct": _clean((1 - _divide(flop_per_s, roof)) * 100),
    })
    out = out.sort_values(["total_ns", "kernel"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    out.attrs.update(excluded_rows=excluded, findings=findings)
    return out


def to_result_table(frame: pd.DataFrame, peak: Any = None, title: str = "Kernels") -> ResultTable:
    """`kernel_table`'s output as a ResultTable (total time in ms); the notes say which peak was used."""
    shown = frame.copy()
    shown["total_ms"] = shown["total_ns"] / 1e6
    notes = []
    if peak is not None and getattr(peak, "source_text", ""):
        notes.append(f"Peak: {peak.source_text}")
    ridges = frame["ridge"].dropna().unique()
    per_profile = peak is not None and _peak_values(peak) == (None, None)  # each profile its own GPU's peak
    if len(ridges) == 1 and not per_profile:
        notes.append(f"Ridge point: {float(ridges[0]):.3g} FLOP/byte; below it a kernel is memory-bound")
    elif len(ridges):
        notes.append("Ridge point: each kernel's, from the peak of the GPU it ran on; a kernel run on GPUs "
                     "with different peaks has no verdict")
    excluded = frame.attrs.get("excluded_rows", 0)
    if excluded:
        notes.append(f"{excluded} launch(es) with a null, zero or negative duration left out")
    return ResultTable.from_frame(shown, title, RESULT_COLUMNS, notes)


def grouped(efficiencies: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean of every numeric column per group, like the seed's
    `efficiency_df.groupby(['batch_size', 'nodes']).mean()` (seed 001, cell In [8]), plus `runs`
    (rows per group). Group columns come first as ordinary columns; null keys form their own group.
    Raises ValueError for a field that is not a column."""
    by = list(by)
    missing = [f for f in by if f not in efficiencies.columns]
    if not by or missing:
        raise ValueError(f"cannot group by {missing or by}: fields are {', '.join(map(str, efficiencies.columns))}")
    numeric = [c for c in efficiencies.columns if c not in by and pd.api.types.is_numeric_dtype(efficiencies[c])
               and not pd.api.types.is_bool_dtype(efficiencies[c])]
    frame = efficiencies[by + numeric].copy()
    for c in numeric:
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
        frame[c] = frame[c].where(np.isfinite(frame[c]))
    groups = frame.groupby(by, dropna=False, sort=True)
    out = groups[numeric].mean() if numeric else pd.DataFrame(index=groups.size().index)
    out.insert(0, "runs", groups.size())
    out = out.reset_index()
    for c in numeric:
        out[c] = _clean(out[c].to_numpy(dtype="float64"))
    return out
