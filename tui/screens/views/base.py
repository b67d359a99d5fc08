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

from textual import events
from textual.binding import Binding

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

    HORIZONTAL_BREAKPOINTS = []
    """None: a view's layout is the same at any width. The app's breakpoints gave each view a
    width class on its first resize, and adding it restyled every node just styled as mounted."""

    def __init__(self, path: str | Path, recognition: Any = None) -> None:
        """`recognition`: the registry's `Recognition` of the file, when the browser has one
        (its kind and reason are shown in the title); optional."""
        super().__init__()
        self.path = Path(path)
        self.paths = [display_name(self.path)]
        self.recognition = recognition

    LOADING_TITLE = "{kind} · {name}{reason}"

    @property
    def name_text(self) -> str:
        """The file's name, cleaned for display."""
        return clean(display_name(self.path.name or self.path))

    def text_fields(self) -> dict[str, str]:
        """Also `{kind}`, `{name}` (the file's name) and `{reason}` (' · ' and why the browser
        took it for this kind, when it says)."""
        reason = getattr(self.recognition, "reason", "")
        return {**super().text_fields(), "kind": self.KIND, "name": self.name_text, "reason": f" · {clean(reason)}" if reason else ""}

    def on_resize(self, event: events.Resize) -> None:
        """A view's first layout sends the view a Resize to the size it was just laid out at;
        Textual's handler would lay it and the screens under it out again, unchanged (a sixth
        of the calls of opening a view then). Any other size (the terminal's) is Textual's."""
        if event.size == self.outer_size:
            event.prevent_default()

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.exit()
