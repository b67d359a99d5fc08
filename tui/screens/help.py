"""Provides `HelpScreen`: the keys of the screen it was opened from, and what they do.

The list is built from the live bindings, so it never drifts from the footer; the keys of the
widget focused below (the process table's cursor keys, a table's) follow the screen's, so
every key that does something there is listed. The details wrap to the dialog's width (a `DataTable` cut them: at 80 columns every line ended mid-word),
and the list scrolls when it is taller than the terminal.
"""

from __future__ import annotations

from typing import Sequence

from rich import box
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    """Modal list of (key, action, details); any of escape, q, ? or F1 closes it."""

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "close", "Close"),
    ]
    """Close with the key that opened it, or escape."""

    def __init__(self, keys: Sequence[tuple[str, str, str]], title: str = "Keys") -> None:
        super().__init__()
        self.keys = _merged(keys)
        """(key, description, details) rows, one per description."""
        self.help_title = title

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            yield Label(self.help_title, id="help-title", markup=False)
            with VerticalScroll(id="help-keys"):
                yield Static(self.keys_table(), id="help-list")
            yield Static(
                "Ctrl+P opens the command palette. Escape closes this help.",
                id="help-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        """Add the keys of the widget focused on the screen below (not known when the app
        built the list: its bindings are the widget's, not the screen's)."""
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        focused = below.focused if below is not None else None
        if focused is None:
            return
        where = f"In the {focused_name(focused)}"
        listed = {k for key, _, _ in self.keys for k in key.split(" / ")}
        extra = []
        for binding in type(focused).BINDINGS:  # its own keys, not those it inherits (no sideways scroll here)
            if not isinstance(binding, Binding) or not binding.description or binding.system:
                continue
            keys = [self.app.get_key_display(Binding(key, binding.action)) for key in binding.key.split(",")]
            keys = [k for k in keys if k not in listed]
            if keys:
                listed.update(keys)
                extra.append((" / ".join(keys), binding.description, binding.tooltip or where))
        if extra:
            self.keys = _merged([*self.keys, *extra])
            self.query_one("#help-list", Static).update(self.keys_table())

    def keys_table(self) -> Table:
        """Key and action whole, details wrapped at word boundaries to the width left."""
        table = Table(box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False)
        table.add_column("Key", no_wrap=True, style="bold")
        table.add_column("Action", no_wrap=True)
        table.add_column("Details", ratio=1, overflow="fold")
        for key, description, details in self.keys:
            table.add_row(Text(key), Text(description), Text(details))
        return table

    def action_close(self) -> None:
        self.dismiss(None)


def focused_name(widget: object) -> str:
    """`process table` for a `ProcessTable`: the widget's class in words."""
    name = type(widget).__name__
    return "".join(f" {c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def _merged(keys: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """One row per description: a screen's own key for an app action (watch's F10 for Quit)
    joins the app's row instead of listing Quit twice; the first details are kept."""
    rows: dict[str, tuple[list[str], str]] = {}
    for key, description, details in keys:
        known, first = rows.setdefault(description, ([], details))
        known.extend(k for k in key.split(" / ") if k not in known)
        if not first and details:
            rows[description] = (known, details)
    return [(" / ".join(known), description, details) for description, (known, details) in rows.items()]
