"""Provides updates that cost nothing when nothing changed.

The watch screen refreshes every second; each pane's text and border title are usually the
same as a second ago. Textual repaints (and for `Static.update`, re-runs layout) on every
assignment, so these compare with what was last set first. Comparing with the widget's own
`border_title` does not work: Textual stores it converted, so it never equals the `Text` given.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static


def same_text(old: Text | None, new: Text) -> bool:
    """Same characters and same styles (`Text ==` compares the characters only)."""
    return old is not None and old == new and old.spans == new.spans


def set_text(widget: Static, text: Text) -> None:
    """Update a Static only when its text changed, and re-run layout only when its number of
    lines did: a full layout every tick was most of the watch screen's idle CPU cost."""
    old = getattr(widget, "_gpuscope_text", None)
    if same_text(old, text):
        return
    lines_changed = old is None or old.plain.count("\n") != text.plain.count("\n")
    widget._gpuscope_text = text  # type: ignore[attr-defined]
    widget.update(text, layout=lines_changed)


def set_border_title(widget: Widget, title: Text) -> None:
    """Set a border title only when it changed (each new title repaints the whole pane)."""
    if same_text(getattr(widget, "_gpuscope_title", None), title):
        return
    widget._gpuscope_title = title  # type: ignore[attr-defined]
    widget.border_title = title
