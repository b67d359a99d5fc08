"""Provides `FileScreen`: the base of the generic views the browser opens on one file.

A view is pushed over the browser, so Escape pops it and the browser is where it was; `q`
and `?` are the app's. The file is read in a thread worker (never on the UI thread: a file can
be gigabytes or a slow network mount), and what cannot be shown is the empty state with the
reason and the findings, never a traceback. Names and messages come from outside, so they pass
through `metrics.safe_text` (via `LoadingScreen`). Layout shared by every view is here, so the
views add only their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.files import display_name
from gpuscope.tui.screens.base import LoadingScreen


class FileScreen(LoadingScreen):
    """One file, a status line under the header, the view's body, the keys footer."""

    STATE_PREFIX, SWITCH_ID, VIEW_ID = "view-", "view-switch", "view-status"
    KIND = "File"
    """What the title calls the view (`Table`, `Log` ...)."""

    DEFAULT_CSS = """
    FileScreen #view-status {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text;
    }
    FileScreen #view-switch {
        height: 1fr;
    }
    FileScreen #view-empty {
        padding: 1 2;
    }
    FileScreen #view-empty-message {
        height: auto;
        color: $text-warning;
        margin-bottom: 1;
    }
    """

    BINDINGS = [Binding("escape", "back", "Back", tooltip="Close this view: back to where it was opened from")]
    """Escape: back to the browser (or leave, when the view is the only screen)."""

    def __init__(self, path: str | Path, recognition: Any = None) -> None:
        """`recognition`: the registry's `Recognition` of the file, when the browser has one
        (its kind and reason are shown in the title); optional."""
        super().__init__()
        self.path = Path(path)
        self.paths = [display_name(self.path)]
        self.recognition = recognition

    @property
    def name_text(self) -> str:
        """The file's name, cleaned for display."""
        return clean(display_name(self.path.name or self.path))

    def on_mount(self) -> None:
        reason = getattr(self.recognition, "reason", "")
        self.sub_title = f"{self.KIND} · {self.name_text}" + (f" · {clean(reason)}" if reason else "")
        self.status(Text(f"Reading {self.paths_text()} ..."))

    def status(self, text: Text | str) -> None:
        """Replace the one-line status under the header (plain text, never markup)."""
        self.query_one(f"#{self.VIEW_ID}", Static).update(text if isinstance(text, Text) else Text(text))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.exit()
