"""Provides `ExportModal`: asks where to write an export; the caller does the writing.

The format follows the file extension (`.csv`, `.md`, `.json`, anything else is text), so the
dialog only needs a path. Dismisses with the path, or `None` when cancelled. A file that is
there already is never replaced without asking: the first Export asks (the button becomes
Replace), a second one on the same path confirms, and any edit of the path asks again.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from gpuscope.metrics import export


class ExportModal(ModalScreen[str | None]):
    """A small dialog with a path field, Export and Cancel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    """Escape closes the dialog without writing anything."""

    def __init__(self, default_path: str, what: str = "summary") -> None:
        super().__init__()
        self.default_path = default_path
        self.what = what
        self._overwrite_ok: str | None = None
        """A path the user confirmed overwriting (by submitting it a second time)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="export-dialog"):
            yield Label(f"Export {self.what}", id="export-title", markup=False)
            yield Input(self.default_path, id="export-path", placeholder="file path")
            yield Static(self._format_hint(self.default_path), id="export-format", markup=False)
            with Horizontal(id="export-buttons"):
                yield Button("Export", id="export-ok", variant="primary")
                yield Button("Cancel", id="export-cancel")

    @staticmethod
    def _format_hint(path: str) -> str:
        fmt = export.format_for_path(path) if path.strip() else "text"
        return f"Format: {fmt}  (.csv .md .json, anything else is text)"

    @on(Input.Changed, "#export-path")
    def _path_changed(self, event: Input.Changed) -> None:
        self._overwrite_ok = None
        self.query_one("#export-format", Static).update(self._format_hint(event.value))
        button = self.query_one("#export-ok", Button)
        button.label, button.variant = "Export", "primary"

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export-ok")
    def _submit(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        # Nothing is lost by accident: an existing file is only replaced on a second Export.
        if path and Path(path).expanduser().exists() and self._overwrite_ok != path:
            self._overwrite_ok = path
            self.query_one("#export-format", Static).update(f"{path} exists: replace it? Enter or Replace replaces it, Escape cancels")
            button = self.query_one("#export-ok", Button)
            button.label, button.variant = "Replace", "error"
            return
        self.dismiss(path or None)

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
