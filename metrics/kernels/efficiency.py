"""Provides the seed notebook's (seed 001) three GPU efficiencies and its per-kernel ranking.

Input is a kernel table with columns `kernel`, `duration_ns`, `flops`, `bytes` (the canonical
table the profiler readers return). Definitions, exactly as the notebook computes them:

* GPU compute efficiency (%): group launches by kernel name and sum; kernels whose summed FLOPs
  is 0 (null FLOPs count as 0, as pandas' sum does) are "no compute". Efficiency = summed
  duration of the other kernels / total duration * 100. With PyProf this is really "share of
  kernel time in kernels PyProf can model" (FLOPs 0 means not modelled). When no launch has a
  FLOP count at all (nsys and nvprof traces) it is None: unknown, not 0 %.
* FLOPS efficiency (%): (total FLOPs / total duration in s) * 1e-12 / peak TFLOPS * 100.
* Bandwidth efficiency (%): per launch bandwidth = 1e9 * bytes / duration_ns (B/s), weight =
  duration / total duration; GPU bandwidth = sum(bandwidth * weight) * 1e-9 GB/s (null bytes are
  skipped by the sum); efficiency = GPU bandwidth / peak GB/s * 100.
* Kernel ranking: per kernel name, summed duration and FLOPs, FLOPs per sec = FLOPs / duration *
  1e9, FLOPS efficiency (%) = FLOPs per sec * 1e-12 / peak TFLOPS * 100, sorted by efficiency;
  a kernel none of whose launches has a FLOP count has NaN FLOPs, FLOPs per sec and efficiency.

Rows whose duration is null, non-finite, zero or negative are excluded before anything is
computed (so no inf/NaN reaches an output) and counted in `excluded_rows` and a finding.
Peaks are always passed in explicitly (e.g. K40m: 4.29 TFLOPS FP32 at base clock, 288 GB/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding

COLUMNS = ("kernel", "duration_ns", "flops", "bytes")
RANKING_COLUMNS = ("kernel", "duration_ns", "flops", "flops_per_s", "flops_efficiency_pct", "launches", "time_share_pct")
NULL_KERNEL = "<unnamed>"


@dataclass(frozen=True)
class KernelEfficiency:
    """The seed's three GPU efficiencies for one kernel table; None where it cannot be computed."""

    compute_efficiency_pct: float | None
    tflops_per_s: float | None
    flops_efficiency_pct: float | None
    bandwidth_gbs: float | None
    bandwidth_efficiency_pct: float | None
    peak_tflops: float
    peak_gbs: float
    used_rows: int
    excluded_rows: int
    findings: list[Finding] = field(default_factory=list)


def _check_peak(value: float, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def _raw(table: pd.DataFrame, name: str) -> np.ndarray:
    """A numeric column as a writable float64 array, nulls as NaN (no other cleaning)."""
    if name not in table:
        return np.full(len(table), np.nan)
    column = table[name]
    if not pd.api.types.is_numeric_dtype(column.dtype):
        column = pd.to_numeric(column, errors="coerce")
    return column.to_numpy(dtype="float64", na_value=np.nan, copy=True)


def _column(table: pd.DataFrame, name: str) -> pd.Series:
    if name not in table:
        return pd.Series(np.nan, index=table.index, dtype="float64")
    column = table[name]
    if not pd.api.types.is_numeric_dtype(column.dtype):
        column = pd.to_numeric(column, errors="coerce")
    values = column.to_numpy(dtype="float64", na_value=np.nan, copy=True)  # one conversion, nulls as NaN
    values[~np.isfinite(values)] = np.nan
    return pd.Series(values, index=table.index)


def _kernel_names(table: pd.DataFrame) -> pd.Categorical:
    """Kernel names as a categorical: a few hundred distinct names over millions of launches, so
    grouping by codes is many times faster than by Python strings (bench/kernels_bench.py)."""
    if "kernel" not in table:
        return pd.Categorical.from_codes(np.zeros(len(table), np.int64), categories=pd.Index([NULL_KERNEL], dtype=object))
    column = table["kernel"]
    if isinstance(column.dtype, pd.CategoricalDtype):  # the canonical table: codes already there
        codes, names = column.cat.codes.to_numpy(), column.cat.categories
    else:
        codes, names = pd.factorize(column, use_na_sentinel=True)
    categories = pd.Index([str(n) for n in names] + ([NULL_KERNEL] if (codes < 0).any() else []), dtype=object)
    codes = np.where(codes < 0, len(names), codes)
    if categories.has_duplicates:  # a real kernel called like the placeholder: merge them
        return pd.Categorical(np.asarray(categories)[codes])
    return pd.Categorical.from_codes(codes, categories=categories)


def launch_counts(table: pd.DataFrame) -> np.ndarray:
    """Launches each row stands for: a summary row (nsys `cuda_gpu_kern_sum`, nvprof summaries)
    holds its `calls` (Instances); a per-launch row, or a row whose count is unknown, is 1."""
    calls = _raw(table, "calls")
    return np.where(np.isfinite(calls) & (calls >= 1), np.round(calls), 1.0)


PEAK_COLUMNS = ("peak_tflops", "peak_gbs")
"""Optional per-launch peaks (TFLOPS, GB/s): when profiles of GPUs with different peaks are read
together, each launch carries its own GPU's peak (`kernel_metrics.kernel_table` uses them)."""


def usable(table: pd.DataFrame) -> tuple[pd.DataFrame, int, list[Finding]]:
    """(kernel, duration_ns, flops, bytes, calls, and the PEAK_COLUMNS the table has) as plain
    float64/object columns, the rows with a positive finite duration only, how many rows were
    excluded, and the findings that explain it."""
    findings: list[Finding] = []
    frame = pd.DataFrame({
        "kernel": _kernel_names(table),
        "duration_ns": _column(table, "duration_ns"),
        "flops": _column(table, "flops"),
        "bytes": _column(table, "bytes"),
        "calls": launch_counts(table),
        **{name: _column(table, name) for name in PEAK_COLUMNS if name in table},
    })
    keep = frame["duration_ns"].notna() & (frame["duration_ns"] > 0)
    excluded = int((~keep).sum())
    if excluded:
        findings.append(Finding("warning", "excluded", f"{excluded} of {len(frame)} kernel row(s) excluded: duration is null, zero or negative", count=excluded))
    for name in ("kernel", "duration_ns", "flops", "bytes"):
        if name not in table:
            findings.append(Finding("warning", "missing-column", f"kernel table has no '{name}' column"))
    return frame[keep].reset_index(drop=True), excluded, findings


CHUNK_ROWS = 1 << 20
"""Rows per pass: temporaries of a few MB are reused by the allocator, while whole-table
temporaries (80 MB each at 10 M rows) would each fault in fresh memory, which costs more than
the arithmetic (measured: 3x slower at 10 M rows without chunks)."""


@dataclass(frozen=True)
class KernelSums:
    """Per-kernel sums over the usable launches, from one chunked pass over the table (every
    seed quantity derives from these): names, summed duration/FLOPs/bytes (nulls as 0, as
    pandas' sum does), launches, and the duration-weighted bandwidth numerator."""

    names: np.ndarray
    duration: np.ndarray
    flops: np.ndarray
    nbytes: np.ndarray
    launches: np.ndarray
    flops_rows: np.ndarray
    """Per kernel, the usable rows that have a FLOP count: 0 means its FLOPs are unknown."""
    null_flops: int
    null_bytes: int
    used_rows: int
    excluded_rows: int
    findings: list[Finding]


def sums(table: pd.DataFrame) -> KernelSums:
    """Group the usable launches by kernel with numpy (bincount on categorical codes), in chunks."""
    findings: list[Finding] = []
    for name in COLUMNS:
        if name not in table:
            findings.append(Finding("warning", "missing-column", f"kernel table has no '{name}' column"))
    kernel = _kernel_names(table)
    all_codes = np.asarray(kernel.codes)
    n = len(kernel.categories)
    duration_sum, flops_sum, bytes_sum = np.zeros(n), np.zeros(n), np.zeros(n)
    launches, flops_rows = np.zeros(n, np.int64), np.zeros(n, np.int64)
    null_flops, null_bytes, used = 0, 0, 0
    for start in range(0, len(table), CHUNK_ROWS):
        part = table.iloc[start : start + CHUNK_ROWS]
        duration = _raw(part, "duration_ns")
        keep = np.isfinite(duration) & (duration > 0)  # null, non-finite and <= 0 durations drop out
        codes = all_codes[start : start + CHUNK_ROWS][keep]
        duration = duration[keep]
        flops = _raw(part, "flops")[keep]
        nbytes = _raw(part, "bytes")[keep]
        calls = launch_counts(part)[keep] if "calls" in part else None  # per-launch tables: 1 each
        bad_flops, bad_bytes = ~np.isfinite(flops), ~np.isfinite(nbytes)
        flops[bad_flops] = 0.0  # null (or non-finite) FLOPs and bytes sum as 0, as pandas' sum does
        nbytes[bad_bytes] = 0.0
        launches += np.bincount(codes, weights=calls, minlength=n).astype(np.int64)
        duration_sum += np.bincount(codes, weights=duration, minlength=n)
        flops_sum += np.bincount(codes, weights=flops, minlength=n)
        bytes_sum += np.bincount(codes, weights=nbytes, minlength=n)
        flops_rows += np.bincount(codes[~bad_flops], minlength=n)
        null_flops += int(bad_flops.sum())
        null_bytes += int(bad_bytes.sum())
        used += int(keep.sum())
    excluded = len(table) - used
    if excluded:
        findings.append(Finding("warning", "excluded", f"{excluded} of {len(table)} kernel row(s) excluded: duration is null, zero or negative", count=excluded))
    present = launches > 0
    return KernelSums(
        names=np.asarray(kernel.categories, dtype=object)[present], duration=duration_sum[present],
        flops=flops_sum[present], nbytes=bytes_sum[present], launches=launches[present],
        flops_rows=flops_rows[present], null_flops=null_flops, null_bytes=null_bytes,
        used_rows=used, excluded_rows=excluded, findings=findings,
    )


def compute_efficiency_pct(s: KernelSums) -> float | None:
    """Seed: duration of kernels (grouped by name) whose summed FLOPs != 0, over all duration, in %.
    None when no launch has a FLOP count: the profile cannot tell compute from no compute."""
    total = float(s.duration.sum())
    if not s.used_rows or total <= 0 or s.null_flops == s.used_rows:
        return None
    return float(s.duration[s.flops != 0].sum()) / total * 100


def tflops_per_s(s: KernelSums) -> float | None:
    """Seed: total FLOPs / total duration (s), in TFLOPS. None when no row has FLOPs."""
    if not s.used_rows or s.null_flops == s.used_rows:
        return None
    return float(s.flops.sum()) / (float(s.duration.sum()) * 1e-9) * 1e-12


def bandwidth_gbs(s: KernelSums) -> float | None:
    """Seed: duration-weighted mean of per-launch bandwidth (bytes / duration), in GB/s."""
    if not s.used_rows or s.null_bytes == s.used_rows:
        return None
    # The seed's sum(bandwidth_i * duration_i / total_duration) with bandwidth_i = bytes_i /
    # duration_i is total bytes / total duration (bytes per ns = GB/s); null bytes count as 0.
    return float(s.nbytes.sum()) / float(s.duration.sum())


def efficiency(table: pd.DataFrame, *, peak_tflops: float, peak_gbs: float, precomputed: KernelSums | None = None) -> KernelEfficiency:
    """The seed's three efficiencies against the given peaks (TFLOPS for the precision used, GB/s).
    `precomputed`: `sums(table)` when the caller already has it (one pass for everything)."""
    peak_tflops = _check_peak(peak_tflops, "peak_tflops")
    peak_gbs = _check_peak(peak_gbs, "peak_gbs")
    s = precomputed if precomputed is not None else sums(table)
    findings = list(s.findings)
    if not s.used_rows:
        findings.append(Finding("warning", "no-rows", "no kernel rows with a positive duration; nothing to compute"))
    tflops = tflops_per_s(s)
    gbs = bandwidth_gbs(s)
    if s.used_rows and tflops is None:
        findings.append(Finding("warning", "no-flops", "no row has FLOPs; FLOPS efficiency unknown"))
    if s.used_rows and gbs is None:
        findings.append(Finding("warning", "no-bytes", "no row has Bytes; bandwidth efficiency unknown"))
    for name, nulls in (("flops", s.null_flops), ("bytes", s.null_bytes)):
        if nulls and nulls < s.used_rows:
            findings.append(Finding("info", f"null-{name}", f"{nulls} row(s) have no {name}; counted as 0 (their time still counts)", count=nulls))
    for value, peak, unit in ((tflops, peak_tflops, "TFLOPS"), (gbs, peak_gbs, "GB/s")):
        if value is not None and value > peak:
            findings.append(Finding("warning", "impossible", f"measured {value:.4g} {unit} is above the {peak:g} {unit} peak: wrong peak or broken counts"))
    return KernelEfficiency(
        compute_efficiency_pct=compute_efficiency_pct(s),
        tflops_per_s=tflops,
        flops_efficiency_pct=None if tflops is None else tflops / peak_tflops * 100,
        bandwidth_gbs=gbs,
        bandwidth_efficiency_pct=None if gbs is None else gbs / peak_gbs * 100,
        peak_tflops=peak_tflops, peak_gbs=peak_gbs,
        used_rows=s.used_rows, excluded_rows=s.excluded_rows, findings=findings,
    )


def kernel_ranking(table: pd.DataFrame, *, peak_tflops: float, precomputed: KernelSums | None = None) -> pd.DataFrame:
    """Seed's per-kernel table: kernel, summed duration_ns (Sil(ns)), FLOPs, FLOPs per sec, FLOPS
    efficiency (%), plus launches and share of kernel time (%); highest efficiency first, ties by
    longer duration. Excluded rows (bad durations) are not in it; see `usable()`."""
    peak_tflops = _check_peak(peak_tflops, "peak_tflops")
    s = precomputed if precomputed is not None else sums(table)
    if not s.used_rows:
        return pd.DataFrame({c: pd.Series(dtype="object" if c == "kernel" else "float64") for c in RANKING_COLUMNS})
    flops = np.where(s.flops_rows > 0, s.flops, np.nan)  # no launch counted FLOPs: unknown, not 0
    out = pd.DataFrame({"kernel": s.names.astype(str), "duration_ns": s.duration, "flops": flops, "launches": s.launches})
    out["flops_per_s"] = out["flops"] / out["duration_ns"] * 1e9
    out["flops_efficiency_pct"] = out["flops_per_s"] * 1e-12 / peak_tflops * 100
    out["time_share_pct"] = out["duration_ns"] / float(out["duration_ns"].sum()) * 100
    out = out.sort_values(["flops_efficiency_pct", "duration_ns", "kernel"], ascending=[False, False, True], kind="mergesort")
    return out[list(RANKING_COLUMNS)].reset_index(drop=True)


def efficiency_and_ranking(table: pd.DataFrame, *, peak_tflops: float, peak_gbs: float) -> tuple[KernelEfficiency, pd.DataFrame]:
    """Both of the seed's outputs from one pass over the table (what the command line uses)."""
    s = sums(table)
    return efficiency(table, peak_tflops=peak_tflops, peak_gbs=peak_gbs, precomputed=s), kernel_ranking(table, peak_tflops=peak_tflops, precomputed=s)
