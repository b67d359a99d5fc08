"""Provides trust for MAGMA rows and runs: warm-up, failed, impossible, truncated, cancelled.

No existing tool says which MAGMA numbers cannot be believed; this module does, and keeps the
rows (flagged, with the reason in `excluded`) so nothing disappears silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.gpu_peaks import find_peak

if TYPE_CHECKING:  # pragma: no cover
    from gpuscope.parsers.magma import _File
    from gpuscope.parsers.magma_scan import Block, FileScan

PRECISIONS = "sdczh"
EXCLUDED = pd.Index(["", "failed", "warm-up", "impossible", "not a number"], dtype=object)
PRECISION_WORD = {"s": "FP32", "c": "FP32", "d": "FP64", "z": "FP64", "h": "FP16 tensor"}


def precision_of(test: str) -> str:
    return test[0] if len(test) > 1 and test[0] in PRECISIONS else ""


def _categorical(codes: np.ndarray, labels: list[Any]) -> pd.Categorical:
    """Per-row categorical from per-block (or per-file) labels. Object-dtype categories:
    pandas' Arrow strings cost more to build than the whole column is worth here."""
    position: dict[Any, int] = {}
    remap = np.array([position.setdefault(x, len(position)) for x in labels], np.int64) if labels else np.empty(0, np.int64)
    categories = pd.Index(list(position), dtype=object)
    return pd.Categorical.from_codes(remap[codes] if codes.size else codes.astype(np.int64), categories=categories)


def _problem_sizes(m: np.ndarray, n: np.ndarray, k: np.ndarray) -> tuple[pd.Categorical, np.ndarray]:
    """`MxNxK` as printed (missing dimensions left out), ordered by size; and a numeric key."""
    dims = [np.where(np.isnan(d), -1, d).astype(np.int64) for d in (m, n, k)]
    if max((int(d.max()) for d in dims if d.size), default=0) < (1 << 20):
        key = ((dims[0] + 1) << 42) | ((dims[1] + 1) << 21) | (dims[2] + 1)  # one int per size, sorts like (m, n, k)
        codes, uniq = pd.factorize(key, sort=True)
        triples = np.stack([(uniq >> 42) - 1, ((uniq >> 21) & ((1 << 21) - 1)) - 1, (uniq & ((1 << 21) - 1)) - 1], 1)
    else:  # sizes over a million: slower, exact
        triples, codes = np.unique(np.stack(dims, 1), axis=0, return_inverse=True)
        codes = codes.reshape(-1)
    labels = ["x".join(str(v) for v in row if v >= 0) for row in triples.tolist()]
    return pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object)), codes.astype(np.int64)


def tidy(*, cols: dict[str, np.ndarray], lines: np.ndarray, file_of_row: np.ndarray, block_of_row: np.ndarray,
         files: list["_File"], blocks: list["Block"], peak_override: float | None, columns: list[str]) -> pd.DataFrame:
    """The tidy table with context columns and trust flags."""
    total = lines.size
    empty = np.full(total, np.nan)
    m, n, k = (cols.get(c, empty) for c in ("m", "n", "k"))
    problem, key = _problem_sizes(m, n, k)
    tests = [b.test for b in blocks]
    device_of_file = [f.scan.device for f in files]

    time = cols.get("time_ms", empty)
    gflops = cols.get("gflops", empty)
    status = cols.get("status", np.full(total, "", dtype=object))

    # Warm-up: a process's first call pays for context creation and module load. Rows carry no
    # rank, so per block take the first size of the sweep and flag, per process that ran it,
    # the slowest of its rows (the first call is always the slow one).
    warm = np.zeros(total, bool)
    if total:
        first_row = np.unique(block_of_row, return_index=True)
        first_key = np.full(len(blocks), -1, np.int64)
        first_key[first_row[0]] = key[first_row[1]]
        candidate = key == first_key[block_of_row]
        processes = np.array([b.processes for b in blocks], np.int64)
        per_block = np.bincount(block_of_row[candidate], minlength=len(blocks))
        warm = candidate.copy()
        crowded = np.flatnonzero(per_block > processes)  # --niter > 1: rank only these blocks
        if crowded.size:
            sub = candidate & np.isin(block_of_row, crowded)
            rank = pd.Series(time[sub]).groupby(block_of_row[sub]).rank(method="first", ascending=False).to_numpy()
            warm[sub] = rank <= processes[block_of_row[sub]]

    peaks = np.full(len(blocks), np.nan)
    block_file = np.repeat(np.arange(len(files)), [len(f.scan.blocks) for f in files]) if files else np.empty(0, np.int64)
    for i, block in enumerate(blocks):
        if peak_override:
            peaks[i] = peak_override
        else:
            spec = find_peak(device_of_file[block_file[i]])
            tflops = spec.tflops(precision_of(block.test)) if spec else None
            peaks[i] = tflops * 1000.0 if tflops else np.nan
    row_peak = peaks[block_of_row] if total else empty
    with np.errstate(invalid="ignore"):
        impossible = np.isfinite(row_peak) & (gflops > row_peak)
    not_number = ~np.isfinite(gflops) | ~np.isfinite(time)

    def file_column(values: list[Any]) -> pd.Categorical:
        return _categorical(file_of_row, values)

    frame = pd.DataFrame({
        "test": _categorical(block_of_row, tests),
        "precision": _categorical(block_of_row, [precision_of(t) for t in tests]),
        "batch_count": pd.array(cols.get("batch_count", empty), dtype="Float64").astype("Int64") if total else pd.array([], dtype="Int64"),
        "m": pd.Series(m).astype("Int64").array,
        "n": pd.Series(n).astype("Int64").array,
        "k": pd.Series(k).astype("Int64").array,
        "problem_size": problem,
        "gflops": gflops,
        "time_ms": time,
        "cpu_gflops": cols.get("cpu_gflops", empty),
        "cpu_time_ms": cols.get("cpu_time_ms", empty),
        "ref_gflops": cols.get("ref_gflops", empty),
        "ref_time_ms": cols.get("ref_time_ms", empty),
        "error": cols.get("error", empty),
        "status": pd.Categorical(status, categories=pd.Index(["ok", "failed", ""], dtype=object)),
        "device": file_column(device_of_file),
        "file": file_column([f.label for f in files]),
        "line": lines.astype(np.int64),
        "environment": file_column([str(f.context.get("environment", ".")) for f in files]),
        "nodes": pd.Series(np.array([np.nan if f.context.get("nodes") is None else float(f.context["nodes"]) for f in files])[file_of_row] if total else empty).astype("Int64").array,  # type: ignore[arg-type]
        "warmup": warm,
        "impossible": impossible,
        "excluded": pd.Categorical.from_codes(np.select([status == "failed", warm, impossible, not_number], [1, 2, 3, 4], 0), categories=EXCLUDED),
    }, columns=columns)
    extra = sorted({key for f in files for key in f.context} - {"environment", "nodes"})
    for pos, name in enumerate(extra):
        frame.insert(columns.index("nodes") + 1 + pos, name, file_column([f.context.get(name) for f in files]))
    return frame


def per_file(rows: pd.DataFrame) -> pd.DataFrame:
    """Everything the findings and the runs table need per file, in one vectorised pass."""
    if rows.empty:
        return pd.DataFrame()
    failed = (rows["status"] == "failed").to_numpy()
    warm = rows["warmup"].to_numpy()
    bad = rows["impossible"].to_numpy() & ~failed
    line = rows["line"].to_numpy(np.float64)
    gflops = rows["gflops"].to_numpy(np.float64)
    frame = pd.DataFrame({
        "file": rows["file"],
        "rows": 1,
        "failed": failed, "failed_line": np.where(failed, line, np.nan), "failed_max": np.where(failed, gflops, np.nan),
        "warmup": warm, "warm_line": np.where(warm, line, np.nan), "warm_ms": np.where(warm, rows["time_ms"].to_numpy(np.float64), np.nan),
        "impossible": bad, "bad_line": np.where(bad, line, np.nan), "bad_max": np.where(bad, gflops, np.nan),
    })
    out = frame.groupby("file", observed=True, sort=False).agg(
        rows=("rows", "size"), failed=("failed", "sum"), failed_line=("failed_line", "min"), failed_max=("failed_max", "max"),
        warmup=("warmup", "sum"), warm_line=("warm_line", "min"), warm_ms=("warm_ms", "median"),
        impossible=("impossible", "sum"), bad_line=("bad_line", "min"), bad_max=("bad_max", "max"),
    )
    first = rows.groupby("file", observed=True, sort=False).agg(
        environment=("environment", "first"), nodes=("nodes", "first"), device=("device", "first"),
        precision=("precision", "first"), last_size=("problem_size", "last"))
    sizes = rows.groupby(["file", "problem_size"], observed=True).size()
    sizes = sizes[sizes > 0].groupby(level="file", observed=True).agg(["min", "max"])
    out = out.join(first).join(sizes.rename(columns={"min": "smallest_size_rows", "max": "largest_size_rows"}))
    # Warm-up context: the warm-up size, and the median time of the size that follows it.
    warm_rows = rows[warm]
    out = out.join(warm_rows.groupby("file", observed=True)["problem_size"].first().rename("warm_size"))
    medians = rows[~warm].groupby(["file", "problem_size"], observed=True)["time_ms"].median().reset_index()
    medians = medians.join(out["warm_size"].astype(str), on="file")
    medians = medians[medians["problem_size"].astype(str) != medians["warm_size"]]
    nxt = medians.groupby("file", observed=True).first()
    out = out.join(nxt["problem_size"].rename("next_size")).join(nxt["time_ms"].rename("next_ms"))
    return out


def _where(row: dict[str, Any]) -> str:
    nodes = row.get("nodes")
    return f"{row.get('environment')}" + ("" if nodes is None or pd.isna(nodes) else f", {int(nodes)} nodes") + ": "


def row_findings(rows: pd.DataFrame, stats: pd.DataFrame) -> list[Finding]:
    """Per file: failed, warm-up and physically impossible rows, in plain words.
    `stats` is `per_file(rows)`."""
    out: list[Finding] = []
    if rows.empty:
        return out
    failed_sizes = rows[rows["status"] == "failed"].groupby("file", observed=True)["problem_size"].unique()
    for label, row in zip(stats.index.astype(str), stats.to_dict("records")):
        where = _where(row)
        if row["failed"]:
            sizes = ", ".join(map(str, failed_sizes.get(label, [])[:3]))
            out.append(Finding("warning", "failed", f"{where}{row['failed']} row(s) failed MAGMA's own accuracy check (sizes {sizes}; up to {row['failed_max']:,.0f} Gflop/s): excluded from statistics", label, int(row["failed_line"]), int(row["failed"])))
        if row["warmup"]:
            nxt = f"; next size {row['next_size']}: {row['next_ms']:.2f} ms" if pd.notna(row.get("next_ms")) else ""
            out.append(Finding("info", "warmup", f"{where}{row['warmup']} warm-up row(s) (first call of each process, size {row['warm_size']}: median {row['warm_ms']:.2f} ms{nxt}): excluded; --keep-warmup keeps them", label, int(row["warm_line"]), int(row["warmup"])))
        if row["impossible"]:
            device, precision = str(row["device"]), str(row["precision"])
            peak = find_peak(device)
            peak_gflops = (peak.tflops(precision) or 0) * 1000 if peak else float("nan")
            worst = row["bad_max"]
            ratio = f" = {worst / peak_gflops:.1f}x peak" if peak_gflops else ""
            out.append(Finding("error", "impossible", f"{where}{row['impossible']} of {row['rows']} rows exceed the {PRECISION_WORD.get(precision, '')} peak of the {device} ({peak_gflops:,.0f} Gflop/s), up to {worst:,.0f} Gflop/s{ratio}: PHYSICALLY IMPOSSIBLE, excluded; --keep-impossible keeps them", label, int(row["bad_line"]), int(row["impossible"])))
    devices = {str(d) for d in rows["device"].unique() if str(d)}
    for device in sorted(devices):
        if find_peak(device) is None:
            out.append(Finding("info", "no-peak", f"no peak known for device {device!r}: impossible values not checked (--peak-gflops sets one)"))
    return out


def runs_table(stats: pd.DataFrame, files: list["_File"]) -> pd.DataFrame:
    """One row per file: what ran, how it ended, and how many rows each trust rule took out.
    `stats` is `per_file(rows)`."""
    records = []
    by_file = stats.to_dict("index") if not stats.empty else {}
    for f in files:
        s = f.scan
        c = by_file.get(f.label, {})
        n_rows = int(c.get("rows", 0))
        uneven = n_rows and c["smallest_size_rows"] < c["largest_size_rows"]
        if n_rows == 0:
            outcome = "assert-only" if s.asserts else ("error" if s.errors else "no data")
        elif s.cancelled:
            outcome = "cancelled"
        elif uneven or s.last_line_cut or (s.start is not None and s.end is None):
            outcome = "truncated"
        elif c.get("failed"):
            outcome = "failed checks"
        elif s.exit_code:
            outcome = f"exit {s.exit_code}"
        else:
            outcome = "complete"
        records.append({
            "file": f.label,
            "environment": f.context.get("environment"),
            "nodes": f.context.get("nodes"),
            "test": ",".join(dict.fromkeys(b.test for b in s.blocks)),
            "processes": s.banners,
            "rows": n_rows,
            "failed": int(c.get("failed", 0)),
            "warmup": int(c.get("warmup", 0)),
            "impossible": int(c.get("impossible", 0)),
            "outcome": outcome,
            "duration_s": (s.end - s.start) if s.start is not None and s.end is not None else None,
            "exit_code": s.exit_code,
            "cancelled": s.cancelled,
            "device": s.device,
            "visible_devices": s.visible_devices,
            "magma_version": s.version,
            "last_size": str(c.get("last_size", "")) if n_rows else "",
            "smallest_size_rows": int(c.get("smallest_size_rows", 0) or 0),
            "largest_size_rows": int(c.get("largest_size_rows", 0) or 0),
        })
    runs = pd.DataFrame.from_records(records, columns=None if records else ["file", "outcome", "nodes", "exit_code"])
    for name in ("nodes", "exit_code"):
        runs[name] = runs[name].astype("Int64")
    return runs


def run_findings(runs: pd.DataFrame, scans: dict[str, "FileScan"]) -> list[Finding]:
    """Per file: how the run ended when it did not end well, and lines that were not read."""
    out: list[Finding] = []
    for run in runs.to_dict("records"):
        label, s = run["file"], scans[run["file"]]
        where = f"{run['environment']}" + ("" if run.get("nodes") is None or pd.isna(run.get("nodes")) else f", {int(run['nodes'])} nodes") + ": "
        outcome = run["outcome"]
        took = f" after {run['duration_s']:.1f} s" if run.get("duration_s") is not None and pd.notna(run["duration_s"]) else ""
        if outcome == "assert-only":
            line, text = s.asserts[0]
            out.append(Finding("error", "assert-only", f"{where}no data rows: {len(s.asserts)} process(es) stopped at {text!r}", label, line, len(s.asserts)))
        elif outcome in ("error", "no data"):
            detail = f" first error: {s.errors[0][1]!r}" if s.errors else ""
            out.append(Finding("error", "no-data", f"{where}no data rows in this MAGMA output.{detail}", label))
        elif outcome == "cancelled":
            last = f", last size {run['last_size']}" if run.get("last_size") else ""
            out.append(Finding("warning", "cancelled", f"{where}run was cancelled (exit {run['exit_code']}){took}: partial table of {run['rows']} rows{last}", label))
        elif outcome == "truncated":
            out.append(Finding("warning", "truncated", f"{where}table ends early: some sizes have {run['smallest_size_rows']} rows, others {run['largest_size_rows']} (killed, timed out, or still running?)", label))
        elif pd.notna(run.get("exit_code")) and run.get("exit_code"):
            out.append(Finding("warning", "exit-code", f"{where}processes exited with code {run['exit_code']} (a MAGMA tester returns its number of failed checks)", label))
        if s.errors and outcome not in ("error", "no data"):
            out.append(Finding("warning", "error-line", f"{len(s.errors)} error line(s), first: {s.errors[0][1]!r}", label, s.errors[0][0], len(s.errors)))
        if s.orphan_rows:
            out.append(Finding("warning", "no-header", f"{s.orphan_rows} numeric line(s) but no MAGMA column header: not read", label, None, s.orphan_rows))
        if s.unknown:
            line, text = s.unknown[0]
            out.append(Finding("info", "unrecognised", f"{len(s.unknown)} line(s) not recognised, ignored; first: {text[:80]!r}", label, line, len(s.unknown)))
        if s.last_line_cut:
            out.append(Finding("warning", "cut", "the last line is cut short (file ends mid-line)", label))
        if s.visible_devices > 1 and s.banners > 1:
            out.append(Finding("warning", "shared-device", f"{where}each of {s.banners} processes saw {s.visible_devices} GPUs and MAGMA uses device 0 unless --dev is given: processes on one node may have shared GPU 0", label))
    return out
