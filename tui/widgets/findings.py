"""Provides `FindingsTable`: what the reader skipped or doubted (failed, warm-up, unreadable...).

Severity is a word (readable without colour) tinted with the theme's `$error` / `$warning` /
`$primary`, re-read when the theme changes. File names and messages come from outside and
are shown as plain `Text`.
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.style import Style
from rich.text import Text
from textual.color import Color, ColorParseError
from textual.widgets import DataTable

from gpuscope.metrics.findings import Finding, sort_findings
from gpuscope.metrics.safe_text import clean

SEVERITY_THEME_VARIABLE = {"error": "error", "warning": "warning", "info": "primary"}


class FindingsTable(DataTable[Text]):
    """One row per finding: severity, kind, rows it concerns, file[:line], message."""

    DEFAULT_CSS = """
    FindingsTable {
        height: 1fr;
    }
    """

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

    def _severity(self, severity: str) -> Text:
        variable = SEVERITY_THEME_VARIABLE.get(severity, "foreground")
        try:
            colour = Color.parse(self.app.theme_variables[variable]).rich_color
        except (KeyError, ColorParseError):
            colour = None
        return Text(severity, style=Style(color=colour, bold=True))

    def _fill(self) -> None:
        self.clear(columns=True)
        for title in ("Severity", "Kind", "Rows", "File", "Message"):
            self.add_column(Text(title, justify="right" if title == "Rows" else "left"), key=title.lower())
        for finding in self.findings:
            self.add_row(
                self._severity(finding.severity),
                Text(clean(finding.kind)),
                Text(str(finding.count), justify="right"),
                Text(clean(finding.where())),
                Text(clean(finding.message)),
            )
