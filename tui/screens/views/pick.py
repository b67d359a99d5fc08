"""Provides `view_for`: the generic view that shows a file, by the registry's screen name.

The browser asks the registry which screen a file needs (`Recognition.screen`) and calls
this for the generic ones; the specialist screens (magma, kernels, scaling) it opens itself.
One mapping, so a new generic view is one line here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from textual.screen import Screen

from gpuscope.tui.screens.views.image import ImageViewScreen
from gpuscope.tui.screens.views.log import LogViewScreen, TextViewScreen
from gpuscope.tui.screens.views.markdown import MarkdownViewScreen
from gpuscope.tui.screens.views.pdf import PdfViewScreen
from gpuscope.tui.screens.views.table import TableViewScreen

VIEWS: dict[str, Callable[..., Screen[Any]]] = {
    "table": TableViewScreen,
    "log": LogViewScreen,
    "text": TextViewScreen,  # the log view (tail first, any size), titled Text
    "markdown": MarkdownViewScreen,
    "image": ImageViewScreen,
    "pdf": PdfViewScreen,
}
"""Registry screen name -> view; each takes (path, recognition)."""


def view_for(path: str | Path, kind: str | None, recognition: Any = None, **options: Any) -> Screen[Any] | None:
    """The view for `path` when `kind` (a registry screen name) is a generic one, else None.
    `options` go to the view (`marks=` for the table view's expected-range cells)."""
    view = VIEWS.get(kind or "")
    return None if view is None else view(path, recognition, **options)
