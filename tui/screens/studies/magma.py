"""Provides `MagmaScreen`: MAGMA tester results as box plots, summary and comparison tables.

Files are read and summarised once in a thread worker (`MagmaModel`); keys then only change
the `Selection` (metric, cluster size, test) and the panes are rebuilt from ready frames.
Everything that came from a file is shown as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import ContentSwitcher, Static, TabbedContent, TabPane

from gpuscope.metrics import export
from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.metrics.table import ResultTable
from gpuscope.parsers.magma.read import read_tree
from gpuscope.tui.render.boxplot import boxplots_text
from gpuscope.tui.model.magma import METRIC_LABELS, MagmaModel, Selection, build_model, toggle_metric
from gpuscope.tui.screens.base import LoadingScreen
from gpuscope.tui.screens.studies.boxplots import BoxPlotStack
from gpuscope.tui.screens.studies.diff_tab import KEY_TIP, TAB_ID, TAB_TITLE, DiffTab
from gpuscope.tui.widgets.findings import FindingsPane
from gpuscope.tui.widgets.result_table import ResultTableView

if TYPE_CHECKING:
    from gpuscope.parsers.magma.read import MagmaResult

EXPORT_NAMES = {"tab-summary": ("magma-summary.csv", "summary"), "tab-comparison": ("magma-comparison.csv", "comparison"),
                "tab-findings": ("magma-findings.csv", "findings")}
"""Per tab: the file name offered and what the dialog says it writes (`e` writes the tab shown)."""
STATED = ("test", "nodes")
TABS = ("summary", "comparison", "findings")
"""Tables `--table` can open the screen on."""
COMPARISON_HIDDEN = (*STATED, "metric", "p_raw", "resolution")
"""Comparison columns the screen leaves to the export: the uncorrected p, the time resolution."""
NARROW_HIDDEN = ("rows",)
"""Also left out when the verdict would be cut: 'of' (all rows; the summary tab has the exclusions)."""
VERDICT_LEAST = 12
"""'tied with #2', 'within noise' and 'beyond noise' are never cut."""
NEEDS_DATA = {"switch_metric", "next_cluster", "previous_cluster", "next_test", "next_impl", "export", "show_tab", "zoom"}


class MagmaScreen(LoadingScreen):
    """Distributions of MAGMA Gflop/s (or ms) per problem size, environment and cluster size."""

    INJECTED = "(injected result)"
    SWITCH_ID, VIEW_ID = "magma-switch", "selection"

    DEFAULT_CSS = """
    #comparison-note {
        color: $text-muted;
    }
    """

    HELP_TITLE = "Keys: MAGMA results"
    BINDINGS = [
        Binding("m", "switch_metric", "Metric", tooltip="Switch between Gflop/s and time in ms"),
        Binding("n", "next_cluster", "Nodes", tooltip="Next cluster size (all pooled, then each node count)"),
        Binding("N", "previous_cluster", "Prev. nodes", show=False, tooltip="Previous cluster size"),
        Binding("t", "next_test", "Test", tooltip="Next MAGMA test (e.g. dgemm_vbatched, dgemm)"),
        Binding("i", "next_impl", "Impl", tooltip="Next implementation the tester timed (magma, cublas, cpu, ...)"),
        Binding("e", "export", "Export", tooltip="Write the table shown (format from the file extension)"),
        Binding("z", "zoom", "Zoom", tooltip="Fill the screen with the focused pane (again to restore)"),
        Binding("s", "show_tab('tab-summary')", "Summary", show=False, tooltip="Show the summary table"),
        Binding("c", "show_tab('tab-comparison')", "Comparison", show=False, tooltip="Environments ranked"),
        Binding("f", "show_tab('tab-findings')", "Findings", show=False, tooltip="What was excluded or doubted"),
        Binding("d", f"show_tab('{TAB_ID}')", TAB_TITLE, tooltip=KEY_TIP),
    ]
    """MAGMA keys; they are disabled until results are loaded."""

    def __init__(
        self,
        paths: Sequence[str | Path],
        *,
        path_pattern: str | None = None,
        exclude: Sequence[str] = (),
        keep_warmup: bool = False,
        keep_impossible: bool = False,
        keep_untrusted: bool = False,
        impl: str | None = None,
        test: str | None = None,
        nodes: int | None = None,
        metric: str = "gflops",
        peak_gflops: float | None = None,
        tab: str | None = None,
        loader: Callable[[], MagmaResult] | None = None,
    ) -> None:
        """`impl`, `test`, `nodes`, `metric`: what to open on (the command line's flags; pooled
        when `nodes` is None); `peak_gflops`: the peak values are checked against instead of the
        GPU table; `tab`: the table shown first (summary, comparison or findings)."""
        super().__init__()
        self.paths = [Path(p) for p in paths]
        self.path_pattern = path_pattern
        self.exclude = tuple(exclude)
        self.keep_warmup = keep_warmup
        self.keep_impossible = keep_impossible
        self.keep_untrusted = keep_untrusted
        self.impl = impl
        self.test, self.nodes, self.metric = test, nodes, metric
        self.peak_gflops = peak_gflops
        self.tab = tab
        self._loader = loader
        self.model: MagmaModel | None = None
        """Everything loaded; None until the worker is done."""
        self.selection: Selection | None = None
        """What the panes show: test, cluster size, metric."""

    LOADING_TITLE = "MAGMA · loading {paths}"
    FAILED_TITLE = "MAGMA · could not read {paths}"

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield BoxPlotStack(id="plots")
            with TabbedContent(id="tables"):
                with TabPane("Summary", id="tab-summary"):
                    yield ResultTableView(id="summary")
                with TabPane("Comparison", id="tab-comparison"):
                    yield ComparisonView(id="comparison")
                    yield Static(id="comparison-note", markup=False)
                with TabPane("Findings", id="tab-findings"):
                    yield FindingsPane(id="findings-pane", table_id="findings")
                with TabPane(TAB_TITLE, id=TAB_ID):
                    yield DiffTab(self.paths)

    def read_model(self) -> MagmaModel:
        result = self._loader() if self._loader is not None else read_tree(
            self.paths, path_pattern=self.path_pattern, exclude=self.exclude, peak_override=self.peak_gflops)
        return build_model(result, keep_warmup=self.keep_warmup, keep_impossible=self.keep_impossible,
                           keep_untrusted=self.keep_untrusted, impl=self.impl)

    async def show(self, model: MagmaModel) -> None:
        self.model = model
        result = model.result
        environments = result.rows["environment"].nunique() if not result.rows.empty else 0
        self.sub_title = f"MAGMA · {result.files_read} files · {environments} environments · {self.paths_text()}"
        self.refresh_bindings()
        if model.empty:
            self.sub_title = f"MAGMA · no results · {self.paths_text()}"
            self.show_empty(
                f"No MAGMA results found in {self.paths_text()} ({result.files_read} files read).\n"
                "gpuscope looks for the output of MAGMA testers (testing_dgemm, testing_dgemm_vbatched, ...):"
                " a '% MAGMA' banner followed by a results table.",
                result.findings,
            )
            return
        self.query_one("#findings-pane", FindingsPane).show(result.findings)
        self._label_findings_tab(len(result.findings))
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "body"
        if self.tab in TABS:
            self.action_show_tab(f"tab-{self.tab}")
        for problem in model.unknown_choices(self.test, self.nodes, self.impl if self.impl != magma_stats.DEFAULT_IMPL else None):
            self.notify(problem, title="Not in these results", severity="warning", markup=False)
        await self.select(model.first_selection(self.test, self.nodes, self.metric, self.impl))

    def _label_findings_tab(self, count: int) -> None:
        tab = self.query_one("#tables", TabbedContent).get_tab("tab-findings")
        tab.label = Text(f"Findings ({count})")

    async def select(self, selection: Selection) -> None:
        """Show `selection`: rebuild the plots and both tables from the model."""
        model = self.model
        if model is None:
            return
        self.selection = selection
        summary = model.summary(selection)
        self.status(self._selection_text(selection, summary.empty))
        # Test and nodes are the same on every row of a selection and stated in the bar above.
        self.query_one("#summary", ResultTableView).show(model.summary_table(selection), hide=STATED, squeeze=("environment", "why"),
                                                         fit_through=f"{selection.metric}_whisker_hi")
        full = model.comparison_table(selection)
        self.query_one("#comparison", ComparisonView).show_both(full, model.comparison_table(selection, compact=True))
        note = self.query_one("#comparison-note", Static)
        note.update(model.comparison_caption(selection))
        note.tooltip = " ".join(full.notes)
        empty = f"No {selection.test} results at {selection.nodes_label}. Press n for another cluster size."
        await self.query_one("#plots", BoxPlotStack).show(summary, selection.metric, empty)

    def _selection_text(self, sel: Selection, empty: bool) -> Text:
        assert self.model is not None
        tests = self.model.tests
        text = Text()
        text.append("Test ", style="dim").append(sel.test, style="bold")
        if len(tests) > 1:
            text.append(f" ({tests.index(sel.test) + 1}/{len(tests)})", style="dim")
        text.append("   Nodes ", style="dim").append(sel.nodes_label, style="bold")
        text.append("   Metric ", style="dim").append(METRIC_LABELS[sel.metric], style="bold")
        impls = self.model.test_impls(sel)
        if len(impls) > 1 or sel.impl != "magma":
            text.append("   Impl ", style="dim").append(sel.impl, style="bold")
            if len(impls) > 1:
                text.append(f" ({impls.index(sel.impl) + 1}/{len(impls)})", style="dim")
        kept = [name for name, flag in (("warm-up", self.keep_warmup), ("impossible", self.keep_impossible),
                                        ("untrusted", self.keep_untrusted)) if flag]
        if kept:
            text.append("   Kept ", style="dim").append(", ".join(kept), style="bold")
        if self.peak_gflops is not None:
            text.append("   Peak ", style="dim").append(f"{self.peak_gflops:g} Gflop/s", style="bold")
        if empty:
            text.append("   (no data for this choice)", style="italic")
        return text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """MAGMA keys are shown dimmed until there is something to act on."""
        if action in NEEDS_DATA and (self.model is None or self.model.empty):
            return None
        return True

    async def action_switch_metric(self) -> None:
        if self.model is not None and self.selection is not None:
            if self.selection.test in self.model.time_only:
                self.notify(f"{self.selection.test} printed times only: no Gflop/s to show", markup=False)
                return
            await self.select(toggle_metric(self.selection))

    async def action_next_cluster(self) -> None:
        if self.model is not None and self.selection is not None:
            await self.select(self.model.cycle_cluster(self.selection, 1))

    async def action_previous_cluster(self) -> None:
        if self.model is not None and self.selection is not None:
            await self.select(self.model.cycle_cluster(self.selection, -1))

    async def action_next_test(self) -> None:
        if self.model is None or self.selection is None:
            return
        if len(self.model.tests) < 2:
            self.notify(f"Only one test here: {self.selection.test}", markup=False)
            return
        await self.select(self.model.cycle_test(self.selection))

    async def action_next_impl(self) -> None:
        if self.model is None or self.selection is None:
            return
        if len(self.model.test_impls(self.selection)) < 2:
            self.notify(f"{self.selection.test} timed one implementation only: {self.selection.impl}", markup=False)
            return
        await self.select(self.model.cycle_impl(self.selection))

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
            return
        tables = self.query_one("#tables", TabbedContent)
        focused = self.focused
        in_tables = focused is not None and (focused is tables or tables in focused.ancestors)
        self.maximized = tables if in_tables else self.query_one("#plots", BoxPlotStack)

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#tables", TabbedContent).active = tab

    def action_export(self) -> None:
        if self.model is None or self.selection is None:
            return
        tab = self.query_one("#tables", TabbedContent).active
        if tab == TAB_ID:
            self.query_one(DiffTab).ask_export()
            return
        default, what = EXPORT_NAMES.get(tab, EXPORT_NAMES["tab-summary"])
        self.ask_export(default, what)

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """The tab shown: summary, comparison or findings."""
        if self.model is None or self.selection is None:
            return None
        tab = self.query_one("#tables", TabbedContent).active
        if tab == TAB_ID:
            return self.query_one(DiffTab).export_tables(fmt)
        if tab == "tab-comparison":
            return [self.model.comparison_table(self.selection)], ()
        if tab == "tab-findings":
            return [magma_stats.findings_table(self.model.result.findings)], ()
        full = fmt in ("csv", "json")  # machine-readable: all statistics, like the command line
        tables = [self.model.summary_table(self.selection, full)]
        if fmt in ("text", "markdown"):  # the same box plots as `--format text`
            return tables, (boxplots_text(self.model.summary(self.selection), self.selection.metric),)
        return tables, ()



class ComparisonView(ResultTableView):
    """The comparison table, its verdicts kept whole: where the full table does not fit the
    width, 'tied with #2' drops its '(p = ...)' (rank 2's p cell, on the next row, has it) and
    the 'of' column is left out, before an environment name is cut any further."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pair: tuple[ResultTable, ResultTable] | None = None

    def show_both(self, full: ResultTable, compact: ResultTable) -> None:
        """Show `full` where it fits the width, else `compact` (see `comparison_table`)."""
        self._pair = (full, compact)
        self._pick()

    def on_resize(self) -> None:
        if self._pair is not None and self.size.width != self._fitted_width:
            self._pick()

    def _pick(self) -> None:
        assert self._pair is not None
        full, compact = self._pair
        room = self._room()
        if not room or needed_width(full, COMPARISON_HIDDEN, self.cell_padding) <= room:
            self.show(full, hide=COMPARISON_HIDDEN, squeeze={"environment": export.MIN_SQUEEZED, "verdict": VERDICT_LEAST})
        else:
            self.show(compact, hide=(*COMPARISON_HIDDEN, *NARROW_HIDDEN), squeeze={"environment": export.MIN_SQUEEZED, "verdict": VERDICT_LEAST})


def needed_width(model: ResultTable, hide: Sequence[str], padding: int) -> int:
    """Cells `model` needs with every value whole but the environment names (cut to where they
    still differ) and headers wrapped to their longest word."""
    width = 0
    for i, column in enumerate(model.columns):
        if column.key in hide:
            continue
        texts = [model.cell_text(r, i) for r in range(len(model.rows))]
        values = export.distinct_width(texts) if column.key == "environment" else max(map(cell_len, texts), default=0)
        width += max(values, export.header_floor(column.header)) + 2 * padding
    return width
