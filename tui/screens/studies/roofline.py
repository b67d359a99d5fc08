"""Provides `RooflinePane`: the roofline plot of the ranking shown, and what it could not draw.

The drawing is `kernel_plots.draw_roofline` (shared with the text export): log-log intensity
against achieved FLOP/s, one point per row, the memory and compute roofs when the peak is
complete. The note under the plot says when there are no roofs (incomplete peak) or how many
rows lacked FLOPs or bytes, instead of leaving the user to guess.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_plotext import PlotextPlot

from gpuscope.tui.render.kernel_plots import draw_roofline, roofline_points


class RooflinePlot(PlotextPlot, can_focus=True):
    """The plot itself; `replot` only on the main thread. Focusable, so `z` can zoom it."""

    def replot(self, frame: pd.DataFrame, peak: Any) -> str:
        note = draw_roofline(self.plt, frame, peak)
        self.refresh()
        return note


class RooflinePane(Vertical):
    """`RooflinePlot` above a one-line note."""

    DEFAULT_CSS = """
    RooflinePane {
        height: 1fr;
        min-height: 10;
        border-top: hkey $panel;
    }
    RooflinePane > RooflinePlot {
        height: 1fr;
    }
    RooflinePane > .roofline-note {
        height: auto;
        max-height: 3;
        padding: 0 1;
        color: $text-muted;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.note = ""
        """What the last replot could not draw (empty when everything was drawn)."""
        self.points = 0
        """Rows placed on the plot by the last replot."""

    def compose(self) -> ComposeResult:
        yield RooflinePlot()
        yield Static(classes="roofline-note", markup=False)

    def show(self, frame: pd.DataFrame, peak: Any) -> None:
        plot = self.query_one(RooflinePlot)
        self.note = plot.replot(frame, peak)
        self.points = len(roofline_points(frame))
        plot.display = self.points > 0  # an empty frame says less than the note
        note = self.query_one(".roofline-note", Static)
        note.update(Text(self.note))
        note.display = bool(self.note)
