"""Provides `compare_kernels`: per kernel, a baseline's launches against a candidate's.

Each side is every kernel launch of its profiles (`kernel`, `duration_ns`, `file`: one file is
one run). Kernels are matched by name (`names.match_names`: exact, then with changed template
arguments). Per kernel and side: launches per run, total time per run, mean time per launch
and share of the side's kernel time. A kernel is slower when its mean time per launch grew:
a run that does more steps has more launches, not slower kernels. The noise test compares
the per-run means (`noise`), so it needs at least two runs on each side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscope.metrics.compare import names, noise
from gpuscope.metrics.table import Column, ResultTable

NA = "n/a"
READS = ("kernel", "duration_ns", "op")
"""The launch columns a comparison reads (op: copies and memsets are left out)."""
COLUMNS = ["kernel", "base_kernel", "match", "base_calls", "new_calls", "base_total_ms", "new_total_ms", "base_mean_us", "new_mean_us",
           "base_share", "new_share", "slowdown", "total_change", "base_runs", "new_runs", "p_raw", "p_value", "verdict"]


def per_run(launches: pd.DataFrame) -> pd.DataFrame:
    """One row per (kernel, file): launches, launches with a time, summed time (ns). Counted
    over the category codes with `np.bincount`: a million launches of a hundred kernels."""
    kernels = pd.Categorical(launches["kernel"]) if len(launches) else pd.Categorical([])
    files = pd.Categorical(launches["file"]) if len(launches) else pd.Categorical([])
    duration = launches["duration_ns"].to_numpy(dtype=float, na_value=np.nan) if len(launches) else np.empty(0)
    width = max(1, len(files.categories))
    known = (kernels.codes >= 0) & (files.codes >= 0)
    code = kernels.codes.astype(np.int64)[known] * width + files.codes[known]
    slots = len(kernels.categories) * width
    timed = np.isfinite(duration[known])
    calls = np.bincount(code, minlength=slots)
    counted = np.bincount(code[timed], minlength=slots)
    total = np.bincount(code[timed], weights=duration[known][timed], minlength=slots)
    present = np.flatnonzero(calls)
    return pd.DataFrame({"kernel": np.asarray(kernels.categories, dtype=object)[present // width].astype(str),
                         "file": np.asarray(files.categories, dtype=object)[present % width].astype(str),
                         "calls": calls[present], "timed": counted[present], "total_ns": total[present]})


def compare_kernels(base: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """COLUMNS, one row per kernel of either side, the candidate's order first (longest total
    time first), then the vanished ones. `base`, `new`: `per_run` of each side."""
    sides = {}
    for key, frame in (("base", base), ("new", new)):
        runs = max(1, frame["file"].nunique())
        per_kernel = frame.groupby("kernel", sort=False).agg(calls=("calls", "sum"), timed=("timed", "sum"), total_ns=("total_ns", "sum"))
        kernel_time = float(per_kernel["total_ns"].sum())
        per_kernel["runs"] = runs
        per_kernel["share"] = per_kernel["total_ns"] / kernel_time if kernel_time > 0 else np.nan
        timed = frame[frame["timed"] > 0]
        samples = (timed["total_ns"] / timed["timed"]).groupby(timed["kernel"], sort=False).agg(list)
        sides[key] = (per_kernel, samples, runs)
    (b, b_samples, b_runs), (n, n_samples, n_runs) = sides["base"], sides["new"]
    order = n.sort_values("total_ns", ascending=False, kind="stable").index
    matches = names.match_names(b.sort_values("total_ns", ascending=False, kind="stable").index, order)
    rows = []
    empty: list[float] = []
    for m in matches:
        bk = b.loc[m.base] if m.base is not None else None
        nk = n.loc[m.new] if m.new is not None else None
        rows.append({
            "kernel": m.new if m.new is not None else m.base, "base_kernel": m.base if m.how == names.CHANGED else None, "match": m.how,
            "base_calls": _per_run(bk, "calls", b_runs), "new_calls": _per_run(nk, "calls", n_runs),
            "base_total_ms": _per_run(bk, "total_ns", b_runs, 1e6), "new_total_ms": _per_run(nk, "total_ns", n_runs, 1e6),
            "base_mean_us": _mean_us(bk), "new_mean_us": _mean_us(nk),
            "base_share": np.nan if bk is None else bk["share"], "new_share": np.nan if nk is None else nk["share"],
            "base_runs": 0 if m.base is None else len(b_samples.get(m.base, empty)),
            "new_runs": 0 if m.new is None else len(n_samples.get(m.new, empty)),
            "_base": b_samples.get(m.base, empty) if m.base is not None else empty,
            "_new": n_samples.get(m.new, empty) if m.new is not None else empty,
        })
    out = pd.DataFrame.from_records(rows, columns=[*COLUMNS, "_base", "_new"])
    out["slowdown"] = out["new_mean_us"] / out["base_mean_us"] - 1
    out["total_change"] = out["new_total_ms"] / out["base_total_ms"] - 1
    out["p_raw"] = noise.p_values(list(out["_base"]), list(out["_new"]))
    out["p_value"], out["verdict"] = noise.verdicts(out["slowdown"].to_numpy(float), out["p_raw"].to_numpy(float),
                                                    out["base_runs"].to_numpy(int), out["new_runs"].to_numpy(int))
    return out[COLUMNS]


def _per_run(row: pd.Series | None, column: str, runs: int, scale: float = 1.0) -> float:
    return np.nan if row is None else float(row[column]) / runs / scale


def _mean_us(row: pd.Series | None) -> float:
    if row is None or not row["timed"]:
        return np.nan
    return float(row["total_ns"]) / float(row["timed"]) / 1e3


def kernels_table(frame: pd.DataFrame) -> ResultTable:
    """The per-kernel comparison as the table every format prints."""
    columns = (
        Column("kernel", "kernel"), Column("verdict"), Column("slowdown", "mean change", "+.1%", NA), Column("match"),
        Column("base_calls", "calls base", ".6g", NA), Column("new_calls", "calls new", ".6g", NA),
        Column("base_mean_us", "mean µs base", ".4g", NA), Column("new_mean_us", "mean µs new", ".4g", NA),
        Column("base_total_ms", "total ms base", ".4g", NA), Column("new_total_ms", "total ms new", ".4g", NA),
        Column("total_change", "total change", "+.1%", NA),
        Column("base_share", "share base", ".1%", NA), Column("new_share", "share new", ".1%", NA),
        Column("base_runs", "runs base"), Column("new_runs", "runs new"),
        Column("p_value", "p", ".2g", NA), Column("base_kernel", "base name (when changed)", "", ""),
    )
    keys = [c.key for c in columns]
    rows = tuple(tuple(_plain(v) for v in r) for r in frame[keys].itertuples(index=False, name=None))
    tested = int(np.isfinite(frame["p_raw"].to_numpy(float)).sum()) if len(frame) else 0
    notes = ("Calls and total time are per run (mean over a side's runs); mean µs is per launch; the change is of the mean "
             "per launch (positive: slower).", noise.test_note("kernels", tested))
    return ResultTable("Kernels: base against new", columns, rows, notes=notes, row_keys=("kernel",))


def _plain(value: object) -> object:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value
