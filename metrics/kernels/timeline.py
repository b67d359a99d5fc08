"""Provides GPU timeline arithmetic over a kernel table: busy time, stream overlap, idle gaps.

    from gpuscope.metrics.kernels.timeline import summarize, idle_gaps
    per_device = summarize(read.table, gap_threshold_ns=10_000)

Busy time is the length of the union of [start, start + duration) intervals on one device;
summed time is Σ duration; their difference is time during which streams overlapped. Idle gaps
are the holes between merged intervals, so busy + Σ gaps = span (first start to last end).
Rows with a null start or duration, or a negative / non-finite duration, are left out (counted
in `skipped`); zero-length intervals count as launches but add no time. Starts are shifted by
the device's first start before any float arithmetic, so 1.7e18 ns epochs keep ns precision.
Nothing returns inf or NaN: ratios over an empty span are <NA>.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pandas as pd

SUMMARY_COLUMNS = (
    "device", "intervals", "skipped", "span_ns", "busy_ns", "summed_ns", "overlap_ns", "idle_ns",
    "gaps", "long_gaps", "longest_gap_ns", "busy_fraction",
)
GAP_COLUMNS = ("device", "start_ns", "end_ns", "gap_ns")
COPY_OPS = ("memcpy", "memset")


def _valid(starts: np.ndarray, durations: np.ndarray) -> np.ndarray:
    return np.isfinite(starts) & np.isfinite(durations) & (durations >= 0)


def merge_intervals(starts: np.ndarray | list[float], durations: np.ndarray | list[float]) -> tuple[np.ndarray, np.ndarray]:
    """(block_starts, block_ends) of the union of [s, s + d); invalid intervals are ignored.
    Touching intervals (end == next start) merge; a zero-length interval inside a block vanishes,
    one on its own is a block of length 0."""
    s = np.asarray(starts, dtype="float64")
    d = np.asarray(durations, dtype="float64")
    ok = _valid(s, d)
    s, e = s[ok], s[ok] + d[ok]
    if s.size == 0:
        return np.empty(0), np.empty(0)
    order = np.lexsort((e, s))
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    new_block = np.empty(s.size, dtype=bool)
    new_block[0] = True
    new_block[1:] = s[1:] > reach[:-1]
    block_id = np.cumsum(new_block) - 1
    block_starts = s[new_block]
    block_ends = np.zeros(block_starts.size)
    np.maximum.at(block_ends, block_id, e)
    block_ends = np.maximum(block_ends, block_starts)
    return block_starts, block_ends


def union_length(starts: np.ndarray | list[float], durations: np.ndarray | list[float]) -> float:
    bs, be = merge_intervals(starts, durations)
    return float(np.sum(be - bs)) if bs.size else 0.0


def _columns(table: pd.DataFrame, include_copies: bool) -> pd.DataFrame:
    frame = table
    if not include_copies and "op" in frame:
        frame = frame[~frame["op"].isin(COPY_OPS).fillna(False).astype(bool)]
    out = pd.DataFrame({
        "device": (frame["device"].astype("string").fillna("?") if "device" in frame else pd.Series("?", index=frame.index, dtype="string")),
        "start": pd.to_numeric(frame["start_ns"], errors="coerce").astype("Int64") if "start_ns" in frame else pd.Series(pd.NA, index=frame.index, dtype="Int64"),
        "dur": pd.to_numeric(frame["duration_ns"], errors="coerce").astype("Float64") if "duration_ns" in frame else pd.Series(pd.NA, index=frame.index, dtype="Float64"),
    })
    return out


def _devices(table: pd.DataFrame, include_copies: bool) -> Iterator[tuple[str, int, np.ndarray, np.ndarray, int]]:
    """(device, base, relative starts, durations, skipped) per device, devices sorted. The
    columns become numpy arrays once and each device is a mask over them: a group of pandas
    rows per device cost more than the arithmetic on a few launches."""
    cols = _columns(table, include_copies)
    codes, devices = pd.factorize(cols["device"], sort=True)
    known = cols["start"].notna().to_numpy()
    starts = cols["start"].to_numpy(dtype=np.int64, na_value=0)
    durations = cols["dur"].to_numpy(dtype="float64", na_value=np.nan)
    for code, device in enumerate(devices):
        rows = codes == code
        yield (device, *_device_arrays(known[rows], starts[rows], durations[rows]))


def _device_arrays(known: np.ndarray, starts: np.ndarray, dur: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, int]:
    """(base, relative starts, durations, skipped) for one device's rows: `known` says which
    starts are there (the others are 0 in `starts`)."""
    has = known & np.isfinite(dur) & (dur >= 0)
    skipped = int((~has).sum())
    if not has.any():
        return 0, np.empty(0), np.empty(0), skipped
    ints = starts[has]
    base = int(ints.min())
    return base, (ints - base).astype("float64"), dur[has], skipped


def summarize(table: pd.DataFrame, gap_threshold_ns: float = 10_000.0, include_copies: bool = True) -> pd.DataFrame:
    """One row per device: SUMMARY_COLUMNS. `long_gaps` counts gaps longer than the threshold."""
    rows = []
    for device, _base, s, d, skipped in _devices(table, include_copies):
        bs, be = merge_intervals(s, d)
        busy = float(np.sum(be - bs)) if bs.size else 0.0
        summed = float(np.sum(d)) if d.size else 0.0
        span = float(be.max() - bs.min()) if bs.size else 0.0
        gaps = bs[1:] - be[:-1] if bs.size > 1 else np.empty(0)
        rows.append({
            "device": device, "intervals": int(s.size), "skipped": skipped, "span_ns": span,
            "busy_ns": busy, "summed_ns": summed, "overlap_ns": max(summed - busy, 0.0),
            "idle_ns": float(np.sum(gaps)) if gaps.size else 0.0, "gaps": int(gaps.size),
            "long_gaps": int(np.sum(gaps > gap_threshold_ns)),
            "longest_gap_ns": float(gaps.max()) if gaps.size else 0.0,
            "busy_fraction": busy / span if span > 0 else pd.NA,
        })
    out = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    out["device"] = out["device"].astype(pd.StringDtype())
    for name in ("intervals", "skipped", "gaps", "long_gaps"):
        out[name] = out[name].astype(np.int64)
    for name in ("span_ns", "busy_ns", "summed_ns", "overlap_ns", "idle_ns", "longest_gap_ns"):
        out[name] = out[name].astype(np.float64)
    out["busy_fraction"] = out["busy_fraction"].astype(pd.Float64Dtype())
    return out


def idle_gaps(table: pd.DataFrame, min_gap_ns: float = 0.0, include_copies: bool = True) -> pd.DataFrame:
    """Every hole between merged intervals, per device, longer than `min_gap_ns` (absolute ns)."""
    parts = []
    for device, base, s, d, _ in _devices(table, include_copies):
        bs, be = merge_intervals(s, d)
        if bs.size < 2:
            continue
        g0, g1 = be[:-1], bs[1:]
        keep = (g1 - g0) > min_gap_ns
        parts.append(pd.DataFrame({
            "device": device,
            "start_ns": np.round(g0[keep]).astype("int64") + base,
            "end_ns": np.round(g1[keep]).astype("int64") + base,
            "gap_ns": (g1 - g0)[keep],
        }))
    if not parts:
        return pd.DataFrame({"device": pd.Series(dtype="string"), "start_ns": pd.Series(dtype="int64"),
                             "end_ns": pd.Series(dtype="int64"), "gap_ns": pd.Series(dtype="float64")})
    out = pd.concat(parts, ignore_index=True)
    out["device"] = out["device"].astype("string")
    return out
