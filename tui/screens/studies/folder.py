"""Provides `FolderSummaryScreen` (one page about a folder: files per kind, what could not be
read, the logs' errors and warnings) and `StudyModal` (which study `a` opens when a folder
holds several kinds).

The recognitions come from the browser (nothing is recognised twice); the logs are read in the
loading worker, since a folder can hold thousands of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ContentSwitcher, Label, OptionList, TabbedContent, TabPane
from textual.widgets.option_list import Option

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.parsers.files import display_name
from gpuscope.tui.model.folder import STUDIES, read_logs, summary_tables
from gpuscope.tui.screens.base import LoadingScreen
from gpuscope.tui.widgets.result_table import ResultTableView

TABS = (("tab-kinds", "Kinds", "kinds"), ("tab-failed", "Not read", "failed"), ("tab-logs", "Logs", "logs"),
        ("tab-lines", "Errors and warnings", "lines"))
"""(tab id, label, table id), in the order of `summary_tables`."""


class FolderSummaryScreen(LoadingScreen):
    """Four tables about one folder; Escape goes back to the browser."""

    STATE_PREFIX, SWITCH_ID, VIEW_ID = "summary-", "summary-switch", "summary-view"
    HELP_TITLE = "Keys: folder summary"
    DEFAULT_CSS = """
    FolderSummaryScreen #summary-view {
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    FolderSummaryScreen #summary-switch, FolderSummaryScreen TabbedContent {
        height: 1fr;
    }
    FolderSummaryScreen TabPane {
        padding: 0;
    }
    """
    BINDINGS = [Binding("e", "export", "Export", tooltip="Write the table shown (format from the file extension)")]

    def __init__(self, folder: Path, recognitions: Sequence[Any], titles: dict[str, str], label: Path | None = None) -> None:
        """`folder`: as recognition names its files (resolved); `label`: as the user typed it."""
        super().__init__()
        self.folder = folder
        self.paths = [display_name(label or folder)]
        self.recognitions = list(recognitions)
        self.titles = titles
        self.tables: list[ResultTable] = []

    LOADING_TITLE = "Folder summary · {paths}"
    LOADING_TEXT = "Reading the logs below {paths} ..."
    FAILED_TEXT = "Could not summarise {paths}.\n{error}"

    def compose_body(self) -> ComposeResult:
        with TabbedContent(id="summary-tabs"):
            for tab, label, table in TABS:
                with TabPane(label, id=tab):
                    yield ResultTableView(id=f"summary-{table}")

    def read_model(self) -> list[ResultTable]:
        return summary_tables(self.folder, self.recognitions, self.titles, read_logs(self.recognitions, self.folder))

    def show(self, tables: list[ResultTable]) -> None:
        self.tables = tables
        tabs = self.query_one("#summary-tabs", TabbedContent)
        for (tab, label, table_id), table in zip(TABS, self.tables):
            self.query_one(f"#summary-{table_id}", ResultTableView).show(table, squeeze=("file", "why", "text"))
            tabs.get_tab(tab).label = Text(f"{label} ({len(table.rows)})")
        kinds, failed, logs, lines = self.tables
        errors = sum(row[1] or 0 for row in logs.rows)
        warnings = sum(row[2] or 0 for row in logs.rows)
        self.status(f"{kinds.title} · {len(failed.rows)} not read · {len(logs.rows)} logs: {errors} error and {warnings} warning lines")
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "summary-tabs"

    def action_export(self) -> None:
        if not self.tables:
            return
        self.ask_export("folder-summary.csv", "folder summary table")

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """The tab shown; text and markdown get all four tables."""
        if not self.tables:
            return None
        active = self.query_one("#summary-tabs", TabbedContent).active
        tables = self.tables if fmt in ("text", "markdown") else [t for (tab, _, _), t in zip(TABS, self.tables) if tab == active]
        return tables, ()


class StudyModal(ModalScreen[str | None]):
    """Which study to open: one line per kind found (with its file count), and the summary."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    StudyModal {
        align: center middle;
    }
    StudyModal > Vertical {
        width: 64;
        max-width: 90%;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    StudyModal OptionList {
        height: auto;
        max-height: 12;
    }
    """

    def __init__(self, folder: Path, counts: dict[str, int]) -> None:
        """`counts`: study screen -> files found below `folder`."""
        super().__init__()
        self.folder = folder
        self.counts = counts

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Analyse {clean(display_name(self.folder.name or self.folder))}: which files?", markup=False)
            options = [Option(Text(f"{STUDIES[screen]}  ({n} files)"), id=screen) for screen, n in self.counts.items()]
            options.append(Option(Text("Folder summary  (kinds, what failed, warnings in logs)"), id="summary"))
            yield OptionList(*options)

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
