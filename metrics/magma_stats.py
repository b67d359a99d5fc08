"""Provides MAGMA summaries: per (test, environment, nodes, problem size) distributions of
Gflop/s and ms, and a comparison of environments per problem size that says whether a
difference is beyond noise (Mann-Whitney U against the best environment).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscope.metrics.distribution import STATS, box_stats, mann_whitney
from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.table import Column, ResultTable

KEYS = ["test", "environment", "nodes", "problem_size"]
METRICS = {"gflops": "Gflop/s", "time_ms": "ms"}
HIGHER_IS_BETTER = {"gflops": True, "time_ms": False}
ALPHA = 0.05
MIN_SAMPLES = 5
POOLED = "all"
EXCLUSIONS = ["failed", "warmup", "impossible", "not_a_number"]
SUMMARY_COLUMNS = KEYS + ["count"] + [f"{m}_{s}" for m in METRICS for s in STATS if s != "count"] + EXCLUSIONS


def included(rows: pd.DataFrame, keep_warmup: bool = False, keep_impossible: bool = False) -> np.ndarray:
    """Rows that count in statistics: not failed, not warm-up, not impossible, finite."""
    reason = rows["excluded"]
    keep = (reason == "").to_numpy(bool).copy()
    if keep_warmup:
        keep |= (reason == "warm-up").to_numpy(bool)
    if keep_impossible:
        keep |= (reason == "impossible").to_numpy(bool)
    return keep


def _with_node_key(rows: pd.DataFrame, pool_nodes: bool) -> pd.DataFrame:
    frame = rows[["test", "environment", "problem_size", "gflops", "time_ms", "excluded"]].copy()
    if pool_nodes:
        frame["nodes"] = pd.Categorical.from_codes(np.zeros(len(rows), np.int64), categories=pd.Index([POOLED], dtype=object))
    else:
        values = rows["nodes"]
        labels = sorted(int(v) for v in values.dropna().unique())
        codes = np.searchsorted(np.array(labels, np.int64), values.fillna(-1).to_numpy(np.int64))
        codes = np.where(values.isna().to_numpy(), len(labels), codes)
        frame["nodes"] = pd.Categorical.from_codes(codes, categories=pd.Index([str(v) for v in labels] + ["?"], dtype=object))
    return frame


def summarize(rows: pd.DataFrame, *, pool_nodes: bool = False, keep_warmup: bool = False, keep_impossible: bool = False) -> pd.DataFrame:
    """One row per (test, environment, nodes, problem_size) with box statistics of both metrics
    and how many rows each trust rule excluded (`failed`, `warmup`, `impossible`)."""
    if rows.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    frame = _with_node_key(rows, pool_nodes)
    keep = included(rows, keep_warmup, keep_impossible)
    data = frame[keep]
    gflops = box_stats(data, KEYS, "gflops")
    times = box_stats(data, KEYS, "time_ms").drop(columns="count")
    dropped = frame[~keep]
    reasons = dropped.groupby(KEYS + ["excluded"], observed=True).size().unstack("excluded", fill_value=0) if len(dropped) else pd.DataFrame()
    reasons = reasons.reindex(columns=["failed", "warm-up", "impossible", "not a number"], fill_value=0)
    reasons.columns = ["failed", "warmup", "impossible", "not_a_number"]
    out = gflops.join(times, how="outer").join(reasons, how="outer")
    out["count"] = out["count"].fillna(0).astype(int)
    for col in ("failed", "warmup", "impossible", "not_a_number"):
        out[col] = out[col].fillna(0).astype(int)
    out = out.reset_index()[SUMMARY_COLUMNS]
    out = out.sort_values(["test", "problem_size", "environment", "nodes"], kind="stable").reset_index(drop=True)
    for key in KEYS:
        out[key] = out[key].astype(str)
    return out


def compare(rows: pd.DataFrame, *, metric: str = "gflops", pool_nodes: bool = False, keep_warmup: bool = False, keep_impossible: bool = False) -> pd.DataFrame:
    """Per (test, nodes, problem_size): environments ranked by median `metric`, the ratio of
    each median to the best one, and a Mann-Whitney p-value against the best environment."""
    columns = ["test", "nodes", "problem_size", "environment", "rank", "count", "median", "ratio_to_best", "p_value", "verdict"]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    frame = _with_node_key(rows, pool_nodes)[included(rows, keep_warmup, keep_impossible)]
    frame = frame[np.isfinite(frame[metric].to_numpy(float))]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    # Sort once by (group, value): every environment's sample is then a slice.
    keys = ["test", "nodes", "problem_size", "environment"]
    grouper = frame.groupby(keys, observed=True, sort=True)
    codes = grouper.ngroup().to_numpy()
    index = grouper.size().index
    values = frame[metric].to_numpy(float)
    order = np.lexsort((values, codes))
    values, codes = values[order], codes[order]
    counts = np.bincount(codes, minlength=len(index))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    higher = HIGHER_IS_BETTER[metric]
    records = []
    outer: dict[tuple[str, str, str], list[int]] = {}
    for g, key in enumerate(index):
        outer.setdefault((str(key[0]), str(key[1]), str(key[2])), []).append(g)
    for (test, nodes, size), groups in outer.items():
        sample = {g: values[starts[g] : starts[g] + counts[g]] for g in groups}
        medians = {g: float(np.median(v)) for g, v in sample.items()}
        ranked = sorted(groups, key=lambda g: medians[g], reverse=higher)
        best = ranked[0]
        for rank, g in enumerate(ranked, start=1):
            ratio = medians[g] / medians[best] if medians[best] else np.nan
            if g == best:
                p, verdict = np.nan, "best" if len(ranked) > 1 else "only one"
            elif min(counts[g], counts[best]) < MIN_SAMPLES:
                p, verdict = np.nan, "too few samples"
            else:
                p = mann_whitney(sample[g], sample[best])
                verdict = "beyond noise" if p < ALPHA else "within noise"
            records.append({"test": test, "nodes": nodes, "problem_size": size, "environment": str(index[g][3]),
                            "rank": rank, "count": int(counts[g]), "median": medians[g],
                            "ratio_to_best": ratio, "p_value": p, "verdict": verdict})
    return pd.DataFrame.from_records(records, columns=columns)


def summary_table(summary: pd.DataFrame, metric: str = "gflops", full: bool = False) -> ResultTable:
    """The summary as a table model; `full` keeps every statistic of both metrics (CSV/JSON)."""
    unit = METRICS[metric]
    if full:
        columns = [Column(c) for c in summary.columns]
        return ResultTable.from_frame(summary, "MAGMA summary", columns)
    other = "time_ms" if metric == "gflops" else "gflops"
    fmt = ",.2f"
    columns = [
        Column("test"), Column("environment"), Column("nodes"), Column("problem_size", "size"),
        Column("count", "n"),
        Column(f"{metric}_median", f"median {unit}", fmt), Column(f"{metric}_q1", "q1", fmt),
        Column(f"{metric}_q3", "q3", fmt), Column(f"{metric}_whisker_lo", "whisker lo", fmt),
        Column(f"{metric}_whisker_hi", "whisker hi", fmt), Column(f"{metric}_cv", "cv", ".3f"),
        Column(f"{other}_median", f"median {METRICS[other]}", fmt),
        Column("failed"), Column("warmup", "warm-up"), Column("impossible"),
    ]
    notes = ("Excluded from the statistics: failed (MAGMA's own check), warm-up (first call per process), "
             "impossible (above the GPU's peak). cv = standard deviation / mean.",)
    return ResultTable.from_frame(summary, f"MAGMA summary ({unit})", columns, notes)


def comparison_table(comparison: pd.DataFrame, metric: str = "gflops") -> ResultTable:
    unit = METRICS[metric]
    columns = [
        Column("test"), Column("nodes"), Column("problem_size", "size"), Column("rank"),
        Column("environment"), Column("count", "n"), Column("median", f"median {unit}", ",.2f"),
        Column("ratio_to_best", "vs best", ".3f"), Column("p_value", "p (Mann-Whitney)", ".2g"),
        Column("verdict"),
    ]
    notes = (f"Per problem size, environments ranked by median {unit} ({'higher' if HIGHER_IS_BETTER[metric] else 'lower'} is better); "
             f"'beyond noise' means p < {ALPHA} against the best environment.",)
    return ResultTable.from_frame(comparison, f"Environments compared ({unit})", columns, notes)


def findings_table(findings: list[Finding], limit: int | None = None) -> ResultTable:
    """Every finding; with more than `limit`, one line per (severity, kind) instead, with how
    many files and rows it covers and its first message (the full list stays one flag away)."""
    ordered = sort_findings(findings)
    columns = (Column("severity"), Column("kind"), Column("where"), Column("count"), Column("message"))
    if limit is None or len(ordered) <= limit:
        rows = tuple((f.severity, f.kind, f.where(), f.count, f.message) for f in ordered)
        return ResultTable("Findings", columns, rows)
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in ordered:
        groups.setdefault((f.severity, f.kind), []).append(f)
    rows = tuple(
        (severity, kind, f"{len({f.file for f in group})} file(s)", sum(f.count for f in group), f"e.g. {group[0].where()}: {group[0].message}")
        for (severity, kind), group in groups.items()
    )
    note = (f"{len(ordered)} findings grouped by kind; --table findings lists every one.",)
    return ResultTable("Findings (grouped)", columns, rows, note)


def runs_table(runs: pd.DataFrame) -> ResultTable:
    columns = [Column("file"), Column("environment"), Column("nodes"), Column("test"), Column("processes"),
               Column("rows"), Column("outcome"), Column("duration_s", "seconds", ".1f"), Column("exit_code", "exit")]
    return ResultTable.from_frame(runs, "Runs", columns)
