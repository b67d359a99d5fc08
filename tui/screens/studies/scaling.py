"""Provides `ScalingScreen`: speedup curves, efficiency bars, the scaling tables and a compare view.

Logs are read and analysed once, in a thread worker (`scaling_model.load`); keys then only
change what is shown: the series (`n`: all together, then each alone), the runs marked for the
compare view (space in the Runs tab), the compared curve (`m`). Every tab says where the
resource counts came from (the lines under the tabs, which first say how the runs were split
into series, and a column in the tables). File names
and settings come from files: they are shown as plain text, never as markup.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import ContentSwitcher, Static, TabbedContent, TabPane

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.tui.model.scaling_compare import curve_metrics, curves_for, metric_label, settings_table
from gpuscope.tui.model.scaling import ALL, ScalingModel, load, series_names
from gpuscope.tui.model.scaling_report import tab_tables
from gpuscope.tui.screens.base import LoadingScreen
from gpuscope.tui.screens.studies.diff_tab import KEY_TIP, TAB_ID, TAB_TITLE, DiffTab
from gpuscope.tui.widgets.findings import FindingsPane
from gpuscope.tui.widgets.result_table import ResultTableView
from gpuscope.tui.screens.studies.scaling_plots import CurvesPlot, EfficiencyPlot, SpeedupPlot

TABS = ("tab-speedup", "tab-efficiency", "tab-table", "tab-runs", "tab-diff", "tab-accuracy", "tab-compare", "tab-findings")
TABLE_TABS = {"speedup": "tab-table", "overview": "tab-table", "runs": "tab-runs", "diff": "tab-diff", "accuracy": "tab-accuracy",
              "findings": "tab-findings"}
"""The tab `--table NAME` opens the screen on."""
EXPORT_NAMES = {"tab-speedup": "speedup.txt", "tab-efficiency": "efficiency.txt", "tab-table": "scaling.csv", "tab-runs": "scaling-runs.csv",
                "tab-diff": "scaling-config-diff.csv", "tab-accuracy": "scaling-accuracy.csv", "tab-compare": "scaling-compare.txt",
                "tab-findings": "scaling-findings.csv"}
NEEDS_DATA = {"toggle_mark", "compare", "next_series", "next_metric", "export", "show_tab"}
MARK = "✓"
ORIGIN_LINES = 2
"""Lines for "where the resource counts came from" under the tabs (after the line saying how
the series were split); more series: see Runs."""


class ScalingScreen(LoadingScreen):
    """Speedup and efficiency of one or more series of runs, their tables, and a compare view."""

    INJECTED = "(injected runs)"
    STATE_PREFIX, SWITCH_ID, VIEW_ID = "scaling-", "scaling-switch", "scaling-view"
    HELP_TITLE = "Keys: scaling"
    BINDINGS = [
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark the highlighted run for the compare view (Runs tab)"),
        Binding("c", "compare", "Compare", tooltip="Compare the marked runs: per-epoch curves overlaid, settings side by side"),
        Binding("m", "next_metric", "Curve", tooltip="Next per-epoch curve in the compare view (loss, accuracy, epoch time)"),
        Binding("n", "next_series", "Series", tooltip="All series together, then each series alone"),
        Binding("e", "export", "Export", tooltip="Write the tab shown (format from the file extension)"),
        *(Binding(str(i + 1), f"show_tab('{tab}')", tab.removeprefix("tab-").title(), show=False, tooltip=f"Show the {tab.removeprefix('tab-')} tab")
          for i, tab in enumerate(TABS)),
        Binding("d", f"show_tab('{TAB_ID}')", TAB_TITLE, tooltip=KEY_TIP),
    ]
    """Scaling keys; disabled until the logs are read."""
    COMMAND_TITLES = {"export": "Export tab"}
    """Command palette wording for this screen's export (it writes the tab shown)."""

    def __init__(self, paths: Sequence[str | Path], *, baseline: int | None = None, resources: str | None = None,
                 series: str | None = None, tab: str | None = None, loader: Callable[[], ScalingModel] | None = None,
                 series_by: Sequence[str] | None = None) -> None:
        """`baseline`, `resources`, `series`, `series_by`: as the command line's flags; `tab`: the table to open on."""
        super().__init__()
        self.paths = [str(p) for p in paths]
        self.baseline, self.resources, self.only_series, self.tab = baseline, resources, series, tab
        self._loader = loader
        self.series_by = series_by
        self.model: ScalingModel | None = None
        """Everything read and derived; None until the worker is done."""
        self.series = ALL
        """The series shown (`all`: every series together)."""
        self.marked: tuple[int, ...] = ()
        """Run numbers marked for the compare view, in the order they were marked."""
        self.metric: str | None = None
        """The per-epoch curve the compare view draws."""

    LOADING_TITLE = "Scaling · loading {paths}"
    FAILED_TITLE = "Scaling · could not read {paths}"

    def compose_body(self) -> ComposeResult:
        with Vertical(id="scaling-body"):
            with TabbedContent(id="scaling-tabs"):
                with TabPane("Speedup", id="tab-speedup"):
                    yield SpeedupPlot(id="speedup-plot")
                    yield Static(id="speedup-note", classes="scaling-note", markup=False)
                with TabPane("Efficiency", id="tab-efficiency"):
                    yield EfficiencyPlot(id="efficiency-plot")
                    yield Static(id="efficiency-note", classes="scaling-note", markup=False)
                with TabPane("Table", id="tab-table"):
                    yield ResultTableView(id="scaling-overview")
                    yield ResultTableView(id="scaling-speedup")
                with TabPane("Runs", id="tab-runs"):
                    yield ResultTableView(id="scaling-runs")
                with TabPane("Settings", id="tab-diff"):
                    yield ResultTableView(id="scaling-diff")
                    yield Static(id="diff-note", classes="scaling-note", markup=False)
                with TabPane("Accuracy", id="tab-accuracy"):
                    yield ResultTableView(id="scaling-accuracy")
                with TabPane("Compare", id="tab-compare"):
                    yield Static(id="compare-hint", classes="scaling-note", markup=False)
                    yield CurvesPlot(id="compare-plot")
                    yield ResultTableView(id="compare-settings")
                with TabPane("Findings", id="tab-findings"):
                    yield FindingsPane(id="scaling-findings", table_id="scaling-findings-table")
                with TabPane(TAB_TITLE, id=TAB_ID):
                    yield DiffTab(self.paths)
            yield Static(id="scaling-origin", markup=False)

    def read_model(self) -> ScalingModel:
        if self._loader is not None:
            return self._loader()
        return load(self.paths, baseline=self.baseline, resources=self.resources, series=self.only_series, series_by=self.series_by)

    def show(self, model: ScalingModel) -> None:
        self.model = model
        self.refresh_bindings()
        if model.empty and not model.result.runs.empty:  # runs were read, --series matched none of them
            present = ", ".join(series_names(model.result.runs, self.series_by))
            self.show_empty(f"--series {self.only_series!r} matches nothing; present: {present}", ())
            return
        if model.empty:
            self.sub_title = f"Scaling · no runs · {self.paths_text()}"
            self.show_empty(f"No runs found in {self.paths_text()}.\ngpuscope reads seed-format training logs, MLPerf :::MLLOG logs, "
                            "ReFrame perflogs, sacct -P output and CSV / JSON tables of (resources, time); see Findings below.",
                            model.findings)
            return
        self.sub_title = f"Scaling · {len(model.runs)} runs · {len(model.series)} series · {self.paths_text()}"
        self.query_one("#scaling-findings", FindingsPane).show(model.findings)
        self.query_one("#scaling-tabs", TabbedContent).get_tab("tab-findings").label = Text(f"Findings ({len(model.findings)})")
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "scaling-body"
        if self.tab in TABLE_TABS:
            self.action_show_tab(TABLE_TABS[self.tab])
        if (problem := model.unknown_baseline()) is not None:
            self.notify(problem, title="Baseline", severity="warning", markup=False)
        self.show_series(ALL)

    def show_series(self, series: str) -> None:
        """Redraw every tab but the compare view for `series` (or all)."""
        model = self.model
        if model is None or model.empty:
            return
        self.series = series
        summary = model.summary if series == ALL else model.summary[model.summary["series"] == series]
        self.query_one("#speedup-plot", SpeedupPlot).replot(summary, model.fits)
        # Under the curve, per series: the Amdahl fit (or why there is none) and the Karp-Flatt trend
        fits = model.overview if series == ALL else model.overview[model.overview["series"] == series]
        lines = [f"{s}: {fit}" + (f"; {trend}" if isinstance(trend, str) else "") for s, fit, trend in zip(fits["series"], fits["fit"], fits["karp_flatt_trend"])]
        self.query_one("#speedup-note", Static).update(Text("\n".join(map(clean, lines))))
        # which series have no bar (one configuration is itself against itself), or why none
        self.query_one("#efficiency-note", Static).update(Text(clean(self.query_one("#efficiency-plot", EfficiencyPlot).replot(summary))))
        self.query_one("#scaling-overview", ResultTableView).show(model.overview_table(series, full=False), squeeze=("series", "fit", "karp_flatt_trend", "settings"))
        self.query_one("#scaling-speedup", ResultTableView).show(model.speedup_table(series, full=False), squeeze=("series", "resources_from", "differs", "left_out"),
                                                                  fit_through="karp_flatt")
        self.show_runs()
        diff = model.diff_table(series)
        self.query_one("#scaling-diff", ResultTableView).show(diff, squeeze=("series", "value"))
        self.query_one("#diff-note", Static).update(Text("\n".join(map(clean, diff.notes))))
        self.query_one("#scaling-accuracy", ResultTableView).show(model.quality_table(series), squeeze=("series", "quality_verdict", "epochs_verdict"),
                                                                    fit_through="quality_verdict")
        origins = model.origins(series)
        if len(origins) > ORIGIN_LINES:  # the last line says how many more there are
            shown, more = origins[:ORIGIN_LINES - 1], f"... {len(origins) - ORIGIN_LINES + 1} more series: see the Runs tab"
        else:
            shown, more = origins, ""
        origin = Text(no_wrap=True, overflow="ellipsis")
        if model.split:  # how runs became series, on every tab: a series is one machine only if the keys say so
            head, _, regroup = model.split[0].partition(" (")
            origin.append(clean(head[:1].upper() + head[1:])).append(f" ({regroup}" if regroup else "", style="dim")
        for line in shown:
            origin.append("\n" if origin.plain else "").append("Resources from ", style="dim").append(clean(line))
        if more:
            origin.append("\n").append(more, style="dim")
        self.query_one("#scaling-origin", Static).update(origin)
        self.show_compare()

    def show_runs(self) -> None:
        """The runs table with a mark column (space marks a run for the compare view)."""
        assert self.model is not None
        table = self.model.runs_table(self.series)
        run = table.keys.index("run")
        marked = replace(table, columns=(Column("mark", " "), *table.columns),
                         rows=tuple((MARK if row[run] in self.marked else "", *row) for row in table.rows))
        self.query_one("#scaling-runs", ResultTableView).show(marked, squeeze=("series", "resources_from", "source"), fit_through="status")

    def show_compare(self) -> None:
        """Overlay the marked runs' curves and put their settings side by side."""
        model = self.model
        if model is None:
            return
        metrics = curve_metrics(model, self.marked)
        if self.metric not in metrics:
            self.metric = metrics[0] if metrics else None
        plot, hint = self.query_one("#compare-plot", CurvesPlot), self.query_one("#compare-hint", Static)
        ready = len(self.marked) >= 2
        plot.display = ready and self.metric is not None
        if not ready:
            hint.update(Text(f"{len(self.marked)} run(s) marked. Mark two or more runs in the Runs tab (space), then press c."))
        elif self.metric is None:
            hint.update(Text("None of the marked runs has per-epoch values (loss, accuracy, epoch time); their settings are below."))
        else:
            plot.replot(curves_for(model, self.marked, self.metric), self.metric)
            others = [metric_label(m) for m in metrics if m != self.metric]
            hint.update(Text(f"{metric_label(self.metric)} of {len(self.marked)} runs" + (f"; m: {', '.join(others)}" if others else "")))
        settings = settings_table(model, self.marked)
        self.query_one("#compare-settings", ResultTableView).display = bool(self.marked)
        self.query_one("#compare-settings", ResultTableView).show(settings, squeeze={key: 12 for key in settings.keys if key.startswith("run_")})
        self.status(self._view_text())

    def _view_text(self) -> Text:
        assert self.model is not None
        text = Text()
        text.append("Series ", style="dim").append(clean(self.series if self.series != ALL else f"all ({len(self.model.series)})"), style="bold")
        text.append("   Baseline ", style="dim").append(str(self.model.baseline) if self.model.baseline is not None else "smallest measured", style="bold")
        text.append("   Marked ", style="dim").append(", ".join(f"#{r}" for r in self.marked) or "none", style="bold")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Scaling keys are dimmed until there is data; marking only in the Runs tab."""
        if action in NEEDS_DATA and (self.model is None or self.model.empty):
            return None
        if action == "toggle_mark" and self.query_one("#scaling-tabs", TabbedContent).active != "tab-runs":
            return False
        return True

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()  # space marks runs in the Runs tab only
        if event.pane.id == "tab-runs":  # arrows then move through the runs at once
            self.query_one("#scaling-runs", ResultTableView).focus()

    def action_toggle_mark(self) -> None:
        table = self.query_one("#scaling-runs", ResultTableView)
        if table.model is None or not table.model.rows:
            return
        run = int(table.model.rows[table.cursor_row][table.model.keys.index("run")])
        self.marked = tuple(r for r in self.marked if r != run) if run in self.marked else (*self.marked, run)
        self.show_runs()
        table.move_cursor(row=min(table.cursor_row + 1, len(table.model.rows) - 1))  # mark the next with the next space
        self.show_compare()

    def action_compare(self) -> None:
        self.action_show_tab("tab-compare")
        if len(self.marked) < 2:
            self.notify("Mark two or more runs in the Runs tab with space first.", markup=False)

    def action_next_metric(self) -> None:
        assert self.model is not None
        metrics = curve_metrics(self.model, self.marked)
        if len(metrics) > 1 and self.metric in metrics:
            self.metric = metrics[(metrics.index(self.metric) + 1) % len(metrics)]
            self.show_compare()

    def action_next_series(self) -> None:
        assert self.model is not None
        choices = [ALL, *self.model.series]
        if len(choices) <= 2:
            self.notify(f"One series only: {self.model.series[0]}", markup=False)
            return
        self.show_series(choices[(choices.index(self.series) + 1) % len(choices)])

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#scaling-tabs", TabbedContent).active = tab

    def action_export(self) -> None:
        tab = self.query_one("#scaling-tabs", TabbedContent).active
        if tab == TAB_ID:
            self.query_one(DiffTab).ask_export()
            return
        self.ask_export(EXPORT_NAMES.get(tab, "scaling.csv"), f"{tab.removeprefix('tab-')} tab")

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], list[str]] | None:
        """The tab shown: its table, and for text its plot."""
        if self.model is None:
            return None
        tab = self.query_one("#scaling-tabs", TabbedContent).active
        if tab == TAB_ID:
            return self.query_one(DiffTab).export_tables(fmt)
        return tab_tables(self.model, tab, fmt, self.series, self.marked, self.metric)

