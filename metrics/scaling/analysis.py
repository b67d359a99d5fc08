"""Provides the scaling analysis of a `runs` table (one row per run, as the scaling readers
return it): speedup and parallel efficiency against the smallest measured configuration,
strong versus weak scaling told from the data, Karp-Flatt and Gustafson per point, Amdahl
fits, the settings that changed besides the resources, whether the result (validation
quality, epochs) held, and the findings that go with them.

Every series stays apart: all grouping is by (series, resource_kind). A run counts when its
status is `ok`, it did not fail to converge, and its time is known; the others are counted
per reason and left out. Repeated runs are summarised by their median (min and max as the
spread); speedup and efficiency come from the medians. Numbers that cannot be computed are
NaN, never 0.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterator

import numpy as np
import pandas as pd

from gpuscope.metrics.scaling import checks
from gpuscope.metrics.scaling.runs import KEYS, Grouped, column_of, false_mask, group_runs, groups_of, leave_out_reasons, numbers, settings_columns, true_mask
from gpuscope.metrics.scaling.spread import compare
from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.scaling.fit import AmdahlFit, amdahl_fit, gustafson_serial, karp_flatt, karp_flatt_trend, speedup

__all__ = [
    "AmdahlFit",
    "Grouped",
    "group_runs",
    "amdahl_fit",
    "karp_flatt_trend",
    "leave_out_reasons",
    "summarize",
    "fits",
    "config_diff",
    "config_diff_wide",
    "diff_sentences",
    "settings_changes",
    "quality_check",
    "findings",
    "series_overview",
    "plot_series",
]

EFFICIENCY_THRESHOLD = 0.75
WORK_TOLERANCE = 0.1
"""Work per configuration within 10 % of constant is strong scaling; work per worker within
10 % of constant is weak scaling; anything else is "unknown"."""
UNIT = {"gpus": "GPUs", "nodes": "nodes", "threads": "threads", "processes": "processes"}
SUMMARY_COLUMNS = [
    "series", "benchmark", "resource_kind", "resources", "runs", "runs_left_out", "left_out",
    "time_s_median", "time_s_min", "time_s_max", "speedup", "ideal_speedup", "efficiency", "karp_flatt",
    "scaled_speedup", "gustafson_serial", "throughput", "resource_seconds", "scaling", "scaling_from",
    "baseline_resources", "differs", "topology", "curve", "speedup_note",
]  # fmt: skip
QUALITY_COLUMNS = [
    "series", "resource_kind", "resources", "quality_name", "runs", "not_converged", "convergence",
    "quality_median", "quality_min", "quality_max", "epochs_median", "epochs_min", "epochs_max",
    "baseline_resources", "quality_difference", "quality_p_value", "quality_verdict",
    "epochs_p_value", "epochs_verdict",
]  # fmt: skip
DIFF_COLUMNS = ["series", "resource_kind", "setting", "resources", "value"]


def unit(kind: object, count: float | None = None) -> str:
    """`GPUs`, `nodes`, ... for a resource kind (`GPU` for one)."""
    word = UNIT.get(str(kind), str(kind))
    return word[:-1] if count == 1 and word.endswith("s") else word


def _work_kind(used: pd.DataFrame, base: int) -> tuple[str, str]:
    """(`strong` | `weak` | `unknown`, what told it) for the used runs of one series."""
    configs = sorted(int(r) for r in used["resources"].unique())
    if len(configs) < 2:
        return "unknown", "one configuration"
    p_rel = np.array(configs, float) / base
    for column, label, per_worker in (("samples", "samples", False), ("set_global_batch_size", "global batch size", False), ("set_local_batch_size", "local batch size", True)):
        if column not in used:
            continue
        values = pd.Series(numbers(used[column]), index=used.index).groupby(used["resources"]).median()
        work = np.array([values.get(r, np.nan) for r in configs])
        if not np.all(np.isfinite(work) & (work > 0)):
            continue
        ratio = work / work[configs.index(base)] if base in configs else work / work[0]
        if per_worker:  # a local batch is the work of one worker
            ratio = ratio * p_rel
        if np.all(np.abs(ratio - 1.0) <= WORK_TOLERANCE):
            return "strong", f"{label} constant"
        if np.all(np.abs(ratio / p_rel - 1.0) <= WORK_TOLERANCE):
            if column == "samples":
                return "weak", "samples per worker constant"
            # A batch that grows with the workers is weak scaling per step only: the time of a
            # whole run over the same data is still strong scaling, with the batch a second
            # change the config diff states (formats-scaling.md, seed 002's per-GPU batch 32).
            return "strong", f"whole-run time compared; {label} grows with the resources (weak per step only)"
        return "unknown", f"{label} neither constant nor in proportion to the resources"
    return "unknown", "no samples or batch size in the logs"


def summarize(runs: pd.DataFrame, baseline: int | None = None, *, grouped: Grouped | None = None) -> pd.DataFrame:
    """One row per (series, resource_kind, resources): runs used and left out, time median
    and spread, speedup and efficiency relative to the baseline (the smallest configuration
    with a usable run, or `baseline` when given), Karp-Flatt (strong), scaled speedup and
    Gustafson's serial fraction (weak), throughput, and the settings that differ from the
    baseline. A series whose named baseline has no usable run keeps its rows with NaN
    speedups (`findings()` says why); `attrs["baseline"]` remembers the request."""
    if runs is None or runs.empty:
        out = pd.DataFrame(columns=SUMMARY_COLUMNS)
        out.attrs["baseline"] = baseline
        return out
    records = []
    for (series, kind), group in groups_of(runs, grouped).items():
        group = group[pd.notna(group["resources"])]
        if group.empty:
            continue
        group = group.assign(resources=group["resources"].astype(int))
        # one resource count run on several topologies (1 node x 8, 2 nodes x 4) is several points
        group = group.assign(_topology=checks.topologies(group, kind))
        used = group[group["_reason"] == ""]
        usable = sorted(int(r) for r in used["resources"].unique())
        base = (baseline if baseline in usable else None) if baseline is not None else (usable[0] if usable else None)
        scaling, scaling_from = _work_kind(used, base) if base is not None else ("unknown", "no baseline")
        times = {(int(r), str(topo)): numbers(g) for (r, topo), g in used.groupby(["resources", "_topology"])["time_s"]}
        base_key = min((k for k in times if k[0] == base), key=lambda k: checks.topology_nodes(k[1])) if base is not None else None
        t0 = float(np.median(times[base_key])) if base_key is not None else math.nan
        benchmark = _first(column_of(group, "benchmark", None))
        diffs = _differences(used, base, kind, scaling, _differing_of(grouped, (series, kind), used)) if base is not None else {}
        on_curve = {}  # per resource count, the topology its curve point has: the fewest nodes
        for r, topo in sorted({(int(r), str(t)) for r, t in zip(group["resources"], group["_topology"])}, key=lambda k: (k[0], checks.topology_nodes(k[1]))):
            on_curve.setdefault(r, topo)
        points = group[[c for c in ("resources", "_topology", "_reason", "time_s", "samples") if c in group]]  # a point's own columns only
        for (r, topo), g in points.groupby(["resources", "_topology"], sort=True):
            t = times.get((int(r), str(topo)), np.array([]))
            left = Counter(g["_reason"][g["_reason"] != ""])
            median = float(np.median(t)) if t.size else math.nan
            p_rel = r / base if base is not None else math.nan
            s = float(speedup(t0, median))
            strong = scaling != "weak"
            note = ""
            measured = s / p_rel if strong else s
            if checks.efficiency_verdict(measured) == "implausible":  # two machines, not a curve
                pair = _differing(used[used["resources"].isin([base, r])])
                note = checks.implausible_note(measured, pair, setting_label, base, int(r), lambda n, k=kind: unit(k, n))
                s = math.nan
            samples = numbers(column_of(g[g["_reason"] == ""], "samples"))
            rate = samples / numbers(g[g["_reason"] == ""]["time_s"]) if samples.size else samples
            rate = rate[np.isfinite(rate)]
            records.append({
                "series": series, "benchmark": benchmark, "resource_kind": kind, "resources": int(r),
                "runs": int(t.size), "runs_left_out": int(sum(left.values())),
                "left_out": ", ".join(f"{n} {why}" for why, n in sorted(left.items())),
                "time_s_median": median, "time_s_min": float(t.min()) if t.size else math.nan, "time_s_max": float(t.max()) if t.size else math.nan,
                "speedup": s, "ideal_speedup": p_rel if strong else 1.0,
                "efficiency": s / p_rel if strong else s,
                "karp_flatt": float(karp_flatt(s, p_rel)) if strong else math.nan,
                "scaled_speedup": p_rel * s if not strong else math.nan,
                "gustafson_serial": float(gustafson_serial(p_rel * s, p_rel)) if not strong else math.nan,
                "throughput": float(np.median(rate)) if rate.size else math.nan,
                "resource_seconds": r * median,
                "scaling": scaling, "scaling_from": scaling_from,
                "baseline_resources": base if base is not None else pd.NA,
                "differs": diffs.get(int(r), ""),
                "topology": topo, "curve": on_curve.get(int(r)) == topo, "speedup_note": note,
            })  # fmt: skip
    out = pd.DataFrame.from_records(records, columns=SUMMARY_COLUMNS)
    out["baseline_resources"] = out["baseline_resources"].astype("Int64")
    out.attrs["baseline"] = baseline
    return out


def _on_curve(rows: pd.DataFrame) -> pd.DataFrame:
    """The points of a series' curve: one per resource count (a second topology is its own
    point in the table, not a step of the curve)."""
    return rows[rows["curve"].fillna(True).astype(bool)] if "curve" in rows else rows


def _first(values: pd.Series) -> object:
    known = values.dropna()
    return known.iloc[0] if len(known) else None


def fits(runs: pd.DataFrame, summary: pd.DataFrame, *, n_boot: int | None = None, seed: int = 0, grouped: Grouped | None = None) -> pd.DataFrame:
    """Per series: the Amdahl fit (bootstrap over the used runs) and the Karp-Flatt trend."""
    records = []
    groups = groups_of(runs, grouped) if len(runs) else {}
    for (series, kind), rows in summary.groupby(KEYS, sort=True):
        rows = _on_curve(rows)
        group = groups.get((series, kind))
        times = None
        if group is not None:
            used = group[(group["_reason"] == "") & pd.notna(group["resources"])]
            times = {int(r): numbers(g["time_s"]).tolist() for r, g in used.groupby("resources")}
        kwargs = {"n_boot": n_boot} if n_boot is not None else {}
        fit = amdahl_fit(rows, times, seed=seed, **kwargs)
        records.append({
            "series": series, "resource_kind": kind, "serial_fraction": fit.serial_fraction, "low": fit.low, "high": fit.high,
            "n_points": fit.n_points, "r_squared": fit.r_squared, "max_speedup": fit.max_speedup, "note": fit.note,
            "karp_flatt_trend": karp_flatt_trend(rows), "fit": fit.text(),
        })  # fmt: skip
    return pd.DataFrame.from_records(records, columns=["series", "resource_kind", "serial_fraction", "low", "high", "n_points", "r_squared", "max_speedup", "note", "karp_flatt_trend", "fit"])


# --- did only the resources change? -------------------------------------------------------


def setting_label(column: str) -> str:
    """`set_global_batch_size` -> `global batch size`."""
    return column.removeprefix("set_").replace("_", " ")


def _text(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else format(float(value), "g")
    return str(value)


def _known(value: object) -> bool:
    return value is not None and value is not pd.NA and not (isinstance(value, float) and math.isnan(value))


def _differing(runs: pd.DataFrame) -> dict[str, dict[int, list[str]]]:
    """The settings whose known values are not one and the same across all the configurations:
    per setting, the distinct known values of each configuration, as text. The distinct rows of
    (resources, settings) are found by pandas first: thousands of runs share a handful."""
    columns = settings_columns(runs)
    if not columns:
        return {}
    try:
        rows = runs[["resources", *columns]].drop_duplicates()
    except TypeError:  # a list or dict from a JSON table cannot be hashed: go through every run
        rows = runs[["resources", *columns]]
    found: dict[str, dict[object, set[str]]] = {c: {} for c in columns}
    for r, *values in rows.itertuples(index=False, name=None):
        if not _known(r):
            continue  # as groupby drops a missing key
        for column, v in zip(columns, values):
            known = found[column].setdefault(r, set())
            if _known(v):
                known.add(_text(v))
    out = {}
    for column, by_resources in found.items():
        if len({v for vs in by_resources.values() for v in vs}) > 1:
            out[column] = {int(r): sorted(by_resources[r]) for r in sorted(by_resources)}
    return out


FOLLOWERS = {"strong": {"set_local_batch_size": -1}, "weak": {"set_global_batch_size": 1}}
"""Settings that change with the resources by the kind's own definition: under strong scaling
(global batch constant) the local batch is global / p; under weak scaling the global batch is
local * p. Their change is the scaling itself, not a second change."""


def _follows(used: pd.DataFrame, column: str, scaling: str) -> bool:
    """Whether the setting changes exactly as the resources do for this kind of scaling."""
    power = FOLLOWERS.get(scaling, {}).get(column)
    if power is None:
        return False
    values = pd.Series(numbers(used[column]), index=used.index).groupby(used["resources"]).median()
    if not np.all(np.isfinite(values.to_numpy()) & (values.to_numpy() > 0)):
        return False
    scaled = values.to_numpy() / values.index.to_numpy(float) ** power
    return bool(np.all(np.abs(scaled / scaled[0] - 1.0) <= WORK_TOLERANCE))


def _differing_of(grouped: Grouped | None, key: tuple[str, str], used: pd.DataFrame) -> dict[str, dict[int, list[str]]]:
    """`_differing(used)` of one group's used runs, found once per `grouped`."""
    if grouped is None:
        return _differing(used)
    if key not in grouped.differing:
        grouped.differing[key] = _differing(used)
    return grouped.differing[key]


def _differences(used: pd.DataFrame, base: int, kind: str, scaling: str, differing: dict[str, dict[int, list[str]]]) -> dict[int, str]:
    """Per configuration: `global batch size 2048 (256 at 8 GPUs)` for each setting that differs
    from the baseline's (`differing`, not those that follow the resources by the kind of scaling)."""
    notes: dict[int, list[str]] = {}
    for column, values in differing.items():
        if _follows(used, column, scaling):
            continue
        at_base = values.get(base, [])
        for r, vs in values.items():
            if r != base and vs and at_base and vs != at_base:
                notes.setdefault(r, []).append(f"{setting_label(column)} {'|'.join(vs)} ({'|'.join(at_base)} at {base} {unit(kind, base)})")
    return {r: "; ".join(v) for r, v in notes.items()}


def _usedsettings_columns(runs: pd.DataFrame, grouped: Grouped | None) -> Iterator[tuple[str, str, pd.DataFrame, dict[str, dict[int, list[str]]]]]:
    """Per series: (series, resource_kind, its used runs with whole resource counts, the
    settings that differ between its configurations)."""
    for (series, kind), group in groups_of(runs, grouped).items():
        used = group[(group["_reason"] == "") & pd.notna(group["resources"])]
        if used.empty:
            continue
        used = used.assign(resources=used["resources"].astype(int))
        yield series, kind, used, _differing_of(grouped, (series, kind), used)


def _diff_rows(series: str, kind: str, differing: dict[str, dict[int, list[str]]]) -> list[dict[str, object]]:
    return [{"series": series, "resource_kind": kind, "setting": setting_label(column), "resources": r, "value": " | ".join(vs) if vs else "n/a"}
            for column, values in differing.items() for r, vs in values.items()]


def config_diff(runs: pd.DataFrame, *, grouped: Grouped | None = None) -> pd.DataFrame:
    """Long table of the settings that differ between the configurations of a series (the
    used runs): series, resource_kind, setting, resources, value ("n/a" when unknown there,
    `a | b` when the runs of one configuration disagree)."""
    if runs is None or runs.empty:
        return pd.DataFrame(columns=DIFF_COLUMNS)
    records = [row for series, kind, _used, differing in _usedsettings_columns(runs, grouped) for row in _diff_rows(series, kind, differing)]
    return pd.DataFrame.from_records(records, columns=DIFF_COLUMNS)


def config_diff_wide(diff: pd.DataFrame, series: str) -> pd.DataFrame:
    """One series of `config_diff()` as setting x resources."""
    rows = diff[diff["series"] == series]
    if rows.empty:
        return pd.DataFrame()
    return rows.pivot(index="setting", columns="resources", values="value")


def diff_sentences(runs: pd.DataFrame, summary: pd.DataFrame | None = None, *, grouped: Grouped | None = None) -> dict[str, str]:
    """Per series, one sentence: which settings changed besides the resources, e.g.
    `global batch size 256 at 8 GPUs, 2048 at 64 GPUs: not a pure strong-scaling comparison`;
    `only the GPUs changed (compared: ...)`; or that the logs name no settings."""
    return settings_changes(runs, summary, grouped=grouped)[0]


def settings_changes(runs: pd.DataFrame, summary: pd.DataFrame | None = None, *, grouped: Grouped | None = None) -> tuple[dict[str, str], pd.DataFrame]:
    """`diff_sentences` and `config_diff` together, each series' differing settings found once."""
    summary = summarize(runs, grouped=grouped) if summary is None else summary
    scaling = {(s, k): (v, f) for s, k, v, f in summary[["series", "resource_kind", "scaling", "scaling_from"]].drop_duplicates(KEYS).itertuples(index=False)}
    out: dict[str, str] = {}
    records: list[dict[str, object]] = []
    if runs is None or runs.empty:
        return out, pd.DataFrame(columns=DIFF_COLUMNS)
    for series, kind, used, differing in _usedsettings_columns(runs, grouped):
        records += _diff_rows(series, kind, differing)
        known = [c for c in settings_columns(used) if used[c].notna().any()]
        if not known:
            out[series] = f"no settings in the logs: cannot tell whether only the {unit(kind)} changed"
            continue
        if not differing:
            out[series] = f"only the {unit(kind)} changed (compared: {', '.join(setting_label(c) for c in known)})"
            continue
        how, _ = scaling.get((series, kind), ("unknown", ""))
        parts, follow = [], []
        for column, values in differing.items():
            shown = ", ".join(f"{'|'.join(vs) if vs else 'n/a'} at {r} {unit(kind, r)}" for r, vs in values.items())
            (follow if _follows(used, column, how) else parts).append(f"{setting_label(column)} {shown}")
        following = f"{'; '.join(follow)}: follows the {unit(kind)}, as {how} scaling means" if follow else ""
        if parts:
            out[series] = f"{'; '.join(parts)}: not a pure {'weak' if how == 'weak' else 'strong'}-scaling comparison" + (f" ({following})" if following else "")
        else:
            out[series] = following
    return out, pd.DataFrame.from_records(records, columns=DIFF_COLUMNS)


# --- did the result hold? -----------------------------------------------------------------


def quality_check(runs: pd.DataFrame, baseline: int | None = None, *, grouped: Grouped | None = None) -> pd.DataFrame:
    """Per (series, resource_kind, resources): the final validation quality (median, min,
    max) and epochs (to converge) of the finished runs, and whether each differs from the
    baseline's by more than the run-to-run spread (Mann-Whitney, two-sided). The baseline is
    the smallest configuration with a finished run that has a quality, unless `baseline` is
    given. Runs that finished without converging count, and are counted in `not_converged`:
    a result that needs them left out did not hold."""
    if runs is None or runs.empty:
        return pd.DataFrame(columns=QUALITY_COLUMNS)
    records = []
    for (series, kind), group in groups_of(runs, grouped).items():
        group = group[pd.notna(group["resources"])]
        if group.empty:
            continue
        # one array per column, the configurations picked by masks: a pandas selection per
        # configuration costs more than the arithmetic
        resources = group["resources"].astype(int).to_numpy()
        finished = (column_of(group, "status", "ok").fillna("ok").astype(str) == "ok").to_numpy()
        quality, epochs = numbers(column_of(group, "quality")), numbers(column_of(group, "epochs"))
        converged = column_of(group, "converged", pd.NA)
        false, true = false_mask(converged).to_numpy(), true_mask(converged).to_numpy()
        configs = sorted({int(r) for r in resources})
        with_quality = sorted({int(r) for r in resources[finished & ~np.isnan(quality)]})
        base = (baseline if baseline in with_quality else None) if baseline is not None else (with_quality[0] if with_quality else None)
        name = _first(column_of(group, "quality_name", None)[finished])
        higher = _first(column_of(group, "quality_higher_is_better", pd.NA)[finished])
        at = {r: resources == r for r in configs}
        q_of = {r: quality[finished & at[r] & ~np.isnan(quality)] for r in configs}
        # epochs to converge: of the finished runs that did not fail to converge
        e_of = {r: epochs[finished & ~false & at[r] & ~np.isnan(epochs)] for r in configs}
        where = f"{base} {unit(kind, base)}" if base is not None else ""
        for r in configs:
            q, e = q_of[r], e_of[r]
            # an aborted run is not among the finished ones, but it did not converge all the same
            failed = at[r] & false
            if base is None:
                q_p, q_verdict = math.nan, "n/a: no baseline with a quality"
                e_p, e_verdict = math.nan, "n/a: no baseline"
            elif r == base:
                q_p, q_verdict, e_p, e_verdict = math.nan, "baseline", math.nan, "baseline"
            else:
                q_p, q_verdict = compare(q, q_of[base], higher, "quality", where)
                e_p, e_verdict = compare(e, e_of[base], False, "epochs to converge", where)
            q0 = float(np.median(q_of[base])) if base is not None and q_of[base].size else math.nan
            records.append({
                "series": series, "resource_kind": kind, "resources": r, "quality_name": name, "runs": int((finished & at[r]).sum()),
                "not_converged": int(failed.sum()),
                "convergence": _convergence(int(at[r].sum()), int((at[r] & true).sum()), group[failed] if failed.any() else group.iloc[:0]),
                "quality_median": float(np.median(q)) if q.size else math.nan, "quality_min": float(q.min()) if q.size else math.nan,
                "quality_max": float(q.max()) if q.size else math.nan,
                "epochs_median": float(np.median(e)) if e.size else math.nan, "epochs_min": float(e.min()) if e.size else math.nan,
                "epochs_max": float(e.max()) if e.size else math.nan,
                "baseline_resources": base if base is not None else pd.NA,
                "quality_difference": (float(np.median(q)) - q0) if q.size else math.nan,
                "quality_p_value": q_p, "quality_verdict": q_verdict, "epochs_p_value": e_p, "epochs_verdict": e_verdict,
            })  # fmt: skip
    out = pd.DataFrame.from_records(records, columns=QUALITY_COLUMNS)
    out["baseline_resources"] = out["baseline_resources"].astype("Int64")
    return out


def _convergence(runs: int, converged: int, failed: pd.DataFrame) -> str:
    """`4 converged, 1 stopped at 0.75794 (aborted)` for one configuration's `runs` runs, of
    which `converged` said they converged and `failed` (rows) that they did not;
    `convergence not logged` when no run says."""
    if converged == 0 and failed.empty:
        return "convergence not logged"
    parts = [f"{converged} converged"] if converged else []
    quality = numbers(column_of(failed, "quality"))
    targets = numbers(column_of(failed, "quality_target"))
    higher = column_of(failed, "quality_higher_is_better", pd.NA)
    status = column_of(failed, "status", "ok").fillna("ok").astype(str)
    stops = [_stop(q, t, h) for q, t, h in zip(quality, targets, higher)]
    for why in sorted(set(status)):
        mine = [stop for stop, st in zip(stops, status) if st == why]
        how = "finished unconverged" if why == "ok" else why
        parts.append(f"{len(mine)} stopped at {', '.join(mine)} ({how})")
    unknown = runs - converged - len(failed)
    if unknown:
        parts.append(f"{unknown} not said")
    return ", ".join(parts)


def _stop(quality: float, target: float, higher: object) -> str:
    """`0.75794 < 0.759 target` where the target is known and missed, else the quality alone."""
    if not math.isfinite(quality):
        return "an unknown quality"
    missed = isinstance(higher, (bool, np.bool_)) and math.isfinite(target) and (quality < target if higher else quality > target)
    return f"{quality:.5g} {'<' if higher else '>'} {target:g} target" if missed else f"{quality:.5g}"


# --- several series -----------------------------------------------------------------------


def series_overview(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per series, to set several side by side (threads on one node against processes
    across nodes, CPU against GPU): configurations, baseline, best median time and where,
    largest speedup, scaling, and the best time relative to the fastest series of the same
    benchmark (NaN when the benchmark is unknown)."""
    columns = ["series", "benchmark", "resource_kind", "configs", "baseline_resources", "best_time_s", "best_at", "max_speedup", "scaling", "vs_fastest"]
    records = []
    for (series, kind), rows in summary.groupby(KEYS, sort=True):
        times = rows["time_s_median"].to_numpy(float)
        best = int(np.nanargmin(times)) if np.isfinite(times).any() else None
        s = rows["speedup"].to_numpy(float)
        records.append({
            "series": series, "benchmark": _first(rows["benchmark"]), "resource_kind": kind, "configs": int(np.isfinite(times).sum()),
            "baseline_resources": rows["baseline_resources"].iloc[0], "best_time_s": times[best] if best is not None else math.nan,
            "best_at": int(rows["resources"].iloc[best]) if best is not None else pd.NA,
            "max_speedup": float(np.nanmax(s)) if np.isfinite(s).any() else math.nan, "scaling": rows["scaling"].iloc[0],
        })  # fmt: skip
    out = pd.DataFrame.from_records(records, columns=columns[:-1])
    fastest = out.groupby(out["benchmark"].fillna("\0unknown"))["best_time_s"].transform("min")
    out["vs_fastest"] = np.where(out["benchmark"].notna(), out["best_time_s"] / fastest, np.nan)
    return out[columns]


def plot_series(summary: pd.DataFrame, y: str = "speedup") -> list[tuple[str, list[int], list[float]]]:
    """(label, resources, values) per series, to draw several series in one plot; the label is
    `series (unit)`. Points whose value is NaN are left out of that series."""
    out = []
    for (series, kind), rows in summary.groupby(KEYS, sort=True):
        rows = _on_curve(rows).sort_values("resources")
        values = rows[y].to_numpy(float)
        ok = np.isfinite(values)
        if ok.any():
            out.append((f"{series} ({unit(kind)})", rows["resources"].to_numpy()[ok].astype(int).tolist(), values[ok].tolist()))
    return out


# --- findings -----------------------------------------------------------------------------


def _sources(rows: pd.DataFrame) -> str:
    names = sorted({str(s) for s in column_of(rows, "source", None).dropna()})
    return names[0] if len(names) == 1 else ""


def _point_findings(series: str, kind: str, rows: pd.DataFrame) -> list[Finding]:
    """Per point: efficiency above 100 % (said), above 150 % (a grouping error, with what
    differs), and a resource count measured on several topologies."""
    out = []
    for r, e, note in zip(rows["resources"], rows["efficiency"].to_numpy(float), column_of(rows, "speedup_note", "").fillna("")):
        at = f"{int(r)} {unit(kind, r)}"
        if note:
            out.append(Finding("error", "grouping", f"{series}: at {at}: {note}"))  # the note names the keys that split it
        elif checks.efficiency_verdict(e) == "superlinear":
            out.append(Finding("warning", "superlinear", f"{series}: efficiency {checks.percent(e, checks.SUPERLINEAR)} at {at}, above {checks.percent(checks.SUPERLINEAR)}: superlinear: caches, or a slow baseline?"))
    if "topology" in rows:
        for r, points in rows[rows["topology"].fillna("") != ""].groupby("resources", sort=True):
            shown = " and ".join(f"{t} ({n} run{'s' if n != 1 else ''})" for t, n in zip(points["topology"], points["runs"]))
            out.append(Finding("warning", "topology", f"{series}: {int(r)} {unit(kind, r)} were run on {shown}: different machines, kept as separate points; "
                                                      f"the curve, fit and plots use {points['topology'].iloc[0]}, the accuracy check and config diff pool them"))
    return out


def findings(runs: pd.DataFrame, summary: pd.DataFrame, baseline: int | None = None, sentences: dict[str, str] | None = None, *,
             grouped: Grouped | None = None) -> list[Finding]:
    """What the reader of a scaling table must know: runs left out and why, a named baseline
    with no usable run, series with one configuration, configurations with one run,
    speedup that falls as resources grow, settings that changed besides the resources,
    efficiency under 75 %, and series whose strong/weak kind could not be told. `sentences`:
    `diff_sentences` of the same runs and summary, where they are made already."""
    baseline = summary.attrs.get("baseline") if baseline is None else baseline
    out: list[Finding] = []
    if runs is None or runs.empty:
        return out
    for (series, kind), group in groups_of(runs, grouped).items():
        left = group[(group["_reason"] != "") & group["resources"].notna()]
        for (why, r), rows in left.groupby(["_reason", "resources"], sort=True, dropna=False):
            n = len(rows)
            at = f"{int(r)} {unit(kind, r)}" if pd.notna(r) else "unknown resources"
            out.append(Finding("warning", "left-out", f"{series}: {n} run{'s' if n > 1 else ''} at {at} left out ({why})", _sources(rows), count=n))
        if group["resources"].isna().any():
            rows = group[group["resources"].isna()]
            out.append(Finding("warning", "left-out", f"{series}: {len(rows)} run(s) with unknown resources left out", _sources(rows), count=len(rows)))
    sentences = diff_sentences(runs, summary, grouped=grouped) if sentences is None else sentences
    for (series, kind), rows in summary.groupby(KEYS, sort=True):
        rows = rows.sort_values("resources")
        out.extend(_point_findings(series, kind, rows))
        rows = _on_curve(rows)
        used = rows[rows["runs"] > 0]
        name = f"{series}"
        if baseline is not None and rows["baseline_resources"].isna().all():
            out.append(Finding("error", "no-baseline", f"{name}: no usable run at the baseline {baseline} {unit(kind, baseline)}: speedup not computed"))
        elif rows["baseline_resources"].isna().all():
            out.append(Finding("error", "no-baseline", f"{name}: no usable run at all: speedup not computed"))
        if len(used) == 1:
            out.append(Finding("info", "single-config", f"{name}: one configuration ({int(used['resources'].iloc[0])} {unit(kind, used['resources'].iloc[0])}): no scaling to compute"))
        single = used[used["runs"] == 1]["resources"].tolist()
        if single:
            out.append(Finding("info", "single-run", f"{name}: one run at {', '.join(str(int(r)) for r in single)} {unit(kind)}: no run-to-run spread", count=len(single)))
        weak = (rows["scaling"] == "weak").all()
        curve = used[np.isfinite(used["speedup"].to_numpy(float))]
        s = curve["scaled_speedup" if weak else "speedup"].to_numpy(float)
        p = curve["resources"].to_numpy(int)
        for i in np.flatnonzero(np.diff(s) < 0):
            out.append(Finding("warning", "speedup-falls", f"{name}: {'scaled ' if weak else ''}speedup falls from {s[i]:.3g} at {p[i]} to {s[i + 1]:.3g} at {p[i + 1]} {unit(kind)}"))
        low = curve[curve["efficiency"].to_numpy(float) < EFFICIENCY_THRESHOLD]
        if len(low):
            shown = ", ".join(f"{checks.percent(e, EFFICIENCY_THRESHOLD)} at {int(r)}" for e, r in zip(low["efficiency"], low["resources"]))
            how = "" if not (rows["scaling"] == "unknown").all() else " (read as strong scaling: the kind is unknown)"
            out.append(Finding("warning", "low-efficiency", f"{name}: efficiency under {checks.percent(EFFICIENCY_THRESHOLD)}: {shown} {unit(kind)}{how}", count=len(low)))
        if len(used) > 1 and (rows["scaling"] == "unknown").all():
            out.append(Finding("info", "scaling-kind", f"{name}: strong or weak scaling cannot be told ({rows['scaling_from'].iloc[0]}); speedup read as strong scaling"))
        sentence = sentences.get(series, "")
        if "not a pure" in sentence:
            out.append(Finding("warning", "settings-differ", f"{name}: {sentence}"))
    return sort_findings(out)
