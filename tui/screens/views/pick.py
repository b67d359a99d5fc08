"""Provides `view_for`: the generic view that shows a file, by the registry's screen name.

The browser asks the registry which screen a file needs (`Recognition.screen`) and calls
this for the generic ones; the specialist screens (magma, kernels, scaling) it opens itself.
One mapping, so a new generic view is one line here. A view's module is imported when it is
first asked for (each pulls its own libraries: pandas, Pillow, pypdf...); `import_views` imports
them all ahead, which the browser does in a thread once it is idle, so Enter finds them loaded.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from textual.screen import Screen

VIEWS: dict[str, tuple[str, str]] = {
    "table": ("table", "TableViewScreen"),
    "log": ("log", "LogViewScreen"),
    "text": ("log", "TextViewScreen"),  # the log view (tail first, any size), titled Text
    "markdown": ("markdown", "MarkdownViewScreen"),
    "image": ("image", "ImageViewScreen"),
    "pdf": ("pdf", "PdfViewScreen"),
}
"""Registry screen name -> (module in this package, view class); each takes (path, recognition)."""


def _module(name: str) -> Any:
    return importlib.import_module(f"{__package__}.{name}")


def import_views() -> None:
    """Import every view's module (and so its libraries) now."""
    for name in dict.fromkeys(module for module, _ in VIEWS.values()):
        _module(name)


def view_for(path: str | Path, kind: str | None, recognition: Any = None, **options: Any) -> Screen[Any] | None:
    """The view for `path` when `kind` (a registry screen name) is a generic one, else None.
    `options` go to the view (`marks=` for the table view's expected-range cells)."""
    if kind not in VIEWS:
        return None
    module, name = VIEWS[kind]
    view = getattr(_module(module), name)
    return view(path, recognition, **options)
