"""Provides the transfers shown beside the kernels: memcpy and memset rows of a profile.

    from gpuscope.metrics.kernels.transfers import transfer_sums, transfer_table, to_result_table
    sums = transfer_sums(everything)       # every row a reader returned, copies included

Copies and memsets are not kernels, so they stay out of the efficiencies and the ranking, but
they take GPU time: one row per kind and direction (memcpy HtoD, memcpy DtoH, memset...) with
calls (a summary row counts its calls), total time, bytes (null where the format has none),
GB/s = bytes / time, and the share of the GPU's summed activity time (kernels + transfers, the
basis nvprof's and nsys's `Time(%)` use). `dominance` gives a finding when transfers take more
of that time than the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.kernels.efficiency import launch_counts
from gpuscope.metrics.table import Column, ResultTable

TRANSFER_OPS = ("memcpy", "memset")
DOMINANT_SHARE_PCT = 50.0
"""Transfers above this share of the summed GPU activity time get a finding."""
COLUMNS = (
    Column("transfer", "Transfer"),
    Column("calls", "Calls", "d"),
    Column("total_ms", "Total (ms)", ".3f"),
    Column("share_pct", "Share of GPU time %", ".1f", "n/a"),
    Column("bytes", "Bytes", ",.0f", "n/a"),
    Column("gbs", "GB/s", ".2f", "n/a"),
)


@dataclass(frozen=True)
class TransferSums:
    """Summed GPU activity: kernels and transfers (positive durations only)."""

    kernel_ns: float
    transfer_ns: float
    transfer_calls: int
    transfer_bytes: float | None
    """None when no transfer row has a byte count."""

    @property
    def share_pct(self) -> float | None:
        total = self.kernel_ns + self.transfer_ns
        return self.transfer_ns / total * 100 if total > 0 else None


def _durations(everything: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(duration_ns with non-positive or unknown ones as NaN, which rows are transfers)."""
    if not len(everything) or "op" not in everything or "duration_ns" not in everything:
        return np.full(len(everything), np.nan), np.zeros(len(everything), bool)
    duration = pd.to_numeric(everything["duration_ns"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    duration[~(duration > 0)] = np.nan
    return duration, everything["op"].isin(TRANSFER_OPS).fillna(False).to_numpy(dtype=bool)


def _copies(everything: pd.DataFrame, duration: np.ndarray, is_copy: np.ndarray) -> pd.DataFrame:
    """transfer label, duration_ns, bytes, calls of the transfer rows with a positive duration
    (`duration` and `is_copy` from `_durations`)."""
    keep = is_copy & np.isfinite(duration)
    # the few columns read here, then the rows: selecting rows of every column copies them all
    rows = everything[[c for c in ("op", "direction", "bytes", "calls") if c in everything]][keep]
    label = rows["op"].astype(pd.StringDtype())
    if "direction" in rows:
        label = label + (" " + rows["direction"].astype(pd.StringDtype())).fillna("")
    return pd.DataFrame({
        "transfer": label.astype(str).to_numpy(),
        "duration_ns": duration[keep],
        "bytes": pd.to_numeric(rows["bytes"], errors="coerce").to_numpy(dtype="float64", na_value=np.nan) if "bytes" in rows else np.nan,
        "calls": launch_counts(rows),
    })


def transfer_sums(everything: pd.DataFrame) -> TransferSums:
    duration, is_copy = _durations(everything)
    copies = _copies(everything, duration, is_copy)
    nbytes = copies["bytes"].sum(min_count=1)
    return TransferSums(float(np.nansum(duration[~is_copy])), float(copies["duration_ns"].sum()),
                        int(copies["calls"].sum()), None if pd.isna(nbytes) else float(nbytes))


def transfer_table(everything: pd.DataFrame) -> pd.DataFrame:
    """One row per transfer kind and direction, longest total time first (empty: no transfers)."""
    duration, is_copy = _durations(everything)
    total = float(np.nansum(duration))
    groups = _copies(everything, duration, is_copy).groupby("transfer", sort=False)
    out = pd.DataFrame({
        "calls": groups["calls"].sum().astype("int64"),
        "total_ns": groups["duration_ns"].sum(),
        "bytes": groups["bytes"].sum(min_count=1),
    }).reset_index()
    out["share_pct"] = out["total_ns"] / total * 100 if total > 0 else np.nan
    out["gbs"] = out["bytes"] / out["total_ns"]  # B/ns = GB/s; NaN where bytes are unknown
    out["total_ms"] = out["total_ns"] / 1e6
    return out.sort_values(["total_ns", "transfer"], ascending=[False, True], kind="mergesort").reset_index(drop=True)


def dominance(sums: TransferSums) -> list[Finding]:
    """A warning when copies and memsets take more of the summed GPU time than the kernels."""
    share = sums.share_pct
    if share is None or share <= DOMINANT_SHARE_PCT:
        return []
    total_ms = (sums.kernel_ns + sums.transfer_ns) / 1e6
    return [Finding("warning", "transfers-dominate",
                    f"memcpy/memset take {share:.1f} % of the GPU's summed activity time ({sums.transfer_ns / 1e6:,.3f} of {total_ms:,.3f} ms, "
                    f"{sums.transfer_calls:,} transfer(s)): the kernel efficiencies describe only the other {100 - share:.1f} %",
                    count=sums.transfer_calls)]


def to_result_table(frame: pd.DataFrame, sums: TransferSums) -> ResultTable:
    notes = ["Copies and memsets are not kernels: they are left out of the efficiencies and the ranking. "
             "Share is of the summed GPU activity time (kernels + transfers)."]
    if sums.transfer_bytes is None:
        notes.append("This format gives no byte counts for transfers: bytes and GB/s are n/a.")
    return ResultTable.from_frame(frame, "Transfers (memcpy / memset)", COLUMNS, notes)
