"""Provides `HistoryPlot`: a few `History` series as braille line plots over time.

Drawn by `tui.braille` straight into strips (the line API), not by plotext: plotext's figure
build costs tens of ms per redraw at 200x50, which a plot redrawn every refresh cannot afford
(see `tui/model/braille.py`). Percent series (0-100); the left edge is the oldest sample shown, the
right edge the newest; at most two samples per cell (`History.downsample` keeps each bucket's
maximum, so a short spike stays visible).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from gpuscope.metrics.history import History
from gpuscope.tui.model.braille import axis_label, raster

COLORS = ("cyan", "magenta", "yellow")
AXIS_W = 4
"""`100┤`: the y labels and the axis line."""
_LINE_STYLES = tuple(Style(color=c) for c in COLORS)
_DIM = Style(dim=True)


class HistoryPlot(Widget):
    """Percent series (0-100) against time, newest at the right edge."""

    DEFAULT_CSS = """
    HistoryPlot {
        height: 1fr;
        min-height: 6;
        border-top: hkey $panel;
        border-title-color: $text;
    }
    """

    def __init__(self, title: str, series: Sequence[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.plot_title = title
        self.series = tuple(series)
        """(history name, legend label) pairs, drawn in this order."""
        self.points_drawn = 0
        """Values in the last replot, for tests of the downsampling."""
        self.history: History | None = None
        self._strips: list[Strip] = []

    def on_mount(self) -> None:
        # The legend is the border title, in the lines' colours: a legend inside the plot
        # would hide the newest samples.
        legend = Text().append(self.plot_title, style="bold")
        for (_, label), color in zip(self.series, COLORS):
            legend.append("  ━ ", style=color).append(label)
        self.border_title = legend

    def on_resize(self) -> None:
        if self.history is not None:  # as many points as the new size can show
            self.replot(self.history)

    def replot(self, history: History) -> None:
        """Redraw from `history` (main thread only)."""
        self.history = history
        self._strips = self._draw(history, self.size.width, self.size.height)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        return self._strips[y] if 0 <= y < len(self._strips) else Strip.blank(self.size.width)

    def _draw(self, history: History, width: int, height: int) -> list[Strip]:
        plot_w, plot_h = width - AXIS_W, height - 1  # the last line is the time axis
        self.points_drawn = 0
        if plot_w < 2 or plot_h < 1:
            return []
        times = history.times()
        if times.size < 2:
            note = "collecting…"
            blank = [Strip.blank(width)] * max(0, height - 1)
            return [*blank, Strip([Segment(note.center(width)[:width], _DIM)])]
        points = 2 * plot_w
        grid = raster([history.downsample(name, points) for name, _ in self.series], plot_w, plot_h)
        self.points_drawn = grid.points
        strips = [Strip([Segment(_y_label(row, plot_h), _DIM), *_row_segments(text, grid.owner[row])])
                  for row, text in enumerate(grid.chars)]
        left = f"-{axis_label(float(times[-1] - times[0]))}"
        axis = " " * AXIS_W + left + "now".rjust(plot_w - len(left))
        strips.append(Strip([Segment(axis[:width], _DIM)]))
        return strips


def _y_label(row: int, rows: int) -> str:
    """`100┤` on the top line, ` 50┤` in the middle, `  0┤` at the bottom, `   │` between."""
    if row == 0:
        return "100┤"
    if row == rows - 1:
        return "  0┤"
    if rows >= 5 and row == (rows - 1) // 2:
        return " 50┤"
    return "   │"


def _row_segments(text: str, owner: np.ndarray) -> list[Segment]:
    """One segment per run of cells of one series' colour. A blank cell joins the run before
    it (or the first run): a space looks the same in any colour, and every extra segment
    costs again in Textual's line filters and the compositor at each redraw."""
    drawn = owner >= 0
    if not drawn.any():
        return [Segment(text)]
    filled = owner[np.maximum.accumulate(np.where(drawn, np.arange(owner.size), 0))]
    filled[: np.argmax(drawn)] = owner[np.argmax(drawn)]
    cuts = [0, *(np.flatnonzero(filled[1:] != filled[:-1]) + 1).tolist(), len(text)]
    return [Segment(text[a:b], _LINE_STYLES[filled[a] % len(COLORS)]) for a, b in zip(cuts[:-1], cuts[1:])]
