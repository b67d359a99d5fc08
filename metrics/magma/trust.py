"""Provides trust for MAGMA rows and runs: which numbers cannot be believed, and the evidence.

Rows are kept, flagged, with the first reason in `excluded`: `failed` (MAGMA's own check),
`warm-up` (a process's first call, when it is slow against the evidence), `impossible`
(above the GPU's peak), `not a number`, `untrusted` (the run or environment as a whole is
implausible). Statistics skip them unless asked to keep them; findings say why, with numbers.
"""

from __future__ import annotations

import os
import statistics
from typing import Any

import numpy as np
import pandas as pd

from gpuscope.metrics.distribution import number_keys
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.kernels.peaks import find_peak, peak_at_clock
from gpuscope.metrics.magma.run import PRECISION, RunInfo

EXCLUDED = ["", "failed", "warm-up", "impossible", "not a number", "untrusted"]
SLOW = 10.0
"""A first call is a warm-up when it is this many times slower than its evidence."""
IMPOSSIBLE_SHARE = 0.2
"""A run with at least this share of its rows above the GPU's peak is untrusted."""
FLAT_WORK = 100.0
FLAT_SLOPE = 0.2
"""A run whose work grows at least FLAT_WORK-fold across sizes while its time grows as
work**slope with slope below FLAT_SLOPE did not do the work it reports (times stay flat)."""
FLAT_SHARE = 0.1
"""... and only where its largest sizes claim at least this share of the GPU's peak."""
FAILED_SHARE = 0.5
"""An environment where a tester failed MAGMA's own check on at least this share of its rows
is untrusted for every tester."""
SEQUENTIAL_SHARE = 0.99
"""Processes ran one after another when this share of the rows the earlier ones print come
before the last process's banner."""


def judge(rows: pd.DataFrame, runs: list[RunInfo], peak_override: float | None) -> tuple[pd.DataFrame, pd.DataFrame, list[Finding]]:
    """The rows flagged (`flag`), the runs table and the findings: what the reader hands over."""
    rows = flag(rows, runs, peak_override)
    stats = file_stats(rows, runs)
    return rows, runs_table(rows, runs, stats), findings(rows, runs, stats)


def overlapped(run: RunInfo) -> bool:
    """Processes ran at the same time: a process started before the others' tables were done."""
    return run.banners > 1 and run.rows_before_last_banner < SEQUENTIAL_SHARE * run.row_lines * (run.banners - 1) / run.banners


def _codes(rows: pd.DataFrame, name: str) -> np.ndarray:
    return rows[name].cat.codes.to_numpy().astype(np.int64)


def _peaks(rows: pd.DataFrame, runs: list[RunInfo], peak_override: float | None) -> tuple[np.ndarray, dict[tuple[str, str], tuple[float, str]]]:
    """Per row, the peak Gflop/s of its device and precision (NaN unknown); and per (device,
    precision) the peak with where it came from."""
    clock = {r.device: r.clock_mhz for r in runs}
    devices, precisions = rows["device"].cat.categories, rows["precision"].cat.categories
    table = np.full((len(devices) + 1, len(precisions) + 1), np.nan)
    said: dict[tuple[str, str], tuple[float, str]] = {}
    for i, device in enumerate(devices):
        for j, precision in enumerate(precisions):
            if peak_override:
                table[i, j], how = float(peak_override), "--peak-gflops"
            else:
                found = peak_at_clock(str(device), str(precision), clock.get(device))
                if found is None:
                    continue
                table[i, j], how = found
            said[str(device), str(precision)] = (table[i, j], how)
    return table[_codes(rows, "device"), _codes(rows, "precision")], said


def _median_by(values: np.ndarray, group: np.ndarray, n: int) -> np.ndarray:
    """Median of the finite values of each group 0..n-1 (NaN for a group with none)."""
    keep = np.isfinite(values)
    medians = pd.Series(values[keep]).groupby(group[keep]).median()
    out = np.full(n, np.nan)
    out[medians.index.to_numpy()] = medians.to_numpy()
    return out


def _number(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`number_keys`, and each distinct key's first row."""
    distinct, number = number_keys(keys)
    first = np.full(distinct.size, keys.size)
    np.minimum.at(first, number, np.arange(keys.size))
    return distinct, number, first


def _warmup(rows: pd.DataFrame, runs: list[RunInfo], gflops: np.ndarray, time: np.ndarray) -> tuple[np.ndarray, dict[int, dict]]:
    """First calls of each process that are slow against the evidence.

    Rows carry no rank, so the candidates are, per file, test and implementation, the rows of
    the sweep's first size, the slowest one per process. A candidate is a warm-up when it
    takes SLOW times the median time of its size in its environment (the other processes'
    calls), or when its Gflop/s are SLOW times below the next size's median in its run (when
    every process's first call is slow, the median of its size is too)."""
    n = len(rows)
    warm = np.zeros(n, bool)
    if not n:
        return warm, {}
    f, t, i, s, e = (_codes(rows, c) for c in ("file", "test", "impl", "problem_size", "environment"))
    nt, ni, ns = (len(rows[c].cat.categories) for c in ("test", "impl", "problem_size"))
    groups, group_of, first_row = _number((f * nt + t) * ni + i)
    first_size = s[first_row]
    at_first = s == first_size[group_of]
    processes = np.ones(groups.size, np.int64)
    tests = [str(x) for x in rows["test"].cat.categories]
    for g, (fc, tc) in enumerate(zip((groups // ni // nt).tolist(), (groups // ni % nt).tolist())):
        processes[g] = max(1, runs[fc].processes.get(tests[tc], 1))
    # The slowest `processes` rows of the first size of each group.
    chosen = np.flatnonzero(at_first)
    rank = pd.Series(np.nan_to_num(time[chosen], nan=-np.inf)).groupby(group_of[chosen]).rank(method="first", ascending=False).to_numpy()
    candidate = np.zeros(n, bool)
    candidate[chosen[rank <= processes[group_of[chosen]]]] = True
    # Evidence 1: the median time of the size in the environment (test, implementation).
    same = ((e * nt + t) * ni + i) * ns + s
    keys, key_of = np.unique(same[at_first], return_inverse=True)
    reference = _median_by(time[at_first], key_of.reshape(-1), keys.size)
    slow = np.zeros(n, bool)
    slow[at_first] = time[at_first] > SLOW * reference[key_of.reshape(-1)]
    # Evidence 2: Gflop/s against the next size of the same run.
    later = np.where(~at_first & (s > first_size[group_of]), s, ns)
    next_size = np.full(groups.size, ns)
    np.minimum.at(next_size, group_of, later)
    at_next = s == next_size[group_of]
    next_gflops = _median_by(gflops[at_next], group_of[at_next], groups.size)
    next_time = _median_by(time[at_next], group_of[at_next], groups.size)
    slow |= gflops * SLOW < next_gflops[group_of]
    warm = candidate & slow
    # Per file: what the finding says (the warm-up rows are few).
    evidence: dict[int, dict] = {}
    sizes, lines = [str(x) for x in rows["problem_size"].cat.categories], rows["line"].to_numpy(np.int64)
    chosen = np.flatnonzero(warm)
    chosen = chosen[np.argsort(group_of[chosen], kind="stable")]
    cuts = np.flatnonzero(np.diff(group_of[chosen])) + 1
    for mine in np.split(chosen, cuts) if chosen.size else []:
        g = int(group_of[mine[0]])
        fc = int(groups[g] // ni // nt)
        record = evidence.setdefault(fc, {"rows": 0, "line": int(lines[mine].min()), "ms": [], "size": str(sizes[first_size[g]]), "next": None})
        record["rows"] += int(mine.size)
        record["ms"] += time[mine].tolist()
        if next_size[g] < ns and np.isfinite(next_gflops[g]) and record["next"] is None:
            record["next"] = (str(sizes[next_size[g]]), float(next_time[g]))
    return warm, evidence


def _flat_runs(rows: pd.DataFrame, gflops: np.ndarray, time: np.ndarray, usable: np.ndarray,
               peak: np.ndarray) -> dict[tuple[int, str], tuple[float, float, float, float, float]]:
    """Per (file, implementation) whose time does not grow with the work: (work ratio, time
    ratio, fitted slope, typical ms, top Gflop/s). Work per size is Gflop/s x ms (Mflop), fitted
    as log(time) against log(work) over the sizes' mean values. Flat time is evidence only where
    the run claims a real share of the GPU's peak (FLAT_SHARE) or the peak is unknown: calls so
    small that the launch dominates take about the same time whatever their size."""
    f, t, i, s = (_codes(rows, c) for c in ("file", "test", "impl", "problem_size"))
    nt, ni, ns = (len(rows[c].cat.categories) for c in ("test", "impl", "problem_size"))
    ok = usable & (gflops > 0) & (time > 0)
    key = ((f * nt + t) * ni + i) * ns + s
    keys, inv = number_keys(key[ok])
    out: dict[tuple[int, str], tuple[float, float, float, float, float]] = {}
    if not keys.size:
        return out
    count = np.maximum(np.bincount(inv, minlength=keys.size), 1)
    mean_time = np.bincount(inv, time[ok], keys.size) / count
    mean_work = np.bincount(inv, gflops[ok] * time[ok], keys.size) / count
    mean_gflops = np.bincount(inv, gflops[ok], keys.size) / count
    run_peak = np.full(keys.size, -np.inf)
    np.fmax.at(run_peak, inv, peak[ok])
    x, y = np.log(mean_work), np.log(mean_time)
    runs, start, k = np.unique(keys // ns, return_index=True, return_counts=True)  # keys are sorted: a run's sizes are together

    def total(v: np.ndarray) -> np.ndarray:
        return np.add.reduceat(v, start)

    sx, sy = total(x), total(y)
    slope = (total(x * y) - sx * sy / k) / np.maximum(total(x * x) - sx * sx / k, 1e-300)
    work = np.exp(np.maximum.reduceat(x, start) - np.minimum.reduceat(x, start))
    grew = np.exp(np.maximum.reduceat(y, start) - np.minimum.reduceat(y, start))
    top, limit = np.maximum.reduceat(mean_gflops, start), np.fmax.reduceat(run_peak, start)
    claims = ~np.isfinite(limit) | (top >= FLAT_SHARE * limit)
    impls = rows["impl"].cat.categories
    for r in np.flatnonzero((k >= 4) & (work >= FLAT_WORK) & (slope < FLAT_SLOPE) & claims).tolist():
        key = int(runs[r])
        ms = float(np.median(mean_time[start[r] : start[r] + k[r]]))
        out[key // ni // nt, str(impls[key % ni])] = (float(work[r]), float(grew[r]), float(slope[r]), ms, float(top[r]))
    return out


def flag(rows: pd.DataFrame, runs: list[RunInfo], peak_override: float | None) -> pd.DataFrame:
    """The rows with `warmup`, `impossible`, `untrusted` and `excluded` columns; the evidence
    is kept on `runs` for the findings."""
    n = len(rows)
    gflops, time = rows["gflops"].to_numpy(np.float64), rows["time_ms"].to_numpy(np.float64)
    failed = (rows["status"] == "failed").to_numpy(bool)
    peak, said = _peaks(rows, runs, peak_override)
    with np.errstate(invalid="ignore"):
        impossible = np.isfinite(peak) & (gflops > peak)
    warm, warm_evidence = _warmup(rows, runs, gflops, time)
    # Not a number: no finite value at all (time-only testers print no Gflop/s), or an infinite one.
    not_number = (~np.isfinite(gflops) & ~np.isfinite(time)) | np.isinf(gflops) | np.isinf(time)
    f = _codes(rows, "file") if n else np.zeros(0, np.int64)
    usable = ~failed & ~warm & ~not_number
    flat = _flat_runs(rows, gflops, time, usable, peak) if n else {}
    # Runs (files) that are implausible as a whole, then environments.
    rows_per_file = np.bincount(f, minlength=len(runs))
    bad_per_file = np.bincount(f[impossible & ~failed], minlength=len(runs))
    flat_by_file: dict[int, list[tuple[str, tuple[float, float, float, float, float]]]] = {}
    for (file, impl), evidence in flat.items():
        flat_by_file.setdefault(file, []).append((impl, evidence))
    for fc, run in enumerate(runs):
        run.peaks = {key: value for key, value in said.items() if key[0] == run.device}
        run.warm = warm_evidence.get(fc)
        if rows_per_file[fc] and bad_per_file[fc] >= IMPOSSIBLE_SHARE * rows_per_file[fc]:
            run.untrusted.append(f"{bad_per_file[fc]} of {rows_per_file[fc]} rows ({bad_per_file[fc] / rows_per_file[fc]:.0%}) are above the GPU's peak")
        for impl, (work, grew, slope, ms, top) in flat_by_file.get(fc, []):
            run.untrusted.append(f"{impl} time stays flat while the work grows {work:,.0f}x (time x{grew:.1f}, "
                                 f"time ~ work^{slope:.2f}; typical {ms:.2f} ms, up to {top:,.0f} Gflop/s): the work was not done")
    # An environment (at one cluster size: one deployment) where a tester failed MAGMA's own
    # check on most of its rows: every run there is untrusted.
    failing: dict[tuple, str] = {}
    if n:
        tests = [str(x) for x in rows["test"].cat.categories]
        pair = f * len(tests) + _codes(rows, "test")
        size, bad = np.bincount(pair, minlength=len(runs) * len(tests)), np.bincount(pair[failed], minlength=len(runs) * len(tests))
        totals: dict[tuple, list[int]] = {}
        for k in np.flatnonzero(size).tolist():
            fc, tc = divmod(k, len(tests))
            key = (str(runs[fc].context.get("environment")), runs[fc].context.get("nodes"), str(tests[tc]))
            totals.setdefault(key, [0, 0])
            totals[key][0] += int(bad[k])
            totals[key][1] += int(size[k])
        for (environment, nodes, name), (n_bad, n_rows) in totals.items():
            if n_bad >= FAILED_SHARE * n_rows:
                failing.setdefault((environment, nodes), f"its {name} failed MAGMA's own check in {n_bad} of {n_rows} rows")
    for run in runs:
        run.untrusted_env = failing.get((str(run.context.get("environment")), run.context.get("nodes")), "")
    file_untrusted = np.array([bool(r.untrusted or r.untrusted_env) for r in runs] or [False])
    untrusted = file_untrusted[f] if n else np.zeros(0, bool)
    excluded = np.zeros(n, np.int8)  # the first reason that applies wins: assigned last
    for code, applies in ((5, untrusted), (4, not_number), (3, impossible), (2, warm), (1, failed)):
        excluded[applies] = code
    return rows.assign(warmup=warm, impossible=impossible, untrusted=untrusted,
                       excluded=pd.Categorical.from_codes(excluded, categories=pd.Index(EXCLUDED, dtype=object)))


# --- findings ----------------------------------------------------------------------------

def _where(run: RunInfo) -> str:
    """`environment, N nodes: ` as the path gives them; nothing for a file given alone."""
    environment, nodes = run.context.get("environment"), run.context.get("nodes")
    if environment in (None, "", ".") and nodes is None:
        return ""
    return f"{environment}" + ("" if nodes is None else f", {int(nodes)} nodes") + ": "  # type: ignore[arg-type]


def _examples(items: list[str], noun: str = "sizes") -> str:
    return f"{len(items)} {noun}, e.g. {', '.join(items[:3])}" if len(items) > 3 else f"{noun} {', '.join(items)}"


def findings(rows: pd.DataFrame, runs: list[RunInfo], stats: dict[str, dict[str, Any]]) -> list[Finding]:
    """Per file and per tree: what was excluded and why, how runs ended, and layout doubts.
    `stats` is `file_stats(rows)`."""
    out: list[Finding] = []
    for run in runs:
        where = _where(run)
        c = stats.get(run.label, {})
        if c.get("failed"):
            out.append(Finding("warning", "failed", f"{where}{c['failed']} row(s) failed MAGMA's own accuracy check ({_examples(c['failed_sizes'])}; "
                               f"up to {c['failed_max']:,.0f} Gflop/s): excluded from statistics", run.label, c["failed_line"], c["failed"]))
        if run.warm:
            w = run.warm
            nxt = f"; next size {w['next'][0]}: {w['next'][1]:.2f} ms" if w["next"] else ""
            out.append(Finding("info", "warmup", f"{where}{w['rows']} warm-up row(s): first call of a process at size {w['size']} took a median "
                               f"{statistics.median(w['ms']):.2f} ms, over {SLOW:g}x its evidence (other processes' calls of that size, or the next size per flop){nxt}. "
                               f"Excluded; --keep-warmup keeps them", run.label, w["line"], w["rows"]))
        if c.get("impossible"):
            (device, precision), (peak, how) = next(iter(run.peaks.items())) if run.peaks else ((run.device, ""), (float("nan"), ""))
            worst = c["bad_max"]
            out.append(Finding("error", "impossible", f"{where}{c['impossible']} of {c['rows']} rows exceed the {PRECISION.get(precision, '')} peak of the "
                               f"{device} ({peak:,.0f} Gflop/s, {how}), up to {worst:,.0f} Gflop/s = {worst / peak:.1f}x peak: PHYSICALLY IMPOSSIBLE, "
                               f"excluded; --keep-impossible keeps them", run.label, c["bad_line"], c["impossible"]))
        if run.untrusted or run.untrusted_env:
            why = "; ".join(run.untrusted + ([f"its environment at this cluster size is untrusted: {run.untrusted_env}"] if run.untrusted_env else []))
            out.append(Finding("error", "untrusted", f"{where}run UNTRUSTED, left out of statistics and comparison (--keep-untrusted keeps it): {why}",
                               run.label, None, c.get("rows", 0)))
        out += _run_findings(run, c)
    out += _tree_findings(rows, runs)
    return out


def file_stats(rows: pd.DataFrame, runs: list[RunInfo] | None = None) -> dict[str, dict[str, Any]]:
    """Per file label (MAGMA's own rows): rows, failed rows (where, sizes, largest value),
    impossible rows, whether its table stops before the sizes it was asked for (`stopped`,
    the evidence; see `_stopped_early`), and its tests. One numpy pass per figure over all files."""
    if not len(rows):
        return {}
    impls = list(rows["impl"].cat.categories)
    own = (rows["impl"] == ("magma" if "magma" in impls else impls[0])).to_numpy(bool)
    f, s, t = (_codes(rows, c)[own] for c in ("file", "problem_size", "test"))
    labels, sizes, tests = ([str(x) for x in rows[c].cat.categories] for c in ("file", "problem_size", "test"))  # looked up per file: lists
    nf, ns, nt = len(labels), len(sizes), len(tests)
    line, gflops = rows["line"].to_numpy(np.int64)[own], rows["gflops"].to_numpy(np.float64)[own]
    failed = (rows["status"] == "failed").to_numpy(bool)[own]
    bad = rows["impossible"].to_numpy(bool)[own] & ~failed

    def first_line(mask: np.ndarray) -> np.ndarray:
        out = np.full(nf, np.iinfo(np.int64).max)
        np.minimum.at(out, f[mask], line[mask])
        return out

    def largest(mask: np.ndarray) -> np.ndarray:
        out = np.full(nf, -np.inf)
        np.fmax.at(out, f[mask], gflops[mask])
        return out

    count, n_failed, n_bad = (np.bincount(f[m], minlength=nf) for m in (np.ones(f.size, bool), failed, bad))
    failed_line, bad_line, failed_max, bad_max = first_line(failed), first_line(bad), largest(failed), largest(bad)
    per_size = np.bincount(f * ns + s, minlength=nf * ns).reshape(nf, ns)
    stopped = _stopped_early(f, t, s, line, runs, labels, sizes, tests)
    last_row = np.full(nf, -1, np.int64)
    np.maximum.at(last_row, f, np.arange(f.size))
    failed_sizes: dict[int, list[str]] = {}
    f_failed, s_failed = f[failed], s[failed]
    for k in np.sort(np.unique(f_failed * ns + s_failed, return_index=True)[1]).tolist():  # in order of first appearance
        failed_sizes.setdefault(int(f_failed[k]), []).append(str(sizes[s_failed[k]]))
    file_tests = number_keys(f * nt + t)[0]
    names: dict[int, list[str]] = {}
    for k in file_tests.tolist():
        names.setdefault(k // nt, []).append(str(tests[k % nt]))
    out: dict[str, dict[str, Any]] = {}
    for fc in np.flatnonzero(count).tolist():
        record: dict[str, Any] = {"rows": int(count[fc]), "failed": int(n_failed[fc]), "impossible": int(n_bad[fc]),
                                  "stopped": stopped.get(fc, ""), "largest": int(per_size[fc].max()),
                                  "last_size": str(sizes[s[last_row[fc]]]), "test": ",".join(names.get(fc, []))}
        if n_failed[fc]:
            record.update(failed_line=int(failed_line[fc]), failed_max=float(failed_max[fc]), failed_sizes=failed_sizes.get(fc, []))
        if n_bad[fc]:
            record.update(bad_line=int(bad_line[fc]), bad_max=float(bad_max[fc]))
        out[str(labels[fc])] = record
    return out


def _first_number(label: str) -> int:
    """The first size of a problem size label (`1024x1024` -> 1024): what `-N` names first."""
    head = label.split("x")[0]
    return int(head) if head.isdigit() else -1


def _stopped_early(f: np.ndarray, t: np.ndarray, s: np.ndarray, line: np.ndarray, runs: list[RunInfo] | None,
                   labels: list[str], sizes: list[str], tests: list[str]) -> dict[int, str]:
    """Per file code, why its table stops before the sizes it was asked for ("" or absent: it
    does not). A run asked for the sizes its echoed command line names (`-N`, `--range`, in
    order, repeats included: MAGMA 1.x scripts repeat sizes, so uneven row counts alone prove
    nothing); each command's rows, up to the next command, must reach its last size. Without
    a command line, every process of a tester (each printed its header) ran the same sweep:
    a size with a row count that is not a multiple of the processes was not reached by all."""
    out: dict[int, str] = {}
    if runs is None or not f.size:
        return out
    first_dim = np.array([_first_number(x) for x in sizes], np.int64)
    order = np.argsort(f, kind="stable")
    bounds = np.searchsorted(f[order], np.arange(len(labels) + 1))
    by_label = {}
    for run in runs:
        by_label.setdefault(run.label, run)
    for fc, label in enumerate(labels):
        run = by_label.get(label)
        if run is None or bounds[fc] == bounds[fc + 1]:
            continue
        mine = order[bounds[fc] : bounds[fc + 1]]
        lines, dims = line[mine], first_dim[s[mine]]
        commands = run.commands
        for k, (at, _test, asked) in enumerate(commands):
            end = commands[k + 1][0] if k + 1 < len(commands) else np.iinfo(np.int64).max
            part = (lines > at) & (lines < end)
            want = asked[-1]
            if np.count_nonzero(part & (dims == want)) < asked.count(want):
                seen = dims[part]
                where = f"stops at size {int(seen[np.argmax(lines[part])])}" if seen.size else "prints no row"
                out[fc] = f"{where} while its command line (line {at}) asks for sizes up to {want}"
                break
        if fc in out or commands:
            continue
        codes = t[mine] * len(sizes) + s[mine]
        found, counts = np.unique(codes, return_counts=True)
        for code, n in zip(found.tolist(), counts.tolist()):
            name = tests[code // len(sizes)]
            processes = max(1, run.processes.get(name, 1))
            if n % processes:
                out[fc] = (f"{name} at size {sizes[code % len(sizes)]} has {n} rows from {processes} processes "
                           "(each process runs the same sizes)")
                break
    return out


def outcome(run: RunInfo, c: dict[str, Any]) -> str:
    if not c.get("rows"):
        return "assert-only" if run.asserts else ("error" if run.errors else "no data")
    if run.cancelled:
        return "cancelled"
    if c.get("stopped") or run.last_line_cut or (run.start is not None and run.end is None):
        return "truncated"
    if c.get("failed"):
        return "failed checks"
    if run.exit_code:
        return f"exit {run.exit_code}"
    return "complete"


def _run_findings(run: RunInfo, c: dict[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    where, label, ended = _where(run), run.label, outcome(run, c)
    took = f" after {run.end - run.start:.1f} s" if run.start is not None and run.end is not None else ""
    if ended == "assert-only":
        line, text = run.asserts[0]
        out.append(Finding("error", "assert-only", f"{where}no data rows: {len(run.asserts)} process(es) stopped at {text!r}", label, line, len(run.asserts)))
    elif ended in ("error", "no data"):
        why = (f"first error: {run.errors[0][1]!r}" if run.errors else f"{len(run.unparsed)} row(s) do not fit their column header" if run.unparsed
               else f"a column header gpuscope does not know, line {run.unknown_headers[0][0]}: {run.unknown_headers[0][1][:100]!r}" if run.unknown_headers
               else f"{run.orphan_rows} numeric line(s) but no MAGMA column header" if run.orphan_rows
               else "no column header (`... Gflop/s (ms) ...`) and no data rows" if not run.tests else "a header but no rows under it")
        out.append(Finding("error", "no-data", f"{where}looks like MAGMA output but yields no rows: {why}", label))
    elif ended == "cancelled":
        out.append(Finding("warning", "cancelled", f"{where}run was cancelled (exit {run.exit_code}){took}: partial table of {c['rows']} rows, last size {c['last_size']}", label))
    elif ended == "truncated":
        why = c["stopped"] or ("its last line is cut short" if run.last_line_cut else "a Start time but no End time")
        out.append(Finding("warning", "truncated", f"{where}table ends early: {why} (killed, timed out, or still running?)", label))
    elif run.exit_code:
        out.append(Finding("warning", "exit-code", f"{where}processes exited with code {run.exit_code} (a MAGMA tester returns its number of failed checks)", label))
    if run.errors and ended not in ("error", "no data"):
        out.append(Finding("warning", "error-line", f"{len(run.errors)} error line(s), first: {run.errors[0][1]!r}", label, run.errors[0][0], len(run.errors)))
    if run.unparsed and c.get("rows"):
        out.append(Finding("warning", "unparsed", f"{len(run.unparsed)} line(s) start with a number but do not fit their column header; skipped", label, run.unparsed[0], len(run.unparsed)))
    if run.orphan_rows and c.get("rows"):
        out.append(Finding("warning", "no-header", f"{run.orphan_rows} numeric line(s) above any MAGMA column header: not read", label, None, run.orphan_rows))
    if run.unknown_headers and c.get("rows"):
        line, text = run.unknown_headers[0]
        out.append(Finding("warning", "unknown-header", f"{len(run.unknown_headers)} column header(s) gpuscope does not know; their rows are not read: {text[:100]!r}",
                           label, line, len(run.unknown_headers)))
    if run.unknown:
        line, text = run.unknown[0]
        out.append(Finding("info", "unrecognised", f"{len(run.unknown)} line(s) not recognised, ignored; first: {text[:80]!r}", label, line, len(run.unknown)))
    if run.last_line_cut:
        out.append(Finding("warning", "cut", "the last line is cut short (file ends mid-line)", label))
    if run.visible_devices > 1 and overlapped(run):
        out.append(Finding("warning", "shared-device", f"{where}{run.banners} processes ran at the same time and each saw {run.visible_devices} GPUs; "
                           "MAGMA uses device 0 unless --dev is given: they may have shared GPU 0", label))
    nodes = run.context.get("nodes")
    shown = len(run.hosts) if run.hosts else run.run_nodes
    if nodes is not None and shown is not None and int(nodes) != shown:  # type: ignore[call-overload]
        source = f"{len(run.hosts)} distinct hosts" if run.hosts else "its Flux/Slurm record"
        out.append(Finding("warning", "nodes-mismatch", f"{where}the path says {int(nodes)} nodes but the run ran on {shown} ({source})", label))  # type: ignore[call-overload]
    return out


def _tree_findings(rows: pd.DataFrame, runs: list[RunInfo]) -> list[Finding]:
    out: list[Finding] = []
    by_digest: dict[str, list[str]] = {}
    for run in runs:
        if run.digest:
            by_digest.setdefault(run.digest, []).append(run.label)
    pairs: dict[tuple[str, str], list[str]] = {}
    for labels in by_digest.values():
        folders = sorted({os.path.dirname(label) for label in labels})
        for a, b in zip(folders, folders[1:]):
            pairs.setdefault((a, b), []).append(os.path.basename(labels[0]))
    for (a, b), names in pairs.items():
        out.append(Finding("warning", "duplicate-files", f"{a or '.'} and {b or '.'} hold byte-identical outputs ({_examples(names, 'files')}): "
                           "the same run counted twice, or a copy under the wrong name?", a, None, len(names)))
    if len(rows):
        for device in sorted({str(d) for d in rows["device"].unique() if str(d)}):
            if find_peak(device) is None:
                out.append(Finding("info", "no-peak", f"no peak known for device {device!r}: impossible values not checked (--peak-gflops sets one)"))
    return out


def runs_table(rows: pd.DataFrame, runs: list[RunInfo], stats: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """One row per file: what ran, how it ended, and how many rows each trust rule took out.
    `stats` is `file_stats(rows)`."""
    warm = {}
    if len(rows):
        labels, codes = rows["file"].cat.categories, _codes(rows, "file")
        warm = dict(zip(map(str, labels), np.bincount(codes[rows["warmup"].to_numpy(bool)], minlength=len(labels)).tolist()))
    records = []
    for run in runs:
        c = stats.get(run.label, {})
        records.append({
            "file": run.label, "environment": run.context.get("environment"), "nodes": run.context.get("nodes"),
            "test": c.get("test", ",".join(run.tests)), "processes": run.banners, "rows": int(c.get("rows", 0)),
            "failed": int(c.get("failed", 0)), "warmup": warm.get(run.label, 0),
            "impossible": int(c.get("impossible", 0)), "untrusted": "; ".join(run.untrusted + ([run.untrusted_env] if run.untrusted_env else [])),
            "outcome": outcome(run, c), "duration_s": (run.end - run.start) if run.start is not None and run.end is not None else None,
            "exit_code": run.exit_code, "cancelled": run.cancelled, "device": run.device, "visible_devices": run.visible_devices,
            "magma_version": run.version, "run_nodes": run.run_nodes, "last_size": c.get("last_size", ""),
        })
    table = pd.DataFrame.from_records(records, columns=None if records else ["file", "outcome", "nodes", "exit_code", "run_nodes"])
    for name in ("nodes", "exit_code", "run_nodes"):
        table[name] = table[name].astype("Int64")
    return table
