"""Provides `SetupScreen`: the watch screen's F2, htop's setup. Which process-table columns
show, how often the watch refreshes, and the theme; Save applies them and keeps them in the
config file (`tui.model.settings`), Cancel or Escape leaves everything as it was.

The three choices sit side by side so the dialog fits an 80x24 terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, RadioButton, RadioSet, Select, SelectionList, Static

from gpuscope.metrics.snapshot_tables import PROCESS_COLUMNS
from gpuscope.tui.model.settings import HIDEABLE, Settings
from gpuscope.tui.model.watch import INTERVALS

TITLES = {c.key: c.title for c in PROCESS_COLUMNS}


class SetupScreen(ModalScreen[Settings | None]):
    """Columns, refresh period and theme; dismisses with the new `Settings`, or None."""

    DEFAULT_CSS = """
    SetupScreen { align: center middle; }
    #setup-dialog { width: 76; max-width: 98%; height: auto; max-height: 98%; padding: 0 1; border: thick $primary; background: $surface; }
    #setup-title { text-style: bold; margin-bottom: 1; }
    #setup-sections { height: auto; }
    #setup-sections > Vertical { width: 1fr; height: auto; margin-right: 1; }
    .setup-heading { text-style: bold; color: $text-primary; }
    #setup-columns { height: auto; max-height: 10; }
    #setup-refresh { width: 100%; }
    #setup-path { color: $text-muted; margin: 1 0 0 0; }
    #setup-buttons { height: auto; margin-top: 1; align-horizontal: right; }
    #setup-buttons Button { margin-left: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", tooltip="Close without changing anything")]

    def __init__(self, current: Settings, interval: float, theme: str, themes: Sequence[str], path: Path) -> None:
        """`current`: the settings in force (what is not set there comes from `interval` and
        `theme`, the screen's and the app's now); `themes`: the names to choose from; `path`:
        where Save writes (said in the dialog)."""
        super().__init__()
        self.current = current
        self.interval = min(INTERVALS, key=lambda i: abs(i - interval))
        self.theme = theme
        self.themes = sorted(set(themes) | {theme})
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(id="setup-dialog"):
            yield Label("Setup", id="setup-title", markup=False)
            with Horizontal(id="setup-sections"):
                with Vertical():
                    yield Static("Columns", classes="setup-heading", markup=False)
                    yield SelectionList[str](*((TITLES[k], k, k not in self.current.hidden_columns) for k in HIDEABLE),
                                             id="setup-columns", compact=True)
                with Vertical():
                    yield Static("Refresh", classes="setup-heading", markup=False)
                    with RadioSet(id="setup-refresh", compact=True):
                        for i in INTERVALS:
                            yield RadioButton(f"every {i:g} s", value=i == self.interval)
                with Vertical():
                    yield Static("Theme", classes="setup-heading", markup=False)
                    yield Select([(t, t) for t in self.themes], value=self.theme, allow_blank=False, id="setup-theme", compact=True)
            yield Static(Text(f"PID and COMMAND always show. Save keeps these in {self.path}"), id="setup-path", markup=False)
            with Horizontal(id="setup-buttons"):
                yield Button("Save", id="setup-save", variant="primary", compact=True)
                yield Button("Cancel", id="setup-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#setup-columns").focus()

    def chosen(self) -> Settings:
        """What the dialog shows now."""
        shown = set(self.query_one("#setup-columns", SelectionList).selected)
        pressed = self.query_one("#setup-refresh", RadioSet).pressed_index
        theme = self.query_one("#setup-theme", Select).value
        return Settings(
            hidden_columns=frozenset(k for k in HIDEABLE if k not in shown),
            interval=INTERVALS[pressed] if pressed >= 0 else self.interval,
            theme=theme if isinstance(theme, str) else self.theme,
        )

    @on(Button.Pressed, "#setup-save")
    def _save(self) -> None:
        self.dismiss(self.chosen())

    @on(Button.Pressed, "#setup-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
