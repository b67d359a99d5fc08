"""Provides `compare_scaling`: per configuration (series, resource count), a baseline's runs
against a candidate's: the median time to solution and its ratio, and how the speedup and the
parallel efficiency changed (`metrics.scaling.analysis.summarize` of each side).

Configurations are matched on series and resource count. Two systems measured once each at
different counts (2 GPUs against 4) match nothing that way: a series left with one
configuration on each side is then paired as it is, and the row says the counts differ. A
series name found on one side only is paired with the other side's only series, when each
side has one. The noise test is `noise`'s, one time per usable run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscope.metrics.compare import noise
from gpuscope.metrics.table import Column, ResultTable

NA = "n/a"
COLUMNS = ["series", "resources", "base_resources", "match", "base_runs", "new_runs", "base_time_s", "new_time_s", "ratio", "slowdown",
           "base_speedup", "new_speedup", "speedup_change", "base_efficiency", "new_efficiency", "efficiency_change", "over_base_speedup", "over_base_efficiency", "p_raw", "p_value", "verdict"]


def _configs(runs: pd.DataFrame, summary: pd.DataFrame) -> dict[tuple[str, int], dict]:
    """Per (series, resources): the usable runs' times, the speedup and the efficiency."""
    out: dict[tuple[str, int], dict] = {}
    if runs.empty:
        return out
    usable = runs[runs["resources"].notna() & (runs["left_out"].astype(str) == "")]
    for (series, resources), group in usable.groupby(["series", "resources"], sort=False):
        times = group["time_s"].to_numpy(float)
        out[(str(series), int(resources))] = {"times": times[np.isfinite(times)], "speedup": np.nan, "efficiency": np.nan}
    for row in summary.itertuples(index=False):
        key = (str(row.series), int(row.resources))
        if key in out:
            out[key]["speedup"] = float(row.speedup) if pd.notna(row.speedup) else np.nan
            out[key]["efficiency"] = float(row.efficiency) if pd.notna(row.efficiency) else np.nan
    return out


def _pairs(base: dict, new: dict) -> list[tuple[tuple | None, tuple | None, str]]:
    """(base key, new key, how) for every configuration of either side."""
    base_series = {s for s, _ in base}
    new_series = {s for s, _ in new}
    rename = {}
    if len(base_series) == 1 and len(new_series) == 1 and base_series != new_series:
        rename = {next(iter(new_series)): next(iter(base_series))}  # one series each: the same study
    pairs = []
    taken = set()
    for key in new:
        other = (rename.get(key[0], key[0]), key[1])
        if other in base:
            pairs.append((other, key, "same" if not rename else "series renamed"))
            taken.add(other)
    left_new = [k for k in new if k not in {p[1] for p in pairs}]
    left_base = [k for k in base if k not in taken]
    for key in list(left_new):
        series = rename.get(key[0], key[0])
        olds = [k for k in left_base if k[0] == series]
        news = [k for k in left_new if rename.get(k[0], k[0]) == series]
        if len(olds) == 1 and len(news) == 1:
            pairs.append((olds[0], key, f"resources differ ({olds[0][1]} → {key[1]})"))
            left_base.remove(olds[0])
            left_new.remove(key)
    pairs += [(None, k, noise.NEW) for k in left_new]
    pairs += [(k, None, noise.GONE) for k in left_base]
    return pairs


def compare_scaling(base_runs: pd.DataFrame, base_summary: pd.DataFrame, new_runs: pd.DataFrame, new_summary: pd.DataFrame) -> pd.DataFrame:
    """COLUMNS, one row per configuration of either side."""
    base, new = _configs(base_runs, base_summary), _configs(new_runs, new_summary)
    records = []
    empty = {"times": np.empty(0), "speedup": np.nan, "efficiency": np.nan}
    for b_key, n_key, how in _pairs(base, new):
        b, n = base.get(b_key, empty), new.get(n_key, empty)
        bt = float(np.median(b["times"])) if b["times"].size else np.nan
        nt = float(np.median(n["times"])) if n["times"].size else np.nan
        ratio = nt / bt if np.isfinite(bt) and bt > 0 and np.isfinite(nt) else np.nan
        key = n_key or b_key
        records.append({"series": key[0], "resources": key[1], "base_resources": b_key[1] if b_key else np.nan, "match": how,
                        "base_runs": int(b["times"].size), "new_runs": int(n["times"].size), "base_time_s": bt, "new_time_s": nt,
                        "ratio": ratio, "slowdown": ratio - 1, "base_speedup": b["speedup"], "new_speedup": n["speedup"],
                        "speedup_change": n["speedup"] - b["speedup"], "base_efficiency": b["efficiency"], "new_efficiency": n["efficiency"],
                        "efficiency_change": n["efficiency"] - b["efficiency"], "_b": b["times"], "_n": n["times"]})
    out = pd.DataFrame.from_records(records, columns=[*COLUMNS, "_b", "_n"])
    # Paired at different counts: the candidate's speedup over the baseline, and its efficiency
    # against the ideal of the counts' ratio (8 GPUs to 64: ideal 8x)
    differ = out["base_resources"].notna() & (out["base_resources"] != out["resources"])
    out["over_base_speedup"] = (1 / out["ratio"]).where(differ)
    out["over_base_efficiency"] = (out["over_base_speedup"] * out["base_resources"] / out["resources"]).where(differ)
    out["p_raw"] = noise.p_values(list(out["_b"]), list(out["_n"]))
    out["p_value"], out["verdict"] = noise.verdicts(out["slowdown"].to_numpy(float), out["p_raw"].to_numpy(float),
                                                    out["base_runs"].to_numpy(int), out["new_runs"].to_numpy(int))
    return out[COLUMNS]


def label(row: pd.Series) -> str:
    return f"{row['series']} at {row['resources']}"


def scaling_table(frame: pd.DataFrame) -> ResultTable:
    columns = (
        Column("series"), Column("resources"), Column("verdict"), Column("slowdown", "slower by", "+.1%", NA), Column("match"),
        Column("base_time_s", "time (s) base", ".4g", NA), Column("new_time_s", "time (s) new", ".4g", NA), Column("ratio", "new/base", ".3f", NA),
        Column("base_runs", "runs base"), Column("new_runs", "runs new"),
        Column("base_speedup", "speedup base", ".2f", NA), Column("new_speedup", "speedup new", ".2f", NA), Column("speedup_change", "speedup change", "+.2f", NA),
        Column("base_efficiency", "efficiency base", ".1%", NA), Column("new_efficiency", "efficiency new", ".1%", NA),
        Column("efficiency_change", "efficiency change", "+.1%", NA),
        Column("over_base_speedup", "speedup over base", ".2f", ""), Column("over_base_efficiency", "efficiency over base", ".1%", ""),
        Column("p_value", "p", ".2g", NA),
    )
    keys = [c.key for c in columns]
    rows = tuple(tuple(v.item() if isinstance(v, np.generic) else v for v in r) for r in frame[keys].itertuples(index=False, name=None))
    tested = int(np.isfinite(frame["p_raw"].to_numpy(float)).sum()) if len(frame) else 0
    notes = ("Median time to solution of each side's usable runs; speedup and efficiency are each side's own, against "
             "its own smallest configuration (efficiency change in percentage points). Where the counts differ, speedup over "
             "base is base time / new time and efficiency over base divides it by the counts' ratio.",
             noise.test_note("configurations", tested))
    return ResultTable("Scaling: base against new", columns, rows, notes=notes, row_keys=("series", "resources"))
