"""Provides `HelpScreen`: the keys of the screen it was opened from, and what they do.

The list is built from the live bindings, so it never drifts from the footer.
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static


class HelpScreen(ModalScreen[None]):
    """Modal list of (key, action, details); any of escape, q, ? or F1 closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "close", "Close"),
    ]
    """Close with the key that opened it, or escape."""

    def __init__(self, keys: Sequence[tuple[str, str, str]], title: str = "Keys") -> None:
        super().__init__()
        self.keys = list(keys)
        """(key, description, details) rows."""
        self.help_title = title

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label(self.help_title, id="help-title", markup=False)
            table: DataTable[Text] = DataTable(id="help-keys", cursor_type="none", show_cursor=False)
            table.add_columns(Text("Key"), Text("Action"), Text("Details"))
            for key, description, details in self.keys:
                table.add_row(Text(key, style="bold"), Text(description), Text(details))
            yield table
            yield Static(
                "Ctrl+P opens the command palette. Escape closes this help.",
                id="help-hint",
                markup=False,
            )

    def action_close(self) -> None:
        self.dismiss(None)
