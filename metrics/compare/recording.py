"""Provides `compare_recordings`: what a job used, a baseline's recordings against a candidate's.

Each recording is reduced to one value per measure (`job_values`: its nodes' `Usage` and GPU
readings, as `gpuscope report` reads them): how long it ran, CPU cores busy, memory peak, GPU
utilisation, SM activity (GPM) and energy. A side with several recordings (several runs of
one job) gives a sample per measure, and `noise` tests it; a measure a recording cannot give
(no GPU, no energy counter) is n/a for it, never 0. Only the duration says slower: the other
measures are higher or lower.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.compare import noise
from gpuscope.metrics.job.energy import GpuReadings, gpu_figure
from gpuscope.metrics.job.report import Usage
from gpuscope.metrics.table import Column, ResultTable

NA = "n/a"
GIB = 1024**3
MEASURES = {
    "duration_s": "duration (s)",
    "cpu_busy_cores": "CPU cores busy (mean)",
    "memory_peak_gib": "memory peak (GiB)",
    "gpu_util_pct": "GPU utilisation (mean %)",
    "gpu_memory_peak_gib": "GPU memory peak (GiB)",
    "sm_active_pct": "SM active (mean %, GPM)",
    "gpu_energy_j": "GPU energy (J)",
    "cpu_energy_j": "CPU energy, node RAPL (J)",
}
TIME = "duration_s"
COLUMNS = ["measure", "key", "verdict", "change", "slowdown", "base", "new", "base_runs", "new_runs", "p_raw", "p_value"]


def _finite_mean(values: Sequence[float]) -> float:
    known = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.mean(known)) if known else math.nan


def _sum_or_nan(values: Sequence[float | None]) -> float:
    """The sum, NaN when a part is missing: a partial sum is never a total."""
    if not values or any(v is None or not math.isfinite(v) for v in values):
        return math.nan
    return float(sum(values))  # type: ignore[arg-type]


def job_values(usages: Sequence[Usage], gpus: Sequence[GpuReadings], cpu: Mapping[str, object]) -> dict[str, float]:
    """One recording's value per measure (NaN where it cannot be told)."""
    spans = [float(u.times[-1] - u.times[0]) for u in usages if len(u.times) > 1]
    busy = [_finite_mean(u.busy_cores) for u in usages]
    memory = [float(np.nanmax(u.memory_used)) if np.isfinite(u.memory_used).any() else math.nan for u in usages]
    used = [g for u in usages for g in u.gpus if g.allocated] or [g for u in usages for g in u.gpus]
    util = [_finite_mean(g.util) for g in used]
    gpu_memory = [float(np.nanmax(g.memory_used)) / GIB for g in used if np.isfinite(g.memory_used).any()]
    activity = [_finite_mean(np.asarray(g.frame["sm_active_pct"], float)) for g in gpus if "sm_active_pct" in g.frame]
    energy = [gpu_figure(g).joules for g in gpus]
    rapl = [getattr(c, "package_j", None) for c in cpu.values()]
    return {
        "duration_s": max(spans) if spans else math.nan,
        "cpu_busy_cores": _sum_or_nan(busy),
        "memory_peak_gib": _sum_or_nan(memory) / GIB,
        "gpu_util_pct": _finite_mean(util),
        "gpu_memory_peak_gib": max(gpu_memory) if gpu_memory else math.nan,
        "sm_active_pct": _finite_mean(activity),
        "gpu_energy_j": _sum_or_nan(energy) if gpus else math.nan,
        "cpu_energy_j": _sum_or_nan(rapl) if rapl else math.nan,
    }


def compare_recordings(base: Sequence[dict[str, float]], new: Sequence[dict[str, float]]) -> pd.DataFrame:
    """COLUMNS, one row per measure; `base`, `new`: `job_values` of each side's recordings."""
    records = []
    for key, title in MEASURES.items():
        b = np.array([v[key] for v in base], float)
        n = np.array([v[key] for v in new], float)
        b, n = b[np.isfinite(b)], n[np.isfinite(n)]
        bm = float(np.median(b)) if b.size else math.nan
        nm = float(np.median(n)) if n.size else math.nan
        change = nm / bm - 1 if b.size and n.size and bm else math.nan
        records.append({"measure": title, "key": key, "change": change, "slowdown": change if key == TIME else math.nan,
                        "base": bm, "new": nm, "base_runs": int(b.size), "new_runs": int(n.size), "_b": b, "_n": n})
    out = pd.DataFrame.from_records(records, columns=[*COLUMNS, "_b", "_n"])
    out["p_raw"] = noise.p_values(list(out["_b"]), list(out["_n"]))
    out["p_value"], words = noise.verdicts(out["change"].to_numpy(float), out["p_raw"].to_numpy(float),
                                           out["base_runs"].to_numpy(int), out["new_runs"].to_numpy(int))
    na = ["n/a on both sides" if not b and not n else f"n/a on the {'base' if not b else 'new'} side" for b, n in zip(out["base_runs"], out["new_runs"])]
    out["verdict"] = [
        (w.replace("slower", "higher").replace("faster", "lower") if key != TIME else w) if b and n else miss
        for w, key, b, n, miss in zip(words, out["key"], out["base_runs"], out["new_runs"], na)
    ]
    return out[COLUMNS]


def recording_table(frame: pd.DataFrame, base_count: int, new_count: int) -> ResultTable:
    columns = (Column("measure"), Column("verdict"), Column("change", "change", "+.1%", NA), Column("base", "base", ".4g", NA),
               Column("new", "new", ".4g", NA), Column("base_runs", "recordings base"), Column("new_runs", "recordings new"),
               Column("p_value", "p", ".2g", NA))
    keys = [c.key for c in columns]
    rows = tuple(tuple(v.item() if isinstance(v, np.generic) else v for v in r) for r in frame[keys].itertuples(index=False, name=None))
    tested = int(np.isfinite(frame["p_raw"].to_numpy(float)).sum()) if len(frame) else 0
    notes = (f"Median over each side's recordings ({base_count} base, {new_count} new), one value per recording; memory and CPU "
             "summed over a job's nodes; energy is the GPUs' energy counter delta (else integrated power); RAPL counts the "
             "whole node.", noise.test_note("measures", tested, "recording"))
    return ResultTable("Recording: base against new", columns, rows, notes=notes, row_keys=("measure",))
