"""Provides `ShareBars`: horizontal bars of the longest kernels' share of kernel time.

Drawn by `kernel_plots.share_bars` (shared with the text export) at the widget's current
width, so a resize redraws it; names are plain text, never markup.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.text import Text
from textual.widget import Widget

from gpuscope.tui.render.kernel_plots import BAR_ROWS, share_bars


class ShareBars(Widget):
    """Time share of the `BAR_ROWS` longest rows of the ranking shown."""

    DEFAULT_CSS = """
    ShareBars {
        height: auto;
        max-height: 12;
        padding: 0 1;
        border-top: hkey $panel;
        border-title-color: $text;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.frame: pd.DataFrame = pd.DataFrame()
        """The ranking rows drawn (any order: the longest are picked)."""
        self.label = "kernel"

    def show(self, frame: pd.DataFrame, label: str = "kernel") -> None:
        self.frame, self.label = frame, label
        self.border_title = Text(f"Time share: longest {label}s")
        self.refresh(layout=True)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return max(1, min(BAR_ROWS, len(self.frame)))

    def render(self) -> Text:
        return share_bars(self.frame, max(20, self.content_size.width), label=self.label)
