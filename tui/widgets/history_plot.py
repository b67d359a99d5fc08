"""Provides `HistoryPlot`: a few `History` series as braille line plots over a fixed time window
(the last 5 minutes unless `w` switches it), in the theme's colours.

Drawn by `tui.braille` straight into strips (the line API), not by plotext: plotext's figure
build costs tens of ms per redraw at 200x50, which a plot redrawn every refresh cannot afford
(see `tui/render/braille.py`). Percent series (0-100); the left edge is `window` seconds before the
newest sample, the right edge the newest; two time slices per cell (`History.binned` keeps each
slice's maximum, so a short spike stays visible; slices between two samples one sampling period
apart are joined by the line between them). A history shorter than the window fills the
right part only, so the time scale never changes under the reader.

A replay sets `span` (the whole recording, clock times at the ends) and `cursor` (a mark at
the sample shown); the lines are then drawn once per size and only the mark moves.
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
from gpuscope.tui.render.braille import axis_label, raster

THEME_COLORS = ("primary", "success", "warning")
"""The lines' colours: theme variables, so the plots follow the theme (ctrl+t). Not
`secondary`: textual-dark's (#004578) hardly shows on its dark background."""
COLORS = ("cyan", "green", "yellow")
"""Fallbacks where the theme leaves a variable out."""
WINDOWS = (60.0, 300.0, 900.0, 3600.0)
"""Time windows `w` steps through, in seconds; the second is the default."""
AXIS_W = 4
"""`100┤`: the y labels and the axis line."""
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
        self.window = WINDOWS[1]
        """Seconds of history across the plot's width."""
        self.span: tuple[float, float] | None = None
        """Replay: the fixed (start, end) times across the width, instead of `window`."""
        self.cursor: float | None = None
        """Replay: the time marked with a vertical bar."""
        self.span_label = lambda t: ""
        """Replay: how the axis writes a time of the span (the screen's clock format)."""
        self._strips: list[Strip] = []
        self._span_cache: tuple[tuple[object, ...], list[Strip], int] | None = None
        self._line_styles: tuple[Style, ...] = tuple(Style(color=c) for c in COLORS)

    def on_mount(self) -> None:
        self._theme_changed()
        self.watch(self.app, "theme", self._theme_changed, init=False)

    def _theme_changed(self) -> None:
        variables = self.app.theme_variables
        colors = [variables.get(name) or fallback for name, fallback in zip(THEME_COLORS, COLORS)]
        self._line_styles = tuple(Style(color=c) for c in colors)
        self._cursor_style = Style(color=variables.get("accent") or "red", bold=True)
        self._span_cache = None
        # The legend is the border title, in the lines' colours: a legend inside the plot
        # would hide the newest samples.
        legend = Text().append(self.plot_title, style="bold")
        for (_, label), style in zip(self.series, self._line_styles):
            legend.append("  ━ ", style=style).append(label)
        self.border_title = legend
        if self.history is not None:
            self.replot(self.history)

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
        if self.span is not None:
            return self._draw_span(history, width, plot_w, plot_h)
        end = float(times[-1])
        strips = self._lines(history, end - self.window, end, plot_w, plot_h)
        left = f"-{axis_label(self.window)}"
        axis = " " * AXIS_W + left + "now".rjust(plot_w - len(left))
        strips.append(Strip([Segment(axis[:width], _DIM)]))
        return strips

    def _lines(self, history: History, start: float, end: float, plot_w: int, plot_h: int) -> list[Strip]:
        # Joined: where the plot has more dot columns than samples (5 minutes of 1 s samples
        # across 190 columns), the columns between two samples get the line between them,
        # instead of dots with gaps; a longer gap (readings missing) stays empty.
        grid = raster([history.binned(name, start, end, 2 * plot_w, join=True) for name, _ in self.series], plot_w, plot_h)
        self.points_drawn = grid.points
        return [Strip([Segment(_y_label(row, plot_h), _DIM), *_row_segments(text, grid.owner[row], self._line_styles)])
                for row, text in enumerate(grid.chars)]

    def _draw_span(self, history: History, width: int, plot_w: int, plot_h: int) -> list[Strip]:
        """The whole span, its ends' clock times on the axis, and the cursor's bar. The lines
        are kept while the history, span and size stay (a day of samples takes ~20 ms to bin;
        the cursor moves every tick while playing)."""
        start, end = self.span  # type: ignore[misc]
        key = (id(history), len(history), start, end, plot_w, plot_h, self._line_styles)
        if self._span_cache is None or self._span_cache[0] != key:
            self._span_cache = (key, self._lines(history, start, end, plot_w, plot_h), self.points_drawn)
        strips, self.points_drawn = list(self._span_cache[1]), self._span_cache[2]
        left, right = self.span_label(start), self.span_label(end)
        axis = " " * AXIS_W + left + right.rjust(plot_w - len(left))
        if self.cursor is not None and end > start:
            x = min(plot_w - 1, max(0, int((self.cursor - start) / (end - start) * plot_w)))
            strips = [_mark(strip, AXIS_W + x, self._cursor_style) for strip in strips]
            if axis[AXIS_W + x: AXIS_W + x + 1] in (" ", ""):  # never over a time label (the bar above marks it anyway)
                axis = axis[: AXIS_W + x] + "▲" + axis[AXIS_W + x + 1:]
        strips.append(Strip([Segment(axis[:width], _DIM)]))
        return strips


def _mark(strip: Strip, x: int, style: Style) -> Strip:
    """`strip` with column `x` drawn as the cursor: a bar on a blank cell, else the dots in the
    cursor's colour."""
    cell = strip.crop(x, x + 1).text
    mark = "│" if cell.strip(" \u2800") == "" else cell
    return Strip.join([strip.crop(0, x), Strip([Segment(mark, style)]), strip.crop(x + 1, strip.cell_length)])


def _y_label(row: int, rows: int) -> str:
    """`100┤` on the top line, ` 50┤` in the middle, `  0┤` at the bottom, `   │` between."""
    if row == 0:
        return "100┤"
    if row == rows - 1:
        return "  0┤"
    if rows >= 5 and row == (rows - 1) // 2:
        return " 50┤"
    return "   │"


def _row_segments(text: str, owner: np.ndarray, styles: Sequence[Style]) -> list[Segment]:
    """One segment per run of cells of one series' colour. A blank cell joins the run before
    it (or the first run): a space looks the same in any colour, and every extra segment
    costs again in Textual's line filters and the compositor at each redraw."""
    drawn = owner >= 0
    if not drawn.any():
        return [Segment(text)]
    filled = owner[np.maximum.accumulate(np.where(drawn, np.arange(owner.size), 0))]
    filled[: np.argmax(drawn)] = owner[np.argmax(drawn)]
    cuts = [0, *(np.flatnonzero(filled[1:] != filled[:-1]) + 1).tolist(), len(text)]
    return [Segment(text[a:b], styles[filled[a] % len(styles)]) for a, b in zip(cuts[:-1], cuts[1:])]
