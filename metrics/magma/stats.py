"""Provides MAGMA summaries: per (test, environment, nodes, problem size) distributions of
Gflop/s and ms, and a comparison of environments per problem size that says whether a
difference is beyond noise (Mann-Whitney U against the best environment).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from gpuscope.metrics.distribution import EXACT_MAX, STATS, group_order, mann_whitney, number_keys, segment_stats, sort_by_group
from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.table import Column, ResultTable

KEYS = ["test", "environment", "nodes", "problem_size"]
METRICS = {"gflops": "Gflop/s", "time_ms": "ms"}
HIGHER_IS_BETTER = {"gflops": True, "time_ms": False}
ALPHA = 0.05
MIN_SAMPLES = 5
MIN_SURVIVING = 0.5
"""A group is ranked "best" only with at least MIN_SAMPLES trusted rows and at least this share
of its rows trusted: a winner made of the few rows the trust rules left is no winner."""
DEFAULT_IMPL = "magma"
POOLED = "all"
EXCLUSIONS = ["failed", "warmup", "impossible", "not_a_number", "untrusted"]
EXCLUDED_NAMES = ["", "failed", "warm-up", "impossible", "not a number", "untrusted"]
"""The rows' `excluded` values: kept, then the reasons counted in EXCLUSIONS, in that order."""
SUMMARY_COLUMNS = KEYS + ["count"] + [f"{m}_{s}" for m in METRICS for s in STATS if s != "count"] + ["time_ms_resolution"] + EXCLUSIONS
"""`time_ms_resolution`: half the last digit the group's times are printed with (`0.00` s: 5 ms)."""


def included(rows: pd.DataFrame, keep_warmup: bool = False, keep_impossible: bool = False, keep_untrusted: bool = False) -> np.ndarray:
    """Rows that count in statistics: not failed, not warm-up, not impossible, finite, not
    from an untrusted run (unless asked to keep those)."""
    reason = rows["excluded"]
    keep = (reason == "").to_numpy(bool).copy()
    for wanted, name in ((keep_warmup, "warm-up"), (keep_impossible, "impossible"), (keep_untrusted, "untrusted")):
        if wanted:
            keep |= (reason == name).to_numpy(bool)
    return keep


def of_impl(rows: pd.DataFrame, impl: str | None, columns: list[str] | None = None) -> pd.DataFrame:
    """The rows of one implementation (magma, cublas, cpu, ...; None: all rows), with only
    `columns` when given (fewer columns to copy)."""
    if columns is not None:
        rows = rows[[c for c in columns if c in rows]]
    if impl is None or "impl" not in rows or rows.empty:
        return rows
    chosen = (rows["impl"] == impl).to_numpy(bool)
    return rows if chosen.all() else rows[chosen]


STATS_COLUMNS = ["test", "environment", "nodes", "problem_size", "impl", "gflops", "time_ms", "time_res_ms", "excluded"]
"""The columns the summary and the comparison read."""


def impls(rows: pd.DataFrame) -> list[str]:
    """Implementations present, MAGMA's own first."""
    if "impl" not in rows or rows.empty:
        return []
    found = [str(x) for x in rows["impl"].unique()]
    return sorted(found, key=lambda name: (name != DEFAULT_IMPL, found.index(name)))


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, as Slurm sets it), at least 1."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _key_codes(rows: pd.DataFrame, pool_nodes: bool) -> list[tuple[np.ndarray, pd.Index]]:
    """Codes and categories of the summary keys (test, environment, nodes, problem_size);
    nodes become labels ("4", "16", "?" when unknown, or "all" pooled)."""
    out = []
    for key in KEYS:
        if key == "nodes":
            if pool_nodes:
                out.append((np.zeros(len(rows), np.int64), pd.Index([POOLED], dtype=object)))
                continue
            out.append(_node_codes(rows["nodes"]))
        else:
            column = rows[key]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                column = column.astype("category")
            out.append((column.array.codes, column.cat.categories))  # small ints: widened once, in `_group_key`
    return out


def _node_codes(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes of the node counts in numeric order, unknown ("?") last. Rows come file by file,
    so the values come in runs: each run is looked up once, then spread over its rows."""
    missing = values.isna().to_numpy()
    numbers = values.to_numpy(np.float64, na_value=np.nan)
    same = (numbers[1:] == numbers[:-1]) | (missing[1:] & missing[:-1])
    first = np.flatnonzero(np.concatenate(([True], ~same)))  # where each run starts
    run_numbers, run_missing = numbers[first], missing[first]
    labels = np.unique(run_numbers[~run_missing]).astype(np.int64)
    run_codes = np.searchsorted(labels, np.where(run_missing, -1, run_numbers).astype(np.int64))
    run_codes[run_missing] = len(labels)
    codes = np.repeat(run_codes, np.diff(np.append(first, numbers.size)))
    return codes, pd.Index([str(v) for v in labels.tolist()] + ["?"], dtype=object)


def _group_key(codes: list[tuple[np.ndarray, pd.Index]]) -> np.ndarray:
    """One int64 per row numbering its combination of key codes in row-major order (the
    first key varies slowest); computed in place, one array for all the keys."""
    key = codes[0][0].astype(np.int64)
    for values, labels in codes[1:]:
        key *= len(labels)
        key += values
    return key


def summarize(rows: pd.DataFrame, *, impl: str | None = DEFAULT_IMPL, pool_nodes: bool = False, keep_warmup: bool = False,
              keep_impossible: bool = False, keep_untrusted: bool = False) -> pd.DataFrame:
    """One row per (test, environment, nodes, problem_size) of one implementation (`impl`)
    with box statistics of both metrics and how many rows each trust rule excluded.

    Rows are sorted by test, problem size, environment and nodes (in category order). The
    groups are numbered once in that order; each metric is then sorted by (group, value) and
    every statistic is a segment operation (metrics/distribution.py)."""
    rows = of_impl(rows, impl, STATS_COLUMNS)
    if rows.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    codes = _key_codes(rows, pool_nodes)
    (_, tests), (_, envs), (_, node_labels), (_, sizes) = codes
    excluded = rows["excluded"]
    if isinstance(excluded.dtype, pd.CategoricalDtype) and list(excluded.cat.categories) == EXCLUDED_NAMES:
        reason = excluded.array.codes.astype(np.int16)  # as the reader builds it (a copy: changed below)
    else:
        reason = pd.Categorical(excluded, categories=EXCLUDED_NAMES).codes.astype(np.int16)
    reason[reason < 0] = len(EXCLUDED_NAMES)  # a reason this version does not know: counted nowhere
    keep = reason == 0  # the same rows as included(): "", and the reasons the caller keeps
    if keep_warmup:
        keep |= reason == EXCLUDED_NAMES.index("warm-up")
    if keep_impossible:
        keep |= reason == EXCLUDED_NAMES.index("impossible")
    if keep_untrusted:
        keep |= reason == EXCLUDED_NAMES.index("untrusted")
    metrics = {m: rows[m].to_numpy(np.float64) for m in METRICS}
    finite = {m: keep & np.isfinite(v) for m, v in metrics.items()}
    counted = ~keep
    for mask in finite.values():
        counted |= mask
    # Group number in output order: (test, problem_size, environment, nodes).
    key = _group_key([codes[0], codes[3], codes[1], codes[2]])
    every = bool(counted.all())  # the usual case: no row to leave out, no copies to pick them
    chosen = key if every else key[counted]
    uniq, group = number_keys(chosen)
    if every:
        group_of_row = group
    else:
        group_of_row = np.full(len(rows), -1, np.int64)
        group_of_row[counted] = group
    n_groups = len(uniq)
    columns: dict[str, object] = {}
    parts = {}
    for name, labels in (("nodes", node_labels), ("environment", envs), ("problem_size", sizes), ("test", tests)):
        uniq, parts[name] = np.divmod(uniq, len(labels))
    for name, labels in (("test", tests), ("environment", envs), ("nodes", node_labels), ("problem_size", sizes)):
        names = np.array([str(label) for label in labels], dtype=object)  # few labels: str() each once
        columns[name] = pd.Series(names[parts[name]], dtype=str)

    def chosen_rows(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return values if mask.all() else values[mask]

    masks = list(finite.values())
    grouped = shared_codes = None
    if all(np.array_equal(masks[0], m) for m in masks[1:]):  # usually: a row has both metrics or neither
        shared_codes = chosen_rows(group_of_row, masks[0])
        if shared_codes.size and n_groups < 1 << 15:  # codes sort_by_group sorts as 16-bit integers
            grouped = group_order(shared_codes.astype(np.int16))  # the rows ordered by group once, for both metrics

    def box(metric: str) -> dict[str, np.ndarray]:
        mask = finite[metric]
        group_codes = shared_codes if grouped is not None else chosen_rows(group_of_row, mask)
        return segment_stats(*sort_by_group(chosen_rows(metrics[metric], mask), group_codes, grouped), n_groups)

    # One thread: the two metrics' sorts are many short numpy calls (one per group), and
    # on two threads they spend more time handing the interpreter lock over than they gain.
    boxes = {metric: box(metric) for metric in METRICS}
    # Rows with either metric count (time-only testers print no Gflop/s).
    columns["count"] = np.maximum(boxes["gflops"]["count"], boxes["time_ms"]["count"]).astype(np.int64)
    for metric, stats in boxes.items():
        for stat in STATS[1:]:
            columns[f"{metric}_{stat}"] = stats[stat]
    resolution = np.zeros(n_groups)
    if "time_res_ms" in rows:
        timed = finite["time_ms"]
        np.fmax.at(resolution, group_of_row[timed], rows["time_res_ms"].to_numpy(np.float64)[timed])
    columns["time_ms_resolution"] = np.where(resolution > 0, resolution, np.nan)
    dropped = ~keep
    slots = len(EXCLUDED_NAMES) + 1
    per_reason = np.bincount(group_of_row[dropped] * slots + reason[dropped], minlength=n_groups * slots).reshape(n_groups, slots)
    for code, name in enumerate(EXCLUSIONS, start=1):
        columns[name] = per_reason[:, code].astype(int)
    return pd.DataFrame({name: columns[name] for name in SUMMARY_COLUMNS})


def compare(rows: pd.DataFrame, *, impl: str | None = DEFAULT_IMPL, metric: str = "gflops", pool_nodes: bool = False,
            keep_warmup: bool = False, keep_impossible: bool = False, keep_untrusted: bool = False) -> pd.DataFrame:
    """Per (test, nodes, problem_size): environments ranked by median `metric`, the ratio of
    each median to rank 1's, and a Mann-Whitney p-value against rank 1 (`p_raw`), then the
    verdicts of `judge` (Holm-corrected over every comparison of the frame).

    Only a group with at least MIN_SAMPLES trusted rows and MIN_SURVIVING of its rows trusted
    is ranked; the others are listed after them as "too few trusted rows", never as best."""
    rows = of_impl(rows, impl, STATS_COLUMNS)
    if rows.empty:
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    # Groups numbered as the summary numbers them, in (test, nodes, problem_size, environment)
    # order: every row counts in the totals, the trusted ones are the samples.
    keys = _key_codes(rows, pool_nodes)
    (_, tests), (_, envs), (_, node_labels), (_, sizes) = keys
    distinct, all_codes = number_keys(_group_key([keys[0], keys[2], keys[3], keys[1]]))
    label: dict[str, list[str]] = {}
    for name, labels in (("environment", envs), ("problem_size", sizes), ("nodes", node_labels), ("test", tests)):
        distinct, code = np.divmod(distinct, len(labels))
        label[name] = np.array([str(x) for x in labels], dtype=object)[code].tolist()
    index = list(zip(label["test"], label["nodes"], label["problem_size"], label["environment"]))
    totals = np.bincount(all_codes, minlength=len(index))
    values = rows[metric].to_numpy(float)
    chosen = included(rows, keep_warmup, keep_impossible, keep_untrusted) & np.isfinite(values)
    if not chosen.any():
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    resolution = np.zeros(len(index))  # per group, the coarsest time resolution of its samples
    if metric == "time_ms" and "time_res_ms" in rows:
        np.fmax.at(resolution, all_codes[chosen], rows["time_res_ms"].to_numpy(float)[chosen])
    # Sort once by (group, value): every environment's sample is then a slice.
    values, codes = sort_by_group(values[chosen], all_codes[chosen])
    counts = np.bincount(codes, minlength=len(index))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    higher = HIGHER_IS_BETTER[metric]
    records = []
    outer: dict[tuple[str, str, str], list[int]] = {}
    for g, key in enumerate(index):
        if counts[g]:  # a group with no trusted row is left out
            outer.setdefault((str(key[0]), str(key[1]), str(key[2])), []).append(g)
    for (test, nodes, size), groups in outer.items():
        sample = {g: values[starts[g] : starts[g] + counts[g]] for g in groups}
        medians = {g: float(np.median(v)) for g, v in sample.items()}
        total = {g: int(totals[g]) for g in groups}
        trusted = {g: counts[g] >= MIN_SAMPLES and counts[g] >= MIN_SURVIVING * total[g] for g in groups}
        ranked = sorted(groups, key=lambda g: (not trusted[g], -medians[g] if higher else medians[g]))
        first = ranked[0] if trusted[ranked[0]] else None
        rank = 0
        for g in ranked:
            p = ratio = np.nan
            if first is not None and trusted[g] and g != first:
                p = mann_whitney(sample[g], sample[first])
            if first is not None and not (below_resolution(medians[g], resolution[g]) or below_resolution(medians[first], resolution[first])):
                ratio = medians[g] / medians[first] if medians[first] else np.nan
            rank += trusted[g]
            records.append({"test": test, "nodes": nodes, "problem_size": size, "environment": str(index[g][3]),
                            "rank": rank if trusted[g] else None, "count": int(counts[g]), "rows": total[g], "median": medians[g],
                            "resolution": resolution[g] if resolution[g] > 0 else np.nan, "ratio_to_best": ratio, "p_raw": p,
                            "p_value": np.nan, "verdict": "" if trusted[g] else f"too few trusted rows ({counts[g]} of {total[g]})"})
    out = pd.DataFrame.from_records(records, columns=COMPARE_COLUMNS)
    out["rank"] = out["rank"].astype("Int64")
    return judge(out)


COMPARE_COLUMNS = ["test", "nodes", "problem_size", "environment", "rank", "count", "rows", "median", "resolution", "ratio_to_best",
                   "p_raw", "p_value", "verdict"]
def below_resolution(value: float, resolution: float) -> bool:
    """A time printed as 0 (`0.00` s) only says it is under half the last printed digit."""
    return bool(resolution > 0 and abs(value) < resolution)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of the finite p-values (NaN stays NaN): the k-th smallest of
    m is multiplied by m - k + 1, and an adjusted value never falls below a smaller one's."""
    p = np.asarray(p, float)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    if not finite.size:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    m = order.size
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out[order] = adjusted
    return out


def judge(comparison: pd.DataFrame) -> pd.DataFrame:
    """Verdicts over one table's comparisons, Holm-corrected over all of them (the family is
    the table shown: one size of one test has few, a whole tree many). Rank 1 is "best" only
    when it beats rank 2 beyond noise; otherwise it is "tied with #2" (p shown on rank 2)."""
    if comparison.empty:
        return comparison
    out = comparison.copy()
    out["p_value"] = holm(out["p_raw"].to_numpy(float))
    ranked = out["rank"].notna().to_numpy()
    rank = out["rank"].fillna(0).to_numpy(int)
    p = out["p_value"].to_numpy(float)
    size_key = list(zip(out["test"], out["nodes"], out["problem_size"]))
    second = {k: p[i] for i, k in enumerate(size_key) if ranked[i] and rank[i] == 2}
    verdicts = out["verdict"].astype(object).to_numpy(copy=True)
    for i, k in enumerate(size_key):
        if not ranked[i]:
            continue
        if rank[i] == 1:
            if k not in second:
                verdicts[i] = "only one"
            elif second[k] < ALPHA:
                verdicts[i] = "best"
            else:
                verdicts[i] = f"tied with #2 (p = {second[k]:.2g})" if np.isfinite(second[k]) else "tied with #2"
        else:
            verdicts[i] = "beyond noise" if p[i] < ALPHA else "within noise"
    out["verdict"] = verdicts
    return out


def comparisons(comparison: pd.DataFrame) -> int:
    """How many rank tests a comparison frame holds (the Holm family)."""
    return int(np.isfinite(comparison["p_raw"].to_numpy(float)).sum()) if "p_raw" in comparison else 0


def empty_last(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with the groups that have data first and those left with no row after the
    exclusions last (in their own order), each of those with `why`: the exclusions it lost
    its rows to ("8 warm-up"); blank for groups with data."""
    if summary.empty:
        return summary.assign(why=pd.Series(dtype=object))
    labels = dict(zip(EXCLUSIONS, EXCLUDED_NAMES[1:]))
    counts = summary[EXCLUSIONS].fillna(0).astype(int).to_numpy()
    empty = (summary["count"].fillna(0) == 0).to_numpy()
    why = ["" if not e else "no rows left: " + (", ".join(f"{n} {labels[k]}" for k, n in zip(EXCLUSIONS, row) if n) or "none read")
           for e, row in zip(empty, counts)]
    out = summary.assign(why=why)
    return pd.concat([out[~empty], out[empty]], ignore_index=True)


def summary_table(summary: pd.DataFrame, metric: str = "gflops", full: bool = False, impl: str = DEFAULT_IMPL) -> ResultTable:
    """The summary as a table model; `full` keeps every statistic of both metrics (CSV/JSON).
    Groups with data come first, empty ones last with why (`empty_last`)."""
    unit = METRICS[metric]
    summary = empty_last(summary)
    if full:
        columns = [Column(c) for c in summary.columns]
        return ResultTable.from_frame(summary, f"MAGMA summary ({impl})", columns)
    other = "time_ms" if metric == "gflops" else "gflops"
    fmt = ",.2f"
    resolution = summary["time_ms_resolution"].to_numpy(float) if "time_ms_resolution" in summary else np.full(len(summary), np.nan)
    # A median time under the printed resolution is shown as such ("< 5"), never as 0.
    summary = summary.assign(time_ms_median=[f"< {r:.3g}" if below_resolution(m, r) else m
                                             for m, r in zip(summary["time_ms_median"].to_numpy(float), resolution)])
    columns = [
        Column("test"), Column("environment"), Column("nodes"), Column("problem_size", "size"),
        Column("count", "n"),
        Column(f"{metric}_median", f"median {unit}", fmt), Column(f"{metric}_q1", "q1", fmt),
        Column(f"{metric}_q3", "q3", fmt), Column(f"{metric}_whisker_lo", "whisker lo", fmt),
        Column(f"{metric}_whisker_hi", "whisker hi", fmt), Column(f"{metric}_cv", "cv", ".3f"),
        Column(f"{other}_median", f"median {METRICS[other]}", fmt),
        Column("failed"), Column("warmup", "warm-up"), Column("impossible"), Column("untrusted"), Column("why"),
    ]
    notes = ("Excluded: failed (MAGMA's own check), warm-up (slow first call), impossible (above the GPU's peak), "
             "untrusted (implausible run: see findings). cv = standard deviation / mean. Groups with no row left "
             "come last, with why. A median time under half the last digit the file prints is shown as '< that'; "
             "testers that print times only (eigen and singular value solvers) have no Gflop/s.",)
    return ResultTable.from_frame(summary, f"MAGMA summary ({unit}, {impl})", columns, notes)


def comparison_table(comparison: pd.DataFrame, metric: str = "gflops", impl: str = DEFAULT_IMPL) -> ResultTable:
    """The comparison as a table model, with a note saying how p was computed and over how
    many comparisons it was corrected."""
    unit = METRICS[metric]
    columns = [
        Column("test"), Column("nodes"), Column("problem_size", "size"), Column("rank"),
        Column("environment"), Column("count", "n"), Column("rows", "of"), Column("metric"), Column("median", f"median {unit}", ",.2f"),
        Column("ratio_to_best", "vs #1", ".3f"), Column("p_value", "p", ".2g"), Column("verdict"),
        Column("p_raw", "p uncorrected", ".2g"), Column("resolution", "resolution ms", ".3g"),
    ]
    comparison = comparison.assign(metric=metric)  # the unit of `median` in every CSV/JSON record
    if comparison.empty:
        comparison = comparison.assign(p_raw=pd.Series(dtype=float), resolution=pd.Series(dtype=float))
    if metric == "time_ms":  # a median under the file's resolution is shown as such, never as 0
        comparison["median"] = [f"< {r:.3g}" if below_resolution(m, r) else m
                                for m, r in zip(comparison["median"].to_numpy(float), comparison["resolution"].to_numpy(float))]
    n = comparisons(comparison)
    notes = (f"Per problem size, environments ranked by median {unit} ({'higher' if HIGHER_IS_BETTER[metric] else 'lower'} is better). "
             f"p: two-sided Mann-Whitney U test against rank 1 (exact for samples of {EXACT_MAX} or fewer without ties, else the normal "
             f"approximation), Holm-corrected over the {n} comparison{'s' if n != 1 else ''} of this table; 'beyond noise' when p < {ALPHA}. "
             f"Rank 1 is 'best' only when rank 2 is beyond noise, else 'tied with #2'. n = trusted rows, of = all rows; a group "
             f"with fewer than {MIN_SAMPLES} trusted rows or under {MIN_SURVIVING:.0%} of its rows trusted is not ranked.",)
    if metric == "time_ms" and comparison["resolution"].notna().any():
        notes += ("Times are as precise as the file prints them: a median under half the last printed digit is shown as '< resolution', "
                  "and no ratio is given where either median is that small.",)
    return ResultTable.from_frame(comparison, f"Environments compared ({unit}, {impl})", columns, notes)


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
               Column("rows"), Column("outcome"), Column("duration_s", "seconds", ".1f"), Column("exit_code", "exit"),
               Column("untrusted", "untrusted because")]
    return ResultTable.from_frame(runs, "Runs", columns)
