"""Provides `FindingsPane`: what the reader skipped or doubted (failed, warm-up, unreadable...).

A table (severity, kind, rows, message, file) and, under it, the highlighted finding in full,
wrapped, because messages are longer than any pane is wide. Severity is a word (readable
without colour) tinted with the theme's `$error` / `$warning` / `$primary`, re-read when the
theme changes. File names and messages come from outside and are shown as plain `Text`.
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.color import Color, ColorParseError
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.safe_text import clean

SEVERITY_THEME_VARIABLE = {"error": "error", "warning": "warning", "info": "primary"}


class FindingsTable(DataTable[Text]):
    """One row per finding: severity, kind, rows it concerns, message, file[:line]."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        super().__init__(**kwargs)
        self.findings: list[Finding] = []
        """Findings shown, errors first."""

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._fill())

    def show(self, findings: Sequence[Finding]) -> None:
        self.findings = sort_findings(list(findings))
        self._fill()

    def severity_text(self, severity: str) -> Text:
        variable = SEVERITY_THEME_VARIABLE.get(severity, "foreground")
        try:
            colour = Color.parse(self.app.theme_variables[variable]).rich_color
        except (KeyError, ColorParseError):
            colour = None
        return Text(clean(severity), style=Style(color=colour, bold=True))

    def _fill(self) -> None:
        row = self.cursor_row
        self.clear(columns=True)
        for title in ("Severity", "Kind", "Rows", "Message", "File"):
            self.add_column(Text(title, justify="right" if title == "Rows" else "left"), key=title.lower())
        for finding in self.findings:
            self.add_row(
                self.severity_text(finding.severity),
                Text(clean(finding.kind)),
                Text(str(finding.count), justify="right"),
                Text(clean(finding.message)),
                Text(clean(finding.where())),
            )
        if self.findings:
            self.move_cursor(row=min(row, len(self.findings) - 1))


class FindingsPane(Vertical):
    """The findings table and the highlighted finding in full."""

    DEFAULT_CSS = """
    FindingsPane > FindingsTable {
        height: 1fr;
        min-height: 4;
    }
    FindingsPane > .finding-detail {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        border-top: hkey $panel;
        color: $text-muted;
    }
    """

    def __init__(self, findings: Sequence[Finding] | None = None, *, table_id: str | None = None, **kwargs: Any) -> None:
        """`findings`: shown once mounted (a pane made when there is something to show)."""
        super().__init__(**kwargs)
        self._table_id = table_id
        self._findings = findings

    def compose(self) -> ComposeResult:
        yield FindingsTable(id=self._table_id)
        yield Static(classes="finding-detail", markup=False)

    def on_mount(self) -> None:
        if self._findings is not None:
            self.show(self._findings)

    @property
    def table(self) -> FindingsTable:
        return self.query_one(FindingsTable)

    def show(self, findings: Sequence[Finding]) -> None:
        self._findings = findings
        if not self.children:  # not composed yet (just mounted): `on_mount` shows them
            return
        self.table.show(findings)
        self.query_one(".finding-detail", Static).display = bool(findings)
        self._detail(0)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def _detail(self, row: int) -> None:
        findings = self.table.findings
        if not 0 <= row < len(findings):
            return
        finding = findings[row]
        text = Text()
        text.append_text(self.table.severity_text(finding.severity))
        if finding.where():
            text.append(f"  {clean(finding.where())}")
        text.append("\n" + clean(finding.message))
        self.query_one(".finding-detail", Static).update(text)
