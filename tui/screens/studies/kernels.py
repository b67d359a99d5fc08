"""Provides `KernelsScreen`: kernel efficiency from profiler exports, ranked and plotted.

Files are read and everything is derived once, in a thread worker (`kernels_model.build_model`);
keys then only replace the `KernelView` (sort, grouping, name filter) and the table, the bars
and the roofline are redrawn from ready frames on the main thread. Kernel names, ops and file
names come from files: they are shown as plain text, never as markup.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import ContentSwitcher, DataTable, Input, Static, TabbedContent, TabPane

from gpuscope.metrics.safe_text import clean, clean_lines
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.model.kernels import GROUP_TITLES, SORT_LABELS, SORTS, KernelsModel, KernelView, build_model
from gpuscope.tui.model.kernels_report import tab_tables
from gpuscope.tui.screens.base import LoadingScreen
from gpuscope.tui.widgets.findings import FindingsPane
from gpuscope.tui.screens.studies.kernel_bars import ShareBars
from gpuscope.tui.screens.studies.kernel_cards import KernelCards
from gpuscope.tui.screens.studies.diff_tab import KEY_TIP, TAB_ID, TAB_TITLE, DiffTab
from gpuscope.tui.screens.studies.kernel_ranking import KernelDetail, KernelRanking
from gpuscope.tui.widgets.result_table import ResultTableView
from gpuscope.tui.screens.studies.roofline import RooflinePane

NEEDS_DATA = {"cycle_sort", "sort", "filter", "cycle_group", "export", "show_tab", "zoom"}
SCROLLED = ("flop_per_s", "gbs")
"""Ranking columns shown last on screen (the cards and the roofline carry the rates)."""
DETAIL_LINES = {"-tiny": 2, "-short": 2, "-tall": 4}
"""Most lines for the full name of the row under the cursor, by terminal height; three times as
many when the tables fill the screen (`z`). A longer name is folded to them (`KernelDetail`)."""
EXPORT_NAMES = {"tab-kernels": ("kernels.csv", "kernel table"), "tab-runs": ("kernel-runs.csv", "runs table"),
                "tab-findings": ("kernel-findings.csv", "findings"), "tab-transfers": ("kernel-transfers.csv", "transfers table"),
                "tab-metrics": ("profiler-metrics.csv", "profiler metrics")}

TABLE_TABS = {"summary": "tab-kernels", "kernels": "tab-kernels", "transfers": "tab-transfers", "metrics": "tab-metrics",
              "runs": "tab-runs", "grouped": "tab-runs", "findings": "tab-findings"}
"""The tab `--table NAME` opens the screen on (the summary is the cards above every tab)."""


def screen_order(table: ResultTable) -> ResultTable:
    """The ranking with the efficiencies and the verdict before the absolute rates, so what
    matters comes first (`KernelRanking` keeps it in view); the rates follow. Exports keep the
    model's order."""
    keys = table.keys
    order = [i for i, key in enumerate(keys) if key not in SCROLLED] + [i for i, key in enumerate(keys) if key in SCROLLED]
    return replace(table, columns=tuple(table.columns[i] for i in order), rows=tuple(tuple(row[i] for i in order) for row in table.rows))


class KernelsScreen(LoadingScreen):
    """Cards, the kernel ranking, time-share bars and a roofline for one or more profiles."""

    INJECTED = "(injected model)"
    STATE_PREFIX, SWITCH_ID, VIEW_ID = "kernels-", "kernels-switch", "kernels-view"

    HELP_TITLE = "Keys: kernel efficiency"
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (30, "-short"), (36, "-tall")]
    """Below 36 lines the figures shrink (see gpuscope.tcss)."""
    BINDINGS = [
        Binding("s", "cycle_sort", "Sort", tooltip="Next sort: total time, FLOPS efficiency, bandwidth efficiency"),
        Binding("t", "sort('time')", "By time", show=False, tooltip="Longest total time first"),
        Binding("f", "sort('flops')", "By FLOPS", show=False, tooltip="Highest FLOPS efficiency first (the seed's order)"),
        Binding("b", "sort('bandwidth')", "By bandwidth", show=False, tooltip="Highest bandwidth efficiency first"),
        Binding("slash", "filter", "Filter", tooltip="Show only kernels whose name contains a text (any case); grouped, their launches per group"),
        Binding("escape", "clear_filter", "Clear filter", show=False, tooltip="Drop the name filter"),
        Binding("g", "cycle_group", "Group", tooltip="One row per kernel, per direction or per op (where the profile has them)"),
        Binding("e", "export", "Export", tooltip="Write the table shown (format from the file extension)"),
        Binding("z", "zoom", "Zoom", tooltip="Fill the screen with the tables or, from the figures, the roofline (again to restore)"),
        Binding("k", "show_tab('tab-kernels')", "Kernels", show=False, tooltip="Show the kernel ranking"),
        Binding("r", "show_tab('tab-runs')", "Runs", show=False, tooltip="One row per profile: config fields, efficiencies"),
        Binding("F", "show_tab('tab-findings')", "Findings", show=False, tooltip="What was skipped or doubted"),
        Binding("d", f"show_tab('{TAB_ID}')", TAB_TITLE, tooltip=KEY_TIP),
    ]
    """Kernel keys; disabled until the profiles are loaded."""
    COMMAND_TITLES = {"export": "Export table"}
    """Command palette wording for this screen's export (it writes the tab shown)."""

    def __init__(self, paths: Sequence[str | Path], *, view: KernelView | None = None, tab: str | None = None,
                 loader: Callable[[], KernelsModel] | None = None, **options: Any) -> None:
        """`tab`: the table to open on, as `--table` names it (kernels, runs, findings, ...)."""
        super().__init__()
        self.paths = [str(p) for p in paths]
        self.options = options
        """Keyword arguments for `build_model` (peak flags, name pattern, group-by, markers)."""
        self._loader = loader
        self.model: KernelsModel | None = None
        """Everything loaded; None until the worker is done."""
        self.view = view or KernelView()
        """What the ranking shows: sort, grouping, filter."""
        self.tab = tab

    LOADING_TITLE = "Kernels · loading {paths}"
    FAILED_TITLE = "Kernels · could not read {paths}"
    EXPECTED = (ValueError,)
    """A flag's ValueError: its own message."""

    def compose_body(self) -> ComposeResult:
        with Vertical(id="kernels-body"):
            yield KernelCards(id="kernel-cards")
            yield Static(id="kernels-peak", markup=False)
            with TabbedContent(id="kernels-tables"):
                with TabPane("Kernels", id="tab-kernels"):
                    yield KernelRanking(id="kernels-ranking")
                    yield KernelDetail(id="kernels-detail")
                with TabPane("Transfers", id="tab-transfers"):
                    yield ResultTableView(id="kernels-transfers")
                with TabPane("Profiler metrics", id="tab-metrics"):
                    yield ResultTableView(id="kernels-metrics")
                with TabPane("Runs", id="tab-runs"):
                    yield ResultTableView(id="kernels-runs")
                    yield ResultTableView(id="kernels-grouped")
                    yield Static(id="kernels-runs-note", markup=False)
                with TabPane("Findings", id="tab-findings"):
                    yield FindingsPane(id="kernels-findings", table_id="kernels-findings-table")
                with TabPane(TAB_TITLE, id=TAB_ID):
                    yield DiffTab(self.paths)
            with Horizontal(id="kernels-figures"):
                yield ShareBars(id="kernel-bars")
                yield RooflinePane(id="roofline")

    def compose_below(self) -> ComposeResult:
        yield Input(id="kernels-filter", placeholder="filter: part of a name (Enter keeps it, Escape clears)", compact=True)

    def on_mount(self) -> None:
        self.query_one("#kernels-filter", Input).display = False

    def read_model(self) -> KernelsModel:
        return self._loader() if self._loader is not None else build_model(self.paths, **self.options)

    def show(self, model: KernelsModel) -> None:
        self.model = model
        self.refresh_bindings()
        if model.empty:
            self.sub_title = f"Kernels · nothing read · {self.paths_text()}"
            self.show_empty(f"No kernel launches found in {self.paths_text()}.\ngpuscope reads PyProf, Nsight Systems, "
                             "Nsight Compute, nvprof and PyTorch profiler exports (see Findings below for each file).", model.findings)
            return
        launches = int(model.rankings["kernel"]["calls"].sum())
        self.sub_title = f"Kernels · {len(model.runs)} profile(s) · {launches:,} launches · {self.paths_text()}"
        self.query_one(KernelCards).show(model.cards)
        peak = Text().append("Peak used: ", style="bold").append(clean(model.peak.source_text))  # names the file it came from
        self.query_one("#kernels-peak", Static).update(peak)
        self.query_one("#kernels-findings", FindingsPane).show(model.findings)
        self.query_one("#kernels-tables", TabbedContent).get_tab("tab-findings").label = Text(f"Findings ({len(model.findings)})")
        self._show_runs(model)
        self._show_beside(model)
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "kernels-body"
        if self.tab in TABLE_TABS:
            tabs = self.query_one("#kernels-tables", TabbedContent)
            tab = TABLE_TABS[self.tab]
            if tabs.get_tab(tab).display:  # a hidden tab (no transfers here): stay on the ranking
                tabs.active = tab
        self.apply(self.view)
        if self.query_one("#kernels-tables", TabbedContent).active == "tab-kernels":  # arrows move in the ranking
            self.query_one("#kernels-ranking", KernelRanking).focus()

    def _show_runs(self, model: KernelsModel) -> None:
        runs = model.runs_table()
        self.query_one("#kernels-runs", ResultTableView).show(runs, squeeze=("file",))
        grouped = self.query_one("#kernels-grouped", ResultTableView)
        grouped.display = model.grouped is not None
        notes = list(runs.notes)
        if model.grouped is not None:
            grouped.show(model.grouped)
            notes.insert(0, f"Below: {model.grouped.title.lower()}, means per group.")
        self.query_one("#kernels-runs-note", Static).update(Text(clean_lines("\n".join(notes))))  # values from file names

    def _show_beside(self, model: KernelsModel) -> None:
        """The transfers and profiler-metrics tabs, only when the profiles have them; with
        metrics but no timed kernel, the metrics tab is the one shown."""
        tabs = self.query_one("#kernels-tables", TabbedContent)
        for tab, table_id, table in (("tab-transfers", "#kernels-transfers", model.transfers),
                                     ("tab-metrics", "#kernels-metrics", model.profiler_metrics)):
            if table is None:
                tabs.hide_tab(tab)
            else:
                self.query_one(table_id, ResultTableView).show(table, squeeze=("kernel", "file"))
        if model.rankings["kernel"].empty and model.profiler_metrics is not None:
            tabs.active = "tab-metrics"

    def apply(self, view: KernelView) -> None:
        """Show `view`: the ranking table, the bars and the roofline, from the model's frames."""
        model = self.model
        if model is None or model.empty:
            return
        if view.group not in model.groups:
            view = replace(view, group="kernel")
        self.view = view
        ranking = self.query_one("#kernels-ranking", KernelRanking)
        ranking.show_ranking(screen_order(model.ranking_table(view)))
        self._show_detail(ranking.cursor_row)
        # Bars and roofline show every row that passes the filter, whatever the sort and --top.
        everything = model.rows(replace(view, sort="time", top=0))
        self.query_one(ShareBars).show(everything, GROUP_TITLES[view.group].lower())
        self.query_one(RooflinePane).show(everything, model.peak)
        self.status(self._view_text(view, len(model.rows(view))))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "kernels-ranking":
            self._show_detail(event.cursor_row)

    def on_resize(self) -> None:
        # After Screen's own handler has set the -short/-tall class the detail's lines follow.
        self.call_after_refresh(lambda: self._show_detail(self.query_one("#kernels-ranking", KernelRanking).cursor_row))

    def _show_detail(self, row: int) -> None:
        """The full name of the ranking's row `row` under the table (the table folds it)."""
        ranking = self.query_one("#kernels-ranking", KernelRanking)
        detail = self.query_one("#kernels-detail", KernelDetail)
        name = ranking.full_name(row)
        detail.display = name is not None
        zoomed = self.maximized is not None
        lines = DETAIL_LINES[next((c for c in DETAIL_LINES if self.has_class(c)), "-tall")] * (3 if zoomed else 1)
        if name is not None and ranking.ranking is not None:
            detail.show_name(clean(ranking.ranking.columns[0].header), name, lines, ranking.longest_name())

    def _view_text(self, view: KernelView, shown: int) -> Text:
        assert self.model is not None
        text = Text()
        text.append("Sort ", style="dim").append(SORT_LABELS[view.sort], style="bold")
        text.append("   Rows per ", style="dim").append(GROUP_TITLES[view.group].lower(), style="bold")
        if view.filter:
            text.append("   Filter ", style="dim").append(repr(view.filter), style="bold")
        if view.top:
            text.append("   Limit ", style="dim").append(f"top {view.top}", style="bold")
        text.append(f"   {shown} of {len(self.model.rankings[view.group])} shown", style="dim")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Kernel keys are dimmed until there is data; grouping is offered only when possible."""
        if action in NEEDS_DATA and (self.model is None or self.model.empty):
            return None
        if action == "cycle_group" and self.model is not None and len(self.model.groups) < 2:
            return False
        if action == "clear_filter":  # nothing to clear: Escape goes on to the app (back to the browser)
            return bool(self.view.filter) or self.query_one("#kernels-filter", Input).display
        return True

    def action_cycle_sort(self) -> None:
        order = list(SORTS)
        self.apply(replace(self.view, sort=order[(order.index(self.view.sort) + 1) % len(order)]))

    def action_sort(self, key: str) -> None:
        self.apply(replace(self.view, sort=key))

    def action_cycle_group(self) -> None:
        if self.model is None:
            return
        groups = list(self.model.groups)
        index = groups.index(self.view.group) if self.view.group in groups else 0
        self.apply(replace(self.view, group=groups[(index + 1) % len(groups)]))

    def action_filter(self) -> None:
        """`/`: show the filter box; typing narrows the rows at once."""
        box = self.query_one("#kernels-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "kernels-filter":
            self.apply(replace(self.view, filter=event.value.strip()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "kernels-filter":
            event.input.display = bool(event.input.value.strip())
            self.query_one("#kernels-ranking", KernelRanking).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#kernels-filter", Input)
        with box.prevent(Input.Changed):
            box.value = ""
        box.display = False
        self.query_one("#kernels-ranking", KernelRanking).focus()
        if self.view.filter:
            self.apply(replace(self.view, filter=""))

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        else:
            focused, figures = self.focused, self.query_one("#kernels-figures")
            in_figures = focused is not None and figures in focused.ancestors_with_self
            self.maximized = self.query_one(RooflinePane) if in_figures else self.query_one("#kernels-tables", TabbedContent)
        if self.model is not None and not self.model.empty:
            self._show_detail(self.query_one("#kernels-ranking", KernelRanking).cursor_row)

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#kernels-tables", TabbedContent).active = tab

    def action_export(self) -> None:
        if self.model is None or self.model.empty:
            return
        tab = self.query_one("#kernels-tables", TabbedContent).active
        if tab == TAB_ID:
            self.query_one(DiffTab).ask_export()
            return
        default, what = EXPORT_NAMES.get(tab, EXPORT_NAMES["tab-kernels"])
        self.ask_export(default, what)

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], list[str]] | None:
        """The tab shown."""
        if self.model is None:
            return None
        tab = self.query_one("#kernels-tables", TabbedContent).active
        if tab == TAB_ID:
            return self.query_one(DiffTab).export_tables(fmt)
        return tab_tables(self.model, self.view, tab, fmt)
