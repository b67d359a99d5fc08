"""Provides the scaling screen's plots: `SpeedupPlot`, `EfficiencyPlot` and `CurvesPlot`.

Each is a `PlotextPlot` whose `replot` hands `self.plt` to the drawing function the text
export uses too (`tui.model.scaling_plots`), so the screen and `--format text` draw the same
figure. `replot` runs on the main thread only; plotext builds the figure when the plot is
rendered, so a plot on a hidden tab costs nothing until its tab is shown.
"""

from __future__ import annotations

import pandas as pd
from textual_plotext import PlotextPlot

from gpuscope.tui.render.scaling_plots import draw_curves, draw_efficiency, draw_speedup


class SpeedupPlot(PlotextPlot):
    """Measured speedup per series, the ideal line and the Amdahl fit (log2 axes)."""

    def replot(self, summary: pd.DataFrame, fits: pd.DataFrame) -> str:
        """Redraw; the note says what could not be drawn (no fit, no speedup)."""
        note = draw_speedup(self.plt, summary, fits)
        self.refresh()
        return note


class EfficiencyPlot(PlotextPlot):
    """Parallel efficiency bars per configuration (series side by side) and the 75 % line."""

    def replot(self, summary: pd.DataFrame) -> str:
        note = draw_efficiency(self.plt, summary)
        self.refresh()
        return note


class CurvesPlot(PlotextPlot):
    """Per-epoch values of the compared runs overlaid, one colour per run."""

    def replot(self, curves: list[tuple[str, list[int], list[float]]], metric: str) -> str:
        note = draw_curves(self.plt, curves, metric)
        self.refresh()
        return note
