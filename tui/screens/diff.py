"""Provides `DiffScreen`, the comparison of a baseline run with a new one (`gpuscope diff` on
screen), and `DiffPane`, what it shows: the verdict line first, one tab per table of the
report, then the findings. The kernels, MAGMA and scaling screens show the same pane in their
diff tab (`studies/diff_tab.py`).

The comparison (`tui.model.diff.diff_paths`) reads both runs and can take seconds, so it runs
in the loading worker; it never raises: what it could not compare is in the verdict and the
findings. Table cells, kernel names and paths come from files and are shown as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import ContentSwitcher, Static, TabbedContent, TabPane

from gpuscope.metrics import export
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.tui.screens.base import LoadingScreen
from gpuscope.tui.widgets.findings import FindingsPane
from gpuscope.tui.widgets.result_table import ResultTableView

if TYPE_CHECKING:
    from gpuscope.tui.model.diff import DiffOptions, DiffReport

FINDINGS_TAB = "diff-tab-findings"
FIT_THROUGH = "verdict"
"""The columns up to the verdict are fitted to the pane's width (names cut in the middle as
far as needed); the numbers after it scroll into view."""


def table_tab(index: int) -> str:
    """The id of the tab of the report's table `index`."""
    return f"diff-tab-{index}"


def verdict_table(report: DiffReport, base: str, new: str) -> ResultTable:
    """The verdict as a one-row table, so an export starts with it in every format (CSV and
    JSON included): what was compared, from where, and what the comparison says."""
    columns = (Column("kind"), Column("base"), Column("new"), Column("verdict"))
    return ResultTable("Verdict", columns, ((report.kind, base, new, report.verdict),))


def report_tables(report: DiffReport, base: str, new: str, fmt: str, shown: str | None) -> list[ResultTable]:
    """What an export of `report` writes in `fmt`: CSV holds one table, so the tab `shown`
    (its table, or the findings); every other format the verdict, every table and the findings."""
    from gpuscope.metrics.magma import stats as magma_stats  # the findings table's one home

    findings = magma_stats.findings_table(list(report.findings))
    if fmt == "csv":
        if shown == FINDINGS_TAB:
            return [findings]
        index = int(shown.rsplit("-", 1)[1]) if shown and shown.rsplit("-", 1)[1].isdigit() else 0
        return [report.tables[index]] if index < len(report.tables) else [verdict_table(report, base, new)]
    return [verdict_table(report, base, new), *report.tables, *([findings] if report.findings else [])]


def text_columns(table: ResultTable) -> tuple[str, ...]:
    """The columns cut in the middle when the table is wider than its pane (names, verdicts);
    numbers are never cut."""
    return tuple(c.key for i, c in enumerate(table.columns) if not c.is_numeric(table.column_values(i)))


class DiffPane(Vertical):
    """The verdict line, a tab per table of a `DiffReport`, and its findings."""

    DEFAULT_CSS = """
    DiffPane {
        height: 1fr;
    }
    DiffPane > .diff-verdict {
        height: auto;
        padding: 0 1;
        text-style: bold;
    }
    DiffPane > .diff-verdict.-slower {
        color: $text-error;
    }
    DiffPane > TabbedContent {
        height: 1fr;
    }
    DiffPane TabPane {
        padding: 0;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: DiffReport | None = None
        """The report shown; export reads it."""

    def compose(self) -> ComposeResult:
        yield Static(classes="diff-verdict", markup=False)
        yield TabbedContent()

    @property
    def active_tab(self) -> str | None:
        """The id of the tab shown (None before a report)."""
        return self.query_one(TabbedContent).active or None

    async def show(self, report: DiffReport) -> None:
        """Replace what is shown with `report`: tabs are made for its tables (their number
        depends on the kind compared)."""
        self.report = report
        verdict = self.query_one(".diff-verdict", Static)
        verdict.update(Text(clean(report.verdict)))
        verdict.set_class(bool(report.slower_beyond), "-slower")
        tabs = self.query_one(TabbedContent)
        await tabs.clear_panes()
        for index, table in enumerate(report.tables):
            view = ResultTableView(id=f"diff-table-{index}")
            await tabs.add_pane(TabPane(Content(clean(table.title)), view, id=table_tab(index)))
            view.show(table, squeeze={key: export.MIN_SQUEEZED for key in text_columns(table)},
                      fit_through=FIT_THROUGH if FIT_THROUGH in table.keys else None)
        pane = FindingsPane(report.findings, table_id="diff-findings-table")
        await tabs.add_pane(TabPane(f"Findings ({len(report.findings)})", pane, id=FINDINGS_TAB))
        tabs.active = table_tab(0) if report.tables else FINDINGS_TAB

    def focus_table(self) -> None:
        """Arrows then move through the first table (or the findings)."""
        tables = self.query(ResultTableView)
        if tables:
            tables.first().focus()
        else:
            self.query_one(FindingsPane).table.focus()

    def show_tab(self, tab: str) -> None:
        tabs = self.query_one(TabbedContent)
        if tabs.query(f"#{tab}"):
            tabs.active = tab

    def export_tables(self, base: str, new: str, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """What `e` writes: see `report_tables`; None before a report."""
        if self.report is None:
            return None
        return report_tables(self.report, base, new, fmt, self.active_tab), ()


class DiffScreen(LoadingScreen):
    """A baseline run and a new one compared: what got slower beyond noise, and by how much."""

    INJECTED = "(injected report)"
    STATE_PREFIX, SWITCH_ID, VIEW_ID = "diff-", "diff-switch", "diff-view"
    HELP_TITLE = "Keys: diff"
    BINDINGS = [
        Binding("e", "export", "Export", tooltip="Write the verdict and every table (CSV: the tab shown; format from the file extension)"),
        Binding("f", "findings", "Findings", tooltip="Show what could not be compared or was doubted"),
    ]
    """Diff keys; disabled until the comparison is done."""

    DEFAULT_CSS = """
    DiffScreen #diff-switch {
        height: 1fr;
    }
    DiffScreen #diff-view {
        color: $text-muted;
        padding: 0 1;
    }
    """

    LOADING_TITLE = "Diff · comparing {paths}"
    LOADING_TEXT = "Comparing {paths} ..."
    FAILED_TITLE = "Diff · could not compare {paths}"

    def __init__(self, base: str | Path, new: str | Path, *, options: DiffOptions | None = None,
                 loader: Callable[[], DiffReport] | None = None) -> None:
        """`base`: the baseline run (file or folder), `new`: the run compared with it;
        `options`: key columns and the slower-than threshold (`gpuscope diff`'s flags)."""
        super().__init__()
        self.base, self.new = Path(base), Path(new)
        self.paths = [self.base, self.new]
        self.options = options
        self._loader = loader
        self.report: DiffReport | None = None
        """The comparison; None until the worker is done."""

    def paths_text(self) -> str:
        return f"{clean(str(self.base))} → {clean(str(self.new))}"

    def compose_body(self) -> ComposeResult:
        yield DiffPane(id="diff-body")

    def read_model(self) -> DiffReport:
        if self._loader is not None:
            return self._loader()
        from gpuscope.tui.model.diff import DiffOptions, diff_paths

        return diff_paths(self.base, self.new, self.options or DiffOptions())

    async def show(self, report: DiffReport) -> None:
        self.report = report
        self.refresh_bindings()
        self.sub_title = f"Diff · {clean(report.kind)} · {self.paths_text()}"
        if not report.tables:  # nothing compared: the verdict says why, the findings what was read
            self.show_empty(report.verdict, report.findings)
            return
        self.status(describe(self.base, self.new, report))
        pane = self.query_one(DiffPane)
        await pane.show(report)
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "diff-body"
        pane.focus_table()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("export", "findings") and (self.report is None or not self.report.tables):
            return None
        return True

    def action_findings(self) -> None:
        self.query_one(DiffPane).show_tab(FINDINGS_TAB)

    def action_export(self) -> None:
        if self.report is not None:
            self.ask_export(f"diff-{export_stem(self.report.kind)}.md", "diff")

    def export_tables(self, fmt: str) -> tuple[Sequence[ResultTable], Sequence[str]] | None:
        return self.query_one(DiffPane).export_tables(str(self.base), str(self.new), fmt)


def describe(base: Path, new: Path, report: DiffReport) -> Text:
    """The status line: which run is the base, which the new one, and the kind compared."""
    text = Text()
    text.append("Base ", style="dim").append(clean(str(base)), style="bold")
    text.append("   New ", style="dim").append(clean(str(new)), style="bold")
    text.append("   Kind ", style="dim").append(clean(report.kind), style="bold")
    return text


def export_stem(kind: str) -> str:
    """A file-name-safe form of a kind ('MAGMA results' -> 'magma-results')."""
    return "-".join("".join(c if c.isalnum() else " " for c in kind.lower()).split()) or "report"
