"""Provides `ScalingModel`: runs read from job logs and every scaling table derived from them.

Built once (in the screen's worker thread, or by `gpuscope scaling --format`) by `build_model`:
the analysis of `metrics.scaling` (speedup, efficiency, Karp-Flatt, Amdahl fits, settings that
changed, whether the result held) as `ResultTable`s, so the screen, its export and the printed
report show the same tables. Every series stays apart; `series=` picks one for a view.
Runs are numbered (`#1`, `#2`, ...) in the runs table's order, so a compare view, a plot legend
and the table name a run the same short way instead of by its long path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.scaling import analysis as scaling
from gpuscope.metrics.scaling import series as scaling_series
from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.magma.stats import findings_table
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.parsers.runlogs.read import RunsResult, read_runs

ALL = "all"
"""The series choice that shows every series together."""
NA = "n/a"
RUN_COLUMNS = [
    Column("run", "#"), Column("series"), Column("resources"), Column("time_s", "time (s)", ".2f", NA),
    Column("time_per_epoch_s", "time/epoch (s)", ".2f", NA), Column("quality_name", "quality"), Column("quality", "value", ".4g", NA),
    Column("epochs", "epochs", "", NA), Column("status"), Column("left_out", "left out because"),
    Column("resources_from", "resources from"), Column("source", "file"),
]
SPEEDUP_COLUMNS = [
    Column("series"), Column("resource_kind", "kind"), Column("resources"), Column("topology"), Column("runs"),
    Column("time_s_median", "time (s) median", ".2f", NA), Column("time_s_min", "min", ".2f", NA), Column("time_s_max", "max", ".2f", NA),
    Column("speedup", "speedup", ".2f", NA), Column("ideal_speedup", "ideal", ".3g", NA), Column("efficiency", "efficiency", ".1%", NA),
    Column("karp_flatt", "Karp-Flatt", ".3f", NA), Column("scaled_speedup", "scaled speedup", ".2f", NA),
    Column("gustafson_serial", "Gustafson serial", ".3f", NA), Column("throughput", "samples/s", ".4g", NA),
    Column("runs_left_out", "left out"), Column("left_out", "left out because"), Column("resources_from", "resources from"),
    Column("differs", "other settings that differ"), Column("speedup_note", "speedup n/a because"),
]
OVERVIEW_COLUMNS = [
    Column("series"), Column("benchmark"), Column("resource_kind", "kind"), Column("configs"), Column("baseline_resources", "baseline", "", NA),
    Column("best_time_s", "best time (s)", ".2f", NA), Column("best_at", "at", "", NA), Column("max_speedup", "max speedup", ".2f", NA),
    Column("scaling"), Column("scaling_from", "told from"), Column("serial_fraction", "Amdahl f", ".3f", NA),
    Column("low", "f low", ".3f", NA), Column("high", "f high", ".3f", NA), Column("fit", "Amdahl fit"),
    Column("karp_flatt_trend", "Karp-Flatt trend", "", NA), Column("settings", "did only the resources change?"),
    Column("vs_fastest", "time vs fastest series", ".2f", NA),
]
QUALITY_COLUMNS = [
    Column("series"), Column("resources"), Column("quality_name", "quality"), Column("runs"), Column("not_converged", "not converged"), Column("convergence", "converged?"),
    Column("quality_median", "median", ".4g", NA), Column("quality_min", "min", ".4g", NA), Column("quality_max", "max", ".4g", NA),
    Column("quality_difference", "vs baseline", "+.4g", NA), Column("quality_verdict", "quality held?"),
    Column("epochs_median", "epochs", ".3g", NA), Column("epochs_verdict", "epochs held?"), Column("quality_p_value", "p", ".2g", NA),
    Column("epochs_p_value", "epochs p", ".2g", NA),
]
P_VALUES = ("quality_p_value", "epochs_p_value")
"""Said inside the verdicts already; their own columns only where numbers are read (CSV, JSON)."""
COMPACT_LEAVES_OUT = {"resource_kind", "throughput", "runs_left_out", "benchmark", "serial_fraction", "low", "high", "resources_from"}
"""Columns only CSV and JSON carry: the kind is in the series name, the count of runs left out
in the reasons, the Amdahl fraction and its interval in the fit's sentence, where each count
came from in the runs table (one per run); printed text and the screen keep to what fits a
terminal, series names whole."""
DIFF_COLUMNS = [Column("series"), Column("setting"), Column("resources"), Column("value")]


@dataclass(frozen=True)
class ScalingModel:
    """What was read (`result`) and what `metrics.scaling` made of it."""

    result: RunsResult
    baseline: int | None
    runs: pd.DataFrame
    """The runs, sorted by series, resources and file, with `run` (1, 2, ...) and `left_out`."""
    summary: pd.DataFrame
    fits: pd.DataFrame
    quality: pd.DataFrame
    diff: pd.DataFrame
    sentences: dict[str, str]
    overview: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    """The readers' findings and the analysis's, errors first."""
    split: list[str] = field(default_factory=list)
    """How runs were split into series (`series split by benchmark, ...`), then per series the
    key values its name leaves out."""

    @property
    def empty(self) -> bool:
        return self.runs.empty

    @property
    def series(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.runs["series"].astype(str))) if not self.empty else ()

    def configurations(self) -> dict[str, list[int]]:
        """Per series, the resource counts of its runs (any status), ascending."""
        known = self.runs[self.runs["resources"].notna()]
        return {str(s): sorted(int(r) for r in g["resources"].unique()) for s, g in known.groupby("series", sort=False)}

    def unknown_baseline(self) -> str | None:
        """A message when --baseline matches no run's configuration in any series."""
        if self.baseline is None or self.empty:
            return None
        present = self.configurations()
        if any(self.baseline in counts for counts in present.values()):
            return None
        listed = "; ".join(f"{s}: {', '.join(map(str, counts)) or 'none'}" for s, counts in present.items())
        return f"--baseline {self.baseline} matches no configuration; present: {listed}"

    def _pick(self, frame: pd.DataFrame, series: str) -> pd.DataFrame:
        return frame if series == ALL or frame.empty else frame[frame["series"].astype(str) == series]

    def runs_table(self, series: str = ALL, last: int | None = None) -> ResultTable:
        """Seed 002's BENCHMARK RESULTS SUMMARY: one row per run, where its resources came from.
        `last`: only the last that many runs, with a note saying how many are left out."""
        rows = self._pick(self.runs, series)
        notes = []
        if last is not None and len(rows) > last:
            notes.append(f"the last {last} of {len(rows):,} runs; {len(rows) - last:,} earlier runs are left out here "
                         "(CSV and JSON keep all: --format csv --table runs)")
            rows = rows.iloc[len(rows) - last:]
        return ResultTable.from_frame(rows, "Benchmark results summary", RUN_COLUMNS, notes)

    def speedup_table(self, series: str = ALL, full: bool = True) -> ResultTable:
        """Seed 002's SPEEDUP ANALYSIS: one row per configuration (median of its runs).
        `full`: every column (CSV, JSON), else COMPACT_LEAVES_OUT left out."""
        rows = self._pick(self.summary, series)
        rows = _drop_empty(rows, ("scaled_speedup", "gustafson_serial", "throughput"))
        rows = rows.drop(columns=[c for c in ("topology", "speedup_note") if c in rows and not rows[c].fillna("").astype(str).str.len().any()])
        notes = [f"{s}: {self.sentences[s]}" for s in dict.fromkeys(rows["series"]) if s in self.sentences]
        return ResultTable.from_frame(rows, "Speedup analysis", _columns(SPEEDUP_COLUMNS, full), notes)

    def overview_table(self, series: str = ALL, full: bool = True) -> ResultTable:
        """One row per series: baseline, best time, Amdahl fit, Karp-Flatt trend, settings sentence."""
        notes = self.split[:1] + [line for line in self.split[1:] if series == ALL or line.startswith(f"{series}: ")]
        return ResultTable.from_frame(self._pick(self.overview, series), "Series overview", _columns(OVERVIEW_COLUMNS, full), notes)

    def diff_table(self, series: str = ALL) -> ResultTable:
        rows = self._pick(self.diff, series)
        sentences = [f"{s}: {self.sentences[s]}" for s in (self.series if series == ALL else (series,)) if s in self.sentences]
        if rows.empty:
            sentences.insert(0, "No setting differs between the configurations (or the logs name none).")
        return ResultTable.from_frame(rows, "Config diff", DIFF_COLUMNS, sentences)

    def quality_table(self, series: str = ALL, full: bool = False) -> ResultTable:
        """Final quality and epochs per configuration, and whether they held; `full`: the p-values too."""
        columns = QUALITY_COLUMNS if full else [c for c in QUALITY_COLUMNS if c.key not in P_VALUES]
        return ResultTable.from_frame(self._pick(self.quality, series), "Accuracy check", columns)

    def origins(self, series: str = ALL) -> list[str]:
        """Per series, where each resource count came from: `resnet (gpus): 8 <- systems/...json: ...`."""
        out = []
        rows = self._pick(self.summary, series)
        for name, group in rows.groupby("series", sort=False):
            parts = [f"{int(r)} <- {src}" for r, src in zip(group["resources"], group["resources_from"].fillna("")) if src]
            out.append(f"{name}: {'; '.join(parts) or 'unknown'}")
        return out

    def findings_table(self, limit: int | None = None) -> ResultTable:
        return findings_table(self.findings, limit)

    def run_label(self, run: int) -> str:
        """`#3 (64 GPUs)`: a run's short name in legends and the compare table."""
        row = self.runs[self.runs["run"] == run].iloc[0]
        count = row["resources"]
        if pd.isna(count):
            return f"#{run} (? {scaling.unit(row['resource_kind'])})"
        kind = scaling.unit(row["resource_kind"])
        if count == 1:  # unit() cuts the s: 'processe'
            kind = "process" if kind == "processes" else scaling.unit(row["resource_kind"], 1)
        return f"#{run} ({int(count)} {kind})"


def _columns(columns: list[Column], full: bool) -> list[Column]:
    return columns if full else [c for c in columns if c.key not in COMPACT_LEAVES_OUT]


def _drop_empty(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Leave out columns with no value at all (weak-scaling columns in a strong study)."""
    empty = [c for c in columns if c in frame and not pd.to_numeric(frame[c], errors="coerce").notna().any()]
    return frame.drop(columns=empty)


def _time_per_epoch(runs: pd.DataFrame) -> pd.Series:
    """The log's own time per epoch where it prints one, else the time over the epochs."""
    epochs = pd.to_numeric(runs["epochs"], errors="coerce").astype(float)
    computed = runs["time_s"].astype(float) / epochs.where(epochs > 0)
    printed = runs["epoch_time_s"].astype(float) if "epoch_time_s" in runs else computed
    return printed.fillna(computed)


def _resources_from(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (series, resources): where the count came from, the distinct texts joined."""
    def joined(values: pd.Series) -> str:
        distinct = list(dict.fromkeys(text for text in map(str, values.tolist()) if text))
        return distinct[0] + (f" (+{len(distinct) - 1} more)" if len(distinct) > 1 else "") if distinct else ""

    known = runs[runs["resources"].notna()]
    if known.empty:
        return pd.DataFrame(columns=["series", "resources", "resources_from"])
    out = known.groupby(["series", "resources"], sort=False)["resources_from"].agg(joined).reset_index()
    out["resources"] = out["resources"].astype(int)
    return out


def series_names(runs: pd.DataFrame, series_by: Sequence[str] | None = None) -> list[str]:
    """The series the runs of `read_runs` make when split by `series_by` (the readers' default
    keys, by which those runs are split already)."""
    if runs.empty:
        return []
    keys = tuple(series_by or scaling_series.DEFAULT_KEYS)
    named = runs if keys == scaling_series.DEFAULT_KEYS and "series" in runs else scaling_series.assign(runs, keys)
    return list(dict.fromkeys(named["series"].astype(str)))


def build_model(result: RunsResult, baseline: int | None = None, series: str | None = None, series_by: Sequence[str] | None = None) -> ScalingModel:
    """Every table of the study. `series`: keep that series only (all by default);
    `series_by`: the keys that split runs into series (default: benchmark, accelerator, framework)."""
    keys = tuple(series_by or scaling_series.DEFAULT_KEYS)
    regrouped = keys != scaling_series.DEFAULT_KEYS
    # the readers name the series by the default keys already: named again only when regrouped
    runs = scaling_series.assign(result.runs, keys) if not result.runs.empty and (regrouped or "series" not in result.runs) else result.runs
    if series is not None and not runs.empty:
        runs = runs[runs["series"].astype(str) == series]
    runs = runs.sort_values(["series", "resources", "source"], kind="stable", na_position="last").reset_index(drop=True)
    runs.insert(0, "run", np.arange(1, len(runs) + 1))
    runs["left_out"] = scaling.leave_out_reasons(runs) if len(runs) else pd.Series(dtype=object)
    runs["time_per_epoch_s"] = _time_per_epoch(runs) if len(runs) else pd.Series(dtype=float)
    grouped = scaling.group_runs(runs)  # by series once, for every table below
    summary = scaling.summarize(runs, baseline, grouped=grouped)
    if len(summary):
        summary = summary.merge(_resources_from(runs), on=["series", "resources"], how="left")
    fits = scaling.fits(runs, summary, grouped=grouped) if len(summary) else pd.DataFrame(columns=["series", "resource_kind"])
    sentences, diff = scaling.settings_changes(runs, summary, grouped=grouped)
    overview = scaling.series_overview(summary) if len(summary) else pd.DataFrame(columns=["series", "resource_kind"])
    if len(overview):
        overview = overview.merge(fits.drop(columns=["n_points", "r_squared", "max_speedup", "note"]), on=["series", "resource_kind"], how="left")
        overview["scaling_from"] = overview["series"].map(summary.drop_duplicates("series").set_index("series")["scaling_from"])
        overview["settings"] = overview["series"].map(lambda s: sentences.get(s, ""))
        overview["benchmark"] = overview["benchmark"].astype(object).where(overview["benchmark"].notna(), "")  # text, not NaN
    # the readers' per-series findings name the default series; regrouped, the analysis's own say it
    reader = [f for f in result.findings if not f.message.startswith("series ") or (not regrouped and (series is None or series in f.message))]
    findings = sort_findings(reader + scaling.findings(runs, summary, baseline, sentences, grouped=grouped))
    return ScalingModel(result=result, baseline=baseline, runs=runs, summary=summary, fits=fits, quality=scaling.quality_check(runs, baseline, grouped=grouped),
                        diff=diff, sentences=sentences, overview=overview, findings=findings,
                        split=scaling_series.describe(runs, keys))


def load(paths: Sequence[str], baseline: int | None = None, resources: str | None = None, series: str | None = None,
         series_by: Sequence[str] | None = None) -> ScalingModel:
    """Read `paths` and build the model (the worker's and the command line's one call)."""
    return build_model(read_runs(list(paths), resources_pattern=resources), baseline, series, series_by)
