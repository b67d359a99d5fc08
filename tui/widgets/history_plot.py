"""Provides `HistoryPlot`: a plotext line plot of a few `History` series over time.

plotext builds the whole figure on the main thread at every render (tens of ms for a few
hundred points), so the plot gets at most two points per cell (`History.downsample` keeps
each bucket's maximum, so a spike stays visible), at most three lines, and the screen calls
`replot` at most once a second and only while the plot is on screen.
"""

from __future__ import annotations

import math
from typing import Sequence

from rich.text import Text
from textual_plotext import PlotextPlot

from gpuscope.metrics.history import History

COLORS = ("cyan", "magenta", "yellow")


class HistoryPlot(PlotextPlot):
    """Percent series (0-100) against seconds before the latest sample."""

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
        """Points in the last replot, for tests of the downsampling."""
        self.history: History | None = None

    def on_resize(self) -> None:
        if self.history is not None:  # as many points as the new width can show
            self.replot(self.history)

    def on_mount(self) -> None:
        super().on_mount()
        # The legend is the border title, in the lines' colours: plotext's own legend sits
        # inside the plot and hides the newest samples.
        legend = Text().append(self.plot_title, style="bold")
        for (_, label), color in zip(self.series, COLORS):
            legend.append("  ━ ", style=color).append(label)
        self.border_title = legend

    def replot(self, history: History) -> None:
        """Redraw from `history` (main thread only)."""
        self.history = history
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.ylim(0, 100)
        times = history.times()
        points = max(2, 2 * max(1, self.size.width - 8))
        drawn = 0
        if times.size >= 2:
            span = float(times[-1] - times[0])
            for (name, _), color in zip(self.series, COLORS):
                values = history.downsample(name, points)
                n = len(values)
                xs = [-span * (1 - i / (n - 1)) for i in range(n)] if n > 1 else [0.0]
                pairs = [(x, y) for x, y in zip(xs, values) if not math.isnan(y)]
                if len(pairs) >= 2:
                    plt.plot([x for x, _ in pairs], [y for _, y in pairs], marker="braille", color=color)
                    drawn += len(pairs)
            plt.xlabel("seconds ago")
        else:
            plt.xlabel("collecting…")
        self.points_drawn = drawn
        self.refresh()
