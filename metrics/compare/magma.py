"""Provides `compare_magma`: MAGMA tester rows of a baseline against a candidate's.

Rows are grouped per tester, implementation, cluster size and problem size (and environment
where both sides name the same ones); the trusted rows (`metrics.magma.stats.included`: not
failed, not warm-up, not impossible, not from an untrusted run) are each side's sample. The
compared value is the median Gflop/s, or the median time where a tester prints no Gflop/s;
`slowdown` says it in time either way (a Gflop/s median 20 % lower is 25 % slower). The noise
test is `noise`'s, one value per row. A context column (environment, nodes) that the two sides
share no value of is pooled, so a 4-node baseline still compares with an 8-node candidate;
the note says so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscope.metrics.compare import noise
from gpuscope.metrics.magma.stats import below_resolution, included
from gpuscope.metrics.table import Column, ResultTable

NA = "n/a"
KEYS = ["test", "impl", "environment", "nodes", "problem_size"]
COLUMNS = [*KEYS, "metric", "base_rows", "new_rows", "base_median", "new_median", "ratio", "slowdown", "p_raw", "p_value", "verdict"]


def shared_keys(base: pd.DataFrame, new: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The key columns to match on, and the context columns pooled because the sides share no value of them."""
    keys, pooled = [], []
    for key in KEYS:
        if key not in base or key not in new:
            continue
        if key in ("environment", "nodes") and not set(base[key].astype(str)) & set(new[key].astype(str)):
            pooled.append(key)
            continue
        keys.append(key)
    return keys, pooled


def _samples(rows: pd.DataFrame, keys: list[str]) -> dict[tuple, dict[str, np.ndarray]]:
    """Per key, the trusted values of each metric (and the coarsest time resolution)."""
    if rows.empty:
        return {}
    trusted = included(rows)
    out: dict[tuple, dict[str, np.ndarray]] = {}
    labels = rows[keys].astype(str)
    for key, index in labels.groupby(keys, sort=False).groups.items():
        group = rows.loc[index][trusted[rows.index.get_indexer(index)]]
        key = key if isinstance(key, tuple) else (key,)
        out[key] = {m: (v := group[m].to_numpy(float))[np.isfinite(v)] for m in ("gflops", "time_ms")}
        out[key]["resolution"] = np.array([np.nanmax(group["time_res_ms"].to_numpy(float), initial=0.0)]) if "time_res_ms" in group else np.zeros(1)
    return out


def compare_magma(base: pd.DataFrame, new: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """COLUMNS, one row per group of either side (the candidate's order, then the baseline's
    groups it lacks), and the context columns pooled."""
    keys, pooled = shared_keys(base, new)
    b, n = _samples(base, keys), _samples(new, keys)
    records = []
    for key in [*n, *(k for k in b if k not in n)]:
        bs, ns = b.get(key), n.get(key)
        metric = "gflops" if (bs is None or bs["gflops"].size) and (ns is None or ns["gflops"].size) else "time_ms"
        bv = bs[metric] if bs is not None else np.empty(0)
        nv = ns[metric] if ns is not None else np.empty(0)
        bm = float(np.median(bv)) if bv.size else np.nan
        nm = float(np.median(nv)) if nv.size else np.nan
        ratio = nm / bm if bv.size and nv.size and bm else np.nan
        if metric == "time_ms" and bs is not None and ns is not None and (
                below_resolution(bm, float(bs["resolution"][0])) or below_resolution(nm, float(ns["resolution"][0]))):
            ratio = np.nan  # a time printed as 0.00 s says only that it is short
        slowdown = (1 / ratio - 1 if metric == "gflops" else ratio - 1) if np.isfinite(ratio) and ratio > 0 else np.nan
        records.append({**dict(zip(keys, key)), "metric": metric, "base_rows": int(bv.size), "new_rows": int(nv.size),
                        "base_median": bm, "new_median": nm, "ratio": ratio, "slowdown": slowdown, "_b": bv, "_n": nv})
    out = pd.DataFrame.from_records(records, columns=[*COLUMNS, "_b", "_n"])
    for key in KEYS:
        if key not in keys:
            out[key] = "all" if key in pooled else ""
    out["p_raw"] = noise.p_values(list(out["_b"]), list(out["_n"]))
    out["p_value"], out["verdict"] = noise.verdicts(out["slowdown"].to_numpy(float), out["p_raw"].to_numpy(float),
                                                    out["base_rows"].to_numpy(int), out["new_rows"].to_numpy(int))
    for i, key in enumerate([*n, *(k for k in b if k not in n)]):  # rows read, none trusted: not new, not gone
        untrusted = [side for side, got in (("base", b), ("new", n)) if key in got and not out.at[i, f"{side}_rows"]]
        if untrusted:
            out.at[i, "verdict"] = "no trusted rows on either side" if len(untrusted) == 2 else f"no trusted rows on the {untrusted[0]} side"
    return out[COLUMNS], pooled


def label(row: pd.Series) -> str:
    """`dgemm_vbatched magma 4n 512x512x511`: a group in one line."""
    nodes = f"{row['nodes']}n" if row["nodes"] not in ("", "all") else ""
    env = row["environment"] if row["environment"] not in ("", "all") else ""
    return " ".join(p for p in (str(row["test"]), str(row["impl"]), env, nodes, str(row["problem_size"])) if p)


def magma_table(frame: pd.DataFrame, pooled: list[str]) -> ResultTable:
    columns = (
        Column("test"), Column("problem_size", "size"), Column("verdict"), Column("slowdown", "slower by", "+.1%", NA),
        Column("impl"), Column("nodes"), Column("environment"), Column("metric"),
        Column("base_median", "median base", ".4g", NA), Column("new_median", "median new", ".4g", NA),
        Column("ratio", "new/base", ".3f", NA), Column("base_rows", "rows base"), Column("new_rows", "rows new"),
        Column("p_value", "p", ".2g", NA),
    )
    keys = [c.key for c in columns]
    rows = tuple(tuple(v.item() if isinstance(v, np.generic) else v for v in r) for r in frame[keys].itertuples(index=False, name=None))
    tested = int(np.isfinite(frame["p_raw"].to_numpy(float)).sum()) if len(frame) else 0
    notes = ["Median of the trusted rows (not failed, warm-up, impossible or untrusted) of each side; 'slower by' is in "
             "time (a Gflop/s median 20 % lower is 25 % slower).", noise.test_note("groups", tested, "row")]
    if pooled:
        notes.append(f"Pooled ({', '.join(pooled)}): the two sides share no value of it, so each side's values are taken together.")
    return ResultTable("MAGMA: base against new", columns, rows, notes=tuple(notes), row_keys=("test", "problem_size"))
