"""Provides what `gpuscope scaling PATH... --format ...` prints and what the scaling screen's `e` writes.

Tables, in order: the series overview (Amdahl fit, Karp-Flatt trend, "did only the resources
change?"), the speedup analysis (one row per configuration: the CSV), the benchmark results
summary (one row per run, where its resources came from), the config diff, the accuracy
check, the findings; for text and markdown the speedup curve and the efficiency bars follow
as text. `--table NAME` prints one of them.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.model.scaling_compare import curve_metrics, curves_for, settings_table
from gpuscope.tui.model.scaling import ALL, ScalingModel
from gpuscope.tui.render.scaling_plots import as_text, draw_curves, draw_efficiency, draw_speedup

TABLES = ("speedup", "overview", "runs", "diff", "accuracy", "findings")
"""`--table` names; the first is the CSV's default."""
FINDINGS_SHOWN = 40
"""Above this many findings, text and markdown group them by kind."""
RUNS_SHOWN = 50
"""Text and markdown show the last this many runs (a study of thousands is read in CSV / JSON)."""


class Report(NamedTuple):
    tables: list[ResultTable]
    findings: list[Finding]
    extra: list[str]
    """Plots as plain text (text and markdown only)."""
    empty: bool
    """No run was read: the command fails (exit 1) after saying why."""


def tables_for(model: ScalingModel, fmt: str, series: str = ALL) -> dict[str, ResultTable]:
    """Every table, keyed as `--table` names them, in print order."""
    readable = fmt in ("text", "markdown")
    return {
        "overview": model.overview_table(series, full=not readable),
        "speedup": model.speedup_table(series, full=not readable),
        "runs": model.runs_table(series, last=RUNS_SHOWN if readable else None),
        "diff": model.diff_table(series),
        "accuracy": model.quality_table(series, full=not readable),
        "findings": model.findings_table(FINDINGS_SHOWN if readable else None),
    }


def plots_text(model: ScalingModel, width: int, series: str = ALL) -> list[str]:
    """The speedup curve and the efficiency bars as plain text blocks."""
    summary = model.summary if series == ALL else model.summary[model.summary["series"] == series]
    width = max(40, min(width, 160))
    return [as_text(draw_speedup, summary, model.fits, width=width, height=22),
            as_text(draw_efficiency, summary, width=width, height=18)]


def report(model: ScalingModel, fmt: str, width: int = 100, table: str | None = None) -> Report:
    """Tables (one with `table`, or the first for CSV), findings, and plots as text."""
    tables = tables_for(model, fmt)
    chosen = table or ("speedup" if fmt == "csv" else None)
    if chosen:
        return Report([tables[chosen]], model.findings, [], model.empty)
    extra = plots_text(model, width) if fmt in ("text", "markdown") and not model.empty else []
    return Report(list(tables.values()), model.findings, extra, model.empty)


TAB_TABLES = {"tab-speedup": "speedup", "tab-efficiency": "speedup", "tab-table": "speedup", "tab-runs": "runs",
              "tab-diff": "diff", "tab-accuracy": "accuracy", "tab-findings": "findings"}
"""The table each tab of the screen exports (the plots' tabs export the numbers they draw)."""


def tab_tables(model: ScalingModel, tab: str, fmt: str, series: str = ALL, marked: Sequence[int] = (),
               metric: str | None = None, width: int = 100) -> tuple[list[ResultTable], list[str]]:
    """What the screen's `e` writes for the tab shown (CSV: its one table), with, for text and
    markdown, the tab's plot as text."""
    text = fmt in ("text", "markdown")
    if tab == "tab-compare":
        metrics = curve_metrics(model, marked)
        shown = metric if metric in metrics else (metrics[0] if metrics else None)
        plots = [as_text(draw_curves, curves_for(model, marked, shown), shown, width=width)] if text and shown else []
        return [settings_table(model, marked)], plots
    if tab == "tab-findings":
        return [model.findings_table(None)], []
    if tab == "tab-table":
        speedup = model.speedup_table(series, full=not text)
        return ([speedup] if fmt == "csv" else [model.overview_table(series, full=not text), speedup]), []
    tables = tables_for(model, fmt, series)
    chosen = [tables[TAB_TABLES.get(tab, "speedup")]]
    if not text or tab not in ("tab-speedup", "tab-efficiency"):
        return chosen, []
    plots = plots_text(model, width, series)
    return chosen, [plots[0] if tab == "tab-speedup" else plots[1]]
