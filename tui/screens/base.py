"""Provides `ExportingScreen` (the one `export_to`: `e` writes what a screen shows) and
`LoadingScreen`, the base of screens that read result files before showing them.

Export: a screen says what it would write in a format (`export_tables`), the dialog asks where
(`ask_export`), and `export_to` writes it atomically and says how that went (a notification,
never a traceback: a full disk or a folder without write permission is one line).

Reading can take seconds (thousands of files, a 10-million-row profile), so it runs in a worker
thread and the main thread only gets the finished model, as `Loaded`, or the reason it could
not be built, as `LoadFailed`: never a traceback. File names and error messages come from
outside: `paths_text` and `show_empty` pass them through `metrics.safe_text` (an escape
sequence in a folder name must not retitle or clear the terminal). Subclasses say how to build the model
(`read_model`) and handle the two messages (`on_loading_screen_loaded`, `..._load_failed`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher, LoadingIndicator, Static

from gpuscope.metrics import export
from gpuscope.metrics.safe_text import clean, clean_lines
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.widgets.findings import FindingsPane


class ExportingScreen(Screen[None]):
    """A screen whose `e` writes what it shows to a file the user names."""

    def export_tables(self, fmt: str) -> tuple[Sequence[ResultTable], Sequence[str]] | None:
        """The tables and the text blocks (plots as text) to write in `fmt`; None: nothing to write."""
        raise NotImplementedError

    def ask_export(self, default_path: str, what: str) -> None:
        """Ask where to write `what` (the file name offered: `default_path`), then write it."""
        self.app.push_screen(ExportModal(default_path, what), self.export_to)

    def export_to(self, path: str | None) -> None:
        """Write `export_tables` in the format `path`'s extension names; notify either way."""
        if not path:
            return
        target = Path(path).expanduser()
        fmt = export.format_for_path(target)
        shown = self.export_tables(fmt)
        if shown is None:
            return
        tables, extra = shown
        try:
            written = export.write(target, fmt, tables, extra=extra)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            self.notify(f"Could not export to {target}: {reason}", title="Export failed", severity="error", markup=False)
            return
        self.notify(f"Wrote {fmt} to {written}", title="Exported", markup=False)


class LoadingScreen(ExportingScreen):
    INJECTED = "(injected)"
    """What `paths_text` says when a test injects the model instead of paths."""

    class Loaded(Message):
        """The worker read the files and built the model."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

    class LoadFailed(Message):
        """The worker could not build a model at all (e.g. a bad --path-pattern or --group-by)."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    paths: list[Any]

    STATE_PREFIX = ""
    """Prefix of the ids of the states below (`loading`, `empty`, `empty-message`,
    `empty-findings`); stylesheets and tests use them."""
    SWITCH_ID = ""
    """Id of the screen's ContentSwitcher that holds the states and the body."""
    VIEW_ID = ""
    """Id of the one-line Static that says what is shown ("Nothing to show" when empty)."""

    def compose_states(self) -> ComposeResult:
        """The loading indicator and the empty state (a message and the findings that explain
        it): the first children of the screen's ContentSwitcher, before its body."""
        prefix = self.STATE_PREFIX
        yield LoadingIndicator(id=f"{prefix}loading")
        with Vertical(id=f"{prefix}empty"):
            yield Static(id=f"{prefix}empty-message", markup=False)
            yield FindingsPane(id=f"{prefix}empty-findings")

    def show_empty(self, text: str, findings: Sequence[object]) -> None:
        """Switch to the empty state: `text` says why (cleaned here: it names files and holds
        error messages), `findings` (if any) what was skipped."""
        prefix = self.STATE_PREFIX
        self.query_one(f"#{self.VIEW_ID}", Static).update(Text("Nothing to show"))
        self.query_one(f"#{prefix}empty-message", Static).update(Text(clean_lines(text)))
        pane = self.query_one(f"#{prefix}empty-findings", FindingsPane)
        pane.show(findings)  # type: ignore[arg-type]
        pane.display = bool(findings)
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = f"{prefix}empty"

    def read_model(self) -> Any:
        """Build the model; runs in the worker thread."""
        raise NotImplementedError

    def error_text(self, error: Exception) -> str:
        return f"{type(error).__name__}: {error}"

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def load(self) -> None:
        try:
            model = self.read_model()
        except Exception as error:  # noqa: BLE001 - shown to the user instead of a traceback
            self.post_message(self.LoadFailed(self.error_text(error)))
        else:
            self.post_message(self.Loaded(model))

    def paths_text(self) -> str:
        """The paths read, cleaned for display (titles, loading and empty messages)."""
        return ", ".join(clean(p) for p in self.paths) or self.INJECTED
