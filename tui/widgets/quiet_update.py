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


def _same(old: Text | None, new: Text) -> bool:
    return old is not None and old == new and old.spans == new.spans


def set_text(widget: Static, text: Text) -> None:
    """Update a Static only when its text changed, and re-run layout only when its number of
    lines did: a full layout every tick was most of the watch screen's idle CPU cost."""
    old = getattr(widget, "_gpuscope_text", None)
    if _same(old, text):
        return
    lines_changed = old is None or old.plain.count("\n") != text.plain.count("\n")
    widget._gpuscope_text = text  # type: ignore[attr-defined]
    widget.update(text, layout=lines_changed)


def set_border_title(widget: Widget, title: Text) -> None:
    """Set a border title only when it changed (each new title repaints the whole pane)."""
    if _same(getattr(widget, "_gpuscope_title", None), title):
        return
    widget._gpuscope_title = title  # type: ignore[attr-defined]
    widget.border_title = title
