"""Provides marker CSVs (`name_str,timestamp`, ns) -> batch durations, and the seed's scaled efficiencies.

The seed study (seed 001) exported nvprof markers to `markers_run_0_config_..._ret_0_0.csv` with a
`name_str` and a `timestamp` (ns) column (research/profile-anchors.md §1.6). Batch durations, as
the seed computes them:

* nvprof: median of the differences between consecutive 'End of Batch' timestamps, in s
  (seed cell In [20], `nvprof_batch_duration`).
* pyprof: median of the differences between consecutive 'Forward Pass' timestamps after the first
  26 (`forward_markers[26:]`: only the last 25 batches had PyProf on; cell In [21]).
* batch duration: the minimum of the TAU, nvprof and pyprof durations (cell In [29]); TAU is
  passed in when known.

Bad lines (wrong field count, a timestamp that is not a number) are skipped with a finding;
nothing here raises on file content.

Which marker file belongs to which profile: `markers_<profile name without extension>.csv`,
looked for among the files the user gave (`--markers`), then in the profile's own folder, then
in its sibling folders (the seed keeps `pcm/pyprof_kernels/` and `pcm/nvprof_markers/` side by
side). `marker_for` does the matching; `marker_candidates` lists the files to match against.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.files import display_name, read_text

END_OF_BATCH = "End of Batch"
FORWARD_PASS = "Forward Pass"
PYPROF_SKIP = 26
"""The seed drops the first 26 'Forward Pass' markers: only the last 25 batches ran under PyProf."""
SCALED_BATCHES = 25
"""The seed divides summed FLOPs/Bytes by 25 batches (cell In [23])."""
MARKER_PREFIX = "markers_"


def is_marker_file(path: str | Path) -> bool:
    """A file named like the seed's marker exports: `markers_*.csv`."""
    name = Path(path).name
    return name.startswith(MARKER_PREFIX) and name.lower().endswith(".csv")


def marker_candidates(profiles: Iterable[Path], given: Sequence[str | Path] = ()) -> list[Path]:
    """Marker files to match profiles against: the given files and the `markers_*.csv` in given
    folders first, then those next to each profile and in the folders beside its folder."""
    found: list[Path] = []
    for item in map(Path, given):
        found.extend(sorted(item.glob(f"{MARKER_PREFIX}*.csv")) if item.is_dir() else [item])
    folders: list[Path] = []
    for profile in profiles:
        folder = profile.parent
        if folder not in folders:
            folders.append(folder)
        try:  # siblings: the seed keeps kernels and markers in neighbouring folders
            siblings = sorted(p for p in folder.parent.iterdir() if p.is_dir() and p != folder)
        except OSError:
            siblings = []
        folders.extend(p for p in siblings if p not in folders)
    for folder in folders:
        try:
            found.extend(sorted(p for p in folder.glob(f"{MARKER_PREFIX}*.csv") if p.is_file()))
        except OSError:
            continue
    return list(dict.fromkeys(found))


def marker_for(profile: str | Path, candidates: Sequence[Path]) -> Path | None:
    """The first candidate named `markers_<stem>.csv` where the profile's name is `<stem>` or
    `<stem>.<extension(s)>` (so `run_0_..._ret_0_0.gzip` and `.csv` both match); None if none."""
    name = Path(profile).name
    for candidate in candidates:
        stem = candidate.name[len(MARKER_PREFIX):-len(".csv")] if is_marker_file(candidate) else ""
        if stem and (name == stem or name.startswith(stem + ".")):
            return candidate
    return None


@dataclass(frozen=True)
class MarkerRead:
    table: pd.DataFrame
    """`name_str` (string) and `timestamp` (Int64 ns), file order."""
    findings: list[Finding] = field(default_factory=list)


def _empty() -> pd.DataFrame:
    return pd.DataFrame({"name_str": pd.Series(dtype="string"), "timestamp": pd.Series(dtype="Int64")})


def _timestamp(text: str) -> int | None:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if math.isfinite(value) else None


def _csv_rows(text: str) -> list[list[str]]:
    """CSV rows; a line the csv module rejects (a field over its size limit, stray quotes) becomes
    one field holding the raw line, which the caller then skips with a finding."""
    try:
        # newline="" as the csv module asks: a lone CR ends a line instead of raising.
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        rows = []
        for line in text.splitlines():
            try:
                rows.append(next(csv.reader([line]), []))
            except csv.Error:
                rows.append([line])
        return rows


def parse_markers(text: str, label: str = "") -> MarkerRead:
    """Markers from CSV text with a header naming `name_str` and `timestamp` (other columns ignored)."""
    findings: list[Finding] = []
    rows = _csv_rows(text)
    header_at = next((i for i, r in enumerate(rows) if any(c.strip() for c in r)), None)
    if header_at is None:
        return MarkerRead(_empty(), [Finding("error", "empty", "marker file is empty", label)])
    header = [c.strip().lstrip("\ufeff") for c in rows[header_at]]
    if "name_str" not in header or "timestamp" not in header:
        return MarkerRead(_empty(), [Finding("error", "no-header", f"marker file needs columns name_str and timestamp, has {header}", label, header_at + 1)])
    i_name, i_time = header.index("name_str"), header.index("timestamp")
    names, stamps = [], []
    for number, row in enumerate(rows[header_at + 1:], start=header_at + 2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            findings.append(Finding("warning", "bad-line", f"{len(row)} field(s), expected {len(header)}; line skipped", label, number))
            continue
        stamp = _timestamp(row[i_time])
        if stamp is None:
            findings.append(Finding("warning", "bad-line", f"timestamp {row[i_time]!r} is not a number; line skipped", label, number))
            continue
        names.append(row[i_name].strip())
        stamps.append(stamp)
    table = pd.DataFrame({"name_str": pd.array(names, dtype="string"), "timestamp": pd.array(stamps, dtype="Int64")})
    if table.empty:
        findings.append(Finding("warning", "no-markers", "marker file has no usable marker lines", label))
    return MarkerRead(table, findings)


def read_markers(path: str | Path) -> MarkerRead:
    """`parse_markers` of a file; an unreadable, empty, binary or non-regular file is one finding."""
    label = display_name(path)
    text, findings = read_text(Path(path), label)
    if text is None:
        return MarkerRead(_empty(), findings)
    read = parse_markers(text, label)
    return MarkerRead(read.table, findings + read.findings)


def _stamps(markers: pd.DataFrame, name: str) -> np.ndarray:
    picked = markers.loc[markers["name_str"] == name, "timestamp"].dropna()
    return picked.to_numpy(dtype="int64")


def batch_durations_ns(markers: pd.DataFrame) -> np.ndarray:
    """Time between consecutive 'End of Batch' markers (ns), in file order."""
    return np.diff(_stamps(markers, END_OF_BATCH))


def forward_pass_spans_ns(markers: pd.DataFrame, skip: int = PYPROF_SKIP) -> np.ndarray:
    """Time between consecutive 'Forward Pass' markers (ns), after dropping the first `skip`."""
    return np.diff(_stamps(markers, FORWARD_PASS)[skip:])


def _median_s(spans_ns: np.ndarray) -> float | None:
    return float(np.median(spans_ns)) * 1e-9 if spans_ns.size else None


def nvprof_batch_duration_s(markers: pd.DataFrame) -> float | None:
    """Seed In [20]: median(diff('End of Batch' timestamps)) * 1e-9; None with fewer than 2 markers."""
    return _median_s(batch_durations_ns(markers))


def pyprof_batch_duration_s(markers: pd.DataFrame, skip: int = PYPROF_SKIP) -> float | None:
    """Seed In [21]: median(diff('Forward Pass' timestamps[26:])) * 1e-9; None when too few."""
    return _median_s(forward_pass_spans_ns(markers, skip))


def batch_duration_s(markers: pd.DataFrame, tau_s: float | None = None, skip: int = PYPROF_SKIP) -> float | None:
    """Seed In [29]: min(tau, nvprof, pyprof) over the durations that are known and positive."""
    known = [v for v in (tau_s, nvprof_batch_duration_s(markers), pyprof_batch_duration_s(markers, skip))
             if v is not None and math.isfinite(v) and v > 0]
    return min(known) if known else None


@dataclass(frozen=True)
class ScaledEfficiency:
    flops_efficiency_pct: float | None
    bandwidth_efficiency_pct: float | None


def scaled_efficiencies(flops_total: float | None, bytes_total: float | None, batch_s: float | None, *,
                        peak_tflops: float | None, peak_gbs: float | None, batches: int = SCALED_BATCHES) -> ScaledEfficiency:
    """The seed's scaled efficiencies (seed 001, "Scaled efficiencies", cell In [23]):

        bandwidth_efficiency = df['Bytes'].sum() / (25 * batch) * 1E-9 / THEORETICAL_BANDWIDTH * 100
        flop_efficiency      = df['FLOPs'].sum() / (25 * batch) * 1E-12 / THEORETICAL_FLOPS * 100

    i.e. the profiled FLOPs/Bytes spread over the wall time of the 25 profiled batches, not over
    kernel time. Note: the seed appends `(flop_efficiency, bandwidth_efficiency)` but names the
    columns `'bandwidth_efficiency (%)', 'FLOPS_efficiency (%)'`, so its printed table has the two
    labels swapped; here each value keeps its own name. None where an input is missing or zero.
    """
    def ok(v: float | None) -> bool:
        return v is not None and math.isfinite(float(v)) and float(v) > 0

    if not ok(batch_s) or batches <= 0:
        return ScaledEfficiency(None, None)
    seconds = batches * float(batch_s)  # type: ignore[arg-type]
    flops = None
    if flops_total is not None and math.isfinite(float(flops_total)) and ok(peak_tflops):
        flops = float(flops_total) / seconds * 1e-12 / float(peak_tflops) * 100  # type: ignore[arg-type]
    bandwidth = None
    if bytes_total is not None and math.isfinite(float(bytes_total)) and ok(peak_gbs):
        bandwidth = float(bytes_total) / seconds * 1e-9 / float(peak_gbs) * 100  # type: ignore[arg-type]
    return ScaledEfficiency(flops, bandwidth)
