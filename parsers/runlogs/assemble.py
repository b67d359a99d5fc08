"""Provides how the runs read from many files become the runs and curves tables: each file read
by the parser of its kind (`collect`), then every run's resources resolved from its layers, a
log printed once per rank counted once, the kind each benchmark scales over and its series
(`assemble`). `read_one` is one file through the same steps: what a kind module's `read` does.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.scaling import series as scaling_series
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.files import read_text
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.runlogs.discover import Candidate, candidates
from gpuscope.parsers.runlogs.resources import Script, beside_script, compile_resources_pattern, name_counts, resolve, system_counts
from gpuscope.parsers.runlogs.run import CURVE_COLUMNS, RUN_COLUMNS, Counts, Run, RunsResult, benchmark_name, put

Parse = Callable[[str, str, "Path | None", list[Finding]], "list[Run] | None"]
"""A kind's parser: (text, label, path, findings) -> its runs, [] for none, None when the text is not of its kind."""
Chooser = Callable[[str, Path], Parse]
"""(text, path) -> the parser for that file."""


def collect(found: Sequence[Candidate], parser: Chooser, findings: list[Finding]) -> list[tuple[Run, tuple[str, ...], bool]]:
    """The runs of every candidate file, read by the parser `parser` picks for its text."""
    collected: list[tuple[Run, tuple[str, ...], bool]] = []
    not_logs: list[str] = []
    for item in found:
        path, label, parts, explicit = item.path, item.label, item.parts, item.explicit
        try:
            runs = _read_file(path, label, explicit, parser, findings)
        except Exception as exc:  # noqa: BLE001 - one bad file never hides the others; the tests look for this kind
            findings.append(Finding("error", "reader-bug", f"could not be read ({type(exc).__name__}: {exc}); please report this file", label))
            continue
        if runs is None:
            if explicit:
                findings.append(Finding("warning", "not-a-run-log", "no run found: not a seed, MLPerf, ReFrame, sacct or (resources, time) table file", label))
            elif path.suffix.lower() not in fmt.SCRIPT_SUFFIXES + (".json",):
                not_logs.append(label)
            continue
        if not runs and explicit:
            continue
        for run in runs:
            if run.path is None:
                run.path = path
            collected.append((run, parts, explicit))
    if not_logs:
        shown = ", ".join(not_logs[:5]) + (f" and {len(not_logs) - 5} more" if len(not_logs) > 5 else "")
        findings.append(Finding("info", "not-a-run-log", f"{len(not_logs)} file(s) in the folders hold no run: {shown}", "", None, len(not_logs)))
    return collected


def _read_file(path: Path, label: str, explicit: bool, parser: Chooser, findings: list[Finding]) -> list[Run] | None:
    """Runs of one file; None when it is not a run log at all."""
    text, problems = read_text(path, label)
    if text is None:
        if explicit:
            findings.extend(problems)
            return []
        if not any(p.kind in ("empty", "binary") for p in problems):
            findings.extend(problems)  # a folder's images and empty files are just not run logs
        return None
    findings.extend(problems)
    return parser(text, path)(text, label, path, findings)


def pattern_of(resources_pattern: str | None, findings: list[Finding]) -> re.Pattern[str] | None:
    """The compiled `--resources` pattern; a bad one is a finding."""
    if resources_pattern:
        try:
            return compile_resources_pattern(resources_pattern)
        except (ValueError, re.error) as exc:
            findings.append(Finding("error", "bad-pattern", f"--resources {resources_pattern!r}: {exc}", ""))
    return None


def read_one(path: Path, parse: Parse) -> FileRead:
    """One file read by `parse`, its runs given resources as in a study (the registry's read)."""
    findings: list[Finding] = []
    found = candidates([path], findings)
    got = assemble(collect(found, lambda text, where: parse, findings), findings)
    return FileRead(got.runs, list(got.findings), {"runs": len(got.runs), "curves": got.curves})


def assemble(collected: list[tuple[Run, tuple[str, ...], bool]], findings: list[Finding], *,
             pattern: re.Pattern[str] | None = None, resources_pattern: str | None = None) -> RunsResult:
    """The runs and curves tables of the runs read: each run's resources resolved from its layers
    (`--resources`, the log, its echoes, a job script, systems/NAME.json, sacct by job id, the
    names), a log printed once per rank counted once, the kind each benchmark scales over."""
    # sacct rows are a lookup for logs with the same job id; the rest are runs of their own
    sacct_by_id = {run.job_id: run for run, _p, _e in collected if run.format == "sacct" and run.job_id}
    used_sacct: set[str] = set()
    script_cache: dict[str, list[Script]] = {}
    system_cache: dict[Any, Any] = {}
    rows: list[dict[str, Any]] = []
    by_job: dict[tuple[str, str], dict[str, Any]] = {}
    for run, parts, _explicit in collected:
        if run.format == "sacct":
            continue
        layers: list[Counts] = []
        if pattern is not None and run.path is not None:
            m = pattern.search(run.path.as_posix())
            if m:
                user: Counts = {}
                for kind, value in m.groupdict().items():
                    if kind in fmt.RESOURCE_FIELDS and value is not None:
                        put(user, kind, value, f"--resources {resources_pattern!r} ({m.group(0)})")
                layers.append(user)
            else:
                findings.append(Finding("warning", "no-resources", f"--resources {resources_pattern!r} does not match this path", run.source))
        layers.append(run.counts)
        layers.append(run.echoed)
        if run.format in ("seed002", "seed004") and run.path is not None and ":" not in run.source[len(str(run.path)):]:
            script, script_name = beside_script(run.path, script_cache, findings, run.source)
            layers.append(script)
            if run.benchmark is None and script_name:
                run.benchmark = benchmark_name(script_name)
        system: Counts = {}
        if run.format == "mlperf":
            system = system_counts(run.path, findings, run.source, system_cache)
            for key in [k for k in system if k.startswith("set_")]:
                run.settings[key[4:]] = system.pop(key)[1]
        layers.append(system)
        sacct_run = sacct_by_id.get(run.job_id or "")
        if sacct_run is not None:
            used_sacct.add(sacct_run.job_id or "")
            layers.append(sacct_run.counts)
            if run.status == "ok" and sacct_run.status not in ("ok", "no-timing"):
                run.status = sacct_run.status
            if run.benchmark is None:
                run.benchmark = sacct_run.benchmark
        layers.append(name_counts(parts))
        layers.append(run.fallback_counts)
        rows.append({"run": run, "counts": resolve(layers)})
    for run, _parts, _e in collected:
        if run.format == "sacct" and run.job_id not in used_sacct:
            rows.append({"run": run, "counts": resolve([run.counts])})
    for entry in rows:  # a printed 0 (a time rounded away, or Elapsed 00:00:00) is no time to divide by
        run = entry["run"]
        if not (run.time_s > 0):
            if run.time_s == 0:
                findings.append(Finding("warning", "zero-time", f"{run.time_from or 'the time'} is 0: below what the log can resolve, so unknown", run.source))
            run.time_s, run.time_from = math.nan, ""
            if run.status == "ok":
                run.status = "no-timing"

    # a log printed once per rank into separate files: same job id, same format -> one run
    merged: list[dict[str, Any]] = []
    for entry in rows:
        run = entry["run"]
        if run.job_id and run.format in ("seed002", "seed004") and ":" not in run.source:
            key = (run.format, run.job_id)
            if key in by_job:
                kept = by_job[key]
                kept["copies"] += 1
                if math.isfinite(run.time_s) and not (run.time_s <= kept["run"].time_s):
                    kept["run"].time_s, kept["run"].time_from = run.time_s, f"{run.time_from} of {run.source}"
                continue
            entry["copies"] = 1
            by_job[key] = entry
        merged.append(entry)
    for entry in merged:
        if entry.get("copies", 1) > 1:
            findings.append(Finding("info", "ranks", f"job {entry['run'].job_id} was logged by {entry['copies']} files (one per rank): counted once, the slowest time kept", entry["run"].source, None, entry["copies"]))

    # the kind each benchmark scales over
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for entry in merged:
        groups.setdefault((entry["run"].format, entry["run"].benchmark), []).append(entry)
    user_kinds = [k for k in fmt.KIND_PREFERENCE if pattern is not None and f"(?P<{k}>" in pattern.pattern]
    table: list[tuple[Run, dict[str, tuple[int, str] | None], str, str | None]] = []  # (run, counts, series, kind), in table order
    for (form, bench), entries in groups.items():
        kind = None
        for candidate in user_kinds + list(fmt.KIND_PREFERENCE):
            values = {e["counts"][candidate][0] for e in entries if e["counts"][candidate]}
            if len(values) > 1:
                kind = candidate
                break
        if kind is None:
            kind = next((k for k in user_kinds + list(fmt.KIND_PREFERENCE) if any(e["counts"][k] for e in entries)), None)
        series = f"{bench or form} ({kind or 'unknown'})"
        for entry in entries:
            run, counts = entry["run"], entry["counts"]
            if not kind or counts.get(kind) is None:
                findings.append(Finding("warning", "no-resources", f"no {kind or 'resource'} count in the log, a job script beside it, the file name or --resources: the run is kept without one", run.source))
            table.append((run, counts, series, kind))
    runs_frame = _runs_table(table)
    curves = _curves_table(table, runs_frame)
    findings.extend(_series_findings(runs_frame))
    return RunsResult(runs_frame, curves, findings)


def _runs_table(table: list[tuple[Run, dict[str, tuple[int, str] | None], str, str | None]]) -> pd.DataFrame:
    """The runs table, one list per column and then one DataFrame (not a dict per row), with
    the series named by `metrics.scaling.series` (one machine per series)."""
    if not table:
        return _empty_runs()
    runs = [run for run, _counts, _series, _kind in table]
    chosen = [counts.get(kind) if kind else None for _run, counts, _series, kind in table]
    columns: dict[str, list[Any]] = {
        "source": [run.source for run in runs], "format": [run.format for run in runs],
        "series": [series for _run, _counts, series, _kind in table], "benchmark": [run.benchmark for run in runs],
        "resource_kind": [kind or "unknown" for _run, _counts, _series, kind in table],
        "resources": [c[0] if c else pd.NA for c in chosen], "resources_from": [c[1] if c else "" for c in chosen],
    }
    for kind in fmt.RESOURCE_FIELDS:
        columns[kind] = [counts[kind][0] if counts[kind] else pd.NA for _run, counts, _series, _kind in table]
    for name in ("time_s", "time_from", "status", "converged", "quality_name", "quality", "quality_higher_is_better",
                 "quality_target", "samples", "label", "epoch_time_s"):
        columns[name] = [getattr(run, name) for run in runs]
    columns["epochs"] = [run.epochs if run.epochs is not None else pd.NA for run in runs]
    frame = _typed(pd.DataFrame({name: columns[name] for name in RUN_COLUMNS}))
    settings = pd.DataFrame([run.settings for run in runs])  # NaN where a run has no such setting
    if len(settings.columns):
        frame = pd.concat([frame, settings[sorted(settings.columns)].add_prefix("set_")], axis=1)
    return scaling_series.assign(frame)


def _curves_table(table: list[tuple[Run, dict[str, tuple[int, str] | None], str, str | None]], runs: pd.DataFrame) -> pd.DataFrame:
    """Every run's per-epoch values, with the source, series and resources of its row in `runs`
    (the last row of that source: rows and runs are in the same order), taken from that row's
    columns by one take each rather than a Python string per point converted again."""
    row_of = {source: i for i, source in enumerate(runs["source"].tolist())} if len(runs) else {}
    rows: list[int] = []  # per point, its run's row in `runs`
    columns: dict[str, list[Any]] = {"epoch": [], "metric": [], "value": []}
    for run, _counts, _series, _kind in table:
        i = row_of.get(run.source)
        if not run.curve or i is None:
            continue
        rows += [i] * len(run.curve)
        epochs, metrics, values = zip(*run.curve)
        columns["epoch"] += epochs
        columns["metric"] += metrics
        columns["value"] += values
    if not rows:  # no rows: object columns, as ever
        curves = pd.DataFrame(columns=list(CURVE_COLUMNS))
        curves["resources"] = pd.array([], dtype="Int64")
    else:
        at = np.array(rows)
        curves = pd.DataFrame({**{name: runs[name].array.take(at) for name in ("source", "series", "resources")}, **columns})[list(CURVE_COLUMNS)]
    curves["epoch"] = curves["epoch"].astype("int64")
    curves["value"] = curves["value"].astype(float)
    return curves


def _series_findings(runs: pd.DataFrame) -> Iterable[Finding]:
    """No usable run, or a configuration with a single run: no speedup, or no spread. (One
    configuration only is the analysis's to say: metrics.scaling's `single-config`.)"""
    if runs.empty:
        return []
    out = []
    for series, group in runs.groupby("series", sort=True):
        usable = group[group["status"].eq("ok") & group["time_s"].notna() & group["resources"].notna()]
        counts = usable.groupby("resources").size()
        kind = group["resource_kind"].iloc[0]
        if len(counts) == 0:
            out.append(Finding("warning", "no-usable-run", f"series {series}: no finished run with a time and a {kind} count", ""))
        singles = [int(r) for r, n in counts.items() if n == 1]
        if singles and len(counts) > 1:
            out.append(Finding("info", "single-run", f"series {series}: one run only at {', '.join(map(str, singles))} {kind}: no spread there", "", None, len(singles)))
    return out


def _empty_runs() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in RUN_COLUMNS})
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    for c in ("resources", "nodes", "gpus", "threads", "processes", "epochs"):
        frame[c] = pd.array(frame[c].tolist(), dtype="Int64")
    for c in ("time_s", "quality", "samples", "epoch_time_s"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(float)
    for c in ("converged", "quality_higher_is_better"):
        frame[c] = pd.array([None if v is pd.NA or v is None else bool(v) for v in frame[c].tolist()], dtype="boolean")
    return frame
