"""Provides the one wrapper over plotext: a private figure for text, its plain text, and the reset
every drawing starts with.

The drawing functions (box plots, the roofline, the scaling figures, a table's x/y plot) take a
plotext figure and draw on it: the screen hands them its `PlotextPlot.plt`, `--format text`
a `grid_plot.GridFigure` (the same calls, drawn without plotext), so both show the same drawing;
`figure()` makes a private plotext figure for tests that compare the two. plotext's figure class and its
size fields are not part of its public API (`plotext._figure`, `_limit_size`, `_width`), and
plotext 6 removed the module-level figure: this module is the only place that names them, so a
plotext upgrade is one file to look at. No
Textual here: the print path must start fast.

Axis ticks are round numbers on every linear axis (`round_ticks`, set by `set_ticks`): plotext's
own are the range cut in equal parts (72.6, 79.7, ...), which nobody reads at a glance.
"""

from __future__ import annotations

import math
import re
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def figure(width: int, height: int) -> Any:
    """A private plotext figure of `width` x `height` characters: no global state is shared.
    Not shrunk to the terminal, as plotext does by default (to 80x23 when output goes to a pipe
    or a file): the caller has already fitted `width` to --width or the terminal."""
    from plotext._figure import _figure_class  # plotext's figure: imported only to draw text

    fig = _figure_class()
    fig._limit_size(False, False)
    fig.plotsize(width, height)
    return fig


def clear(plt: Any) -> None:
    """Forget a figure's data and its settings (title, limits, ticks): a drawing starts afresh,
    at the figure's size (plotext's `clear_figure` forgets that too; a screen's plot sets its
    size at every render anyway)."""
    width, height = plt._width, plt._height
    plt.clear_data()
    plt.clear_figure()
    plt._limit_size(False, False)
    plt.plotsize(width, height)


def plain_text(fig: Any) -> str:
    """The figure built as text, without colour (plotext always colours its output)."""
    return strip_colour(fig.build())


def strip_colour(text: str) -> str:
    """`text` without ANSI colour codes and trailing blanks: exported text must be plain."""
    return "\n".join(line.rstrip() for line in ANSI.sub("", text).splitlines())


MANTISSAS = (1, 2, 5)
"""A tick step is one of these times a power of ten: 0.2, 5, 10, 2000."""


def round_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Ticks inside [low, high] on a 1-2-5 x 10^k step: the smallest step giving at most `most`
    ticks, or the step below it when that leaves fewer than three (at most 8 then: the steps
    grow by 2.5 at most). One tick for an empty range, none for a range that is not finite."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    exponent = math.floor(math.log10((high - low) / most))
    previous: list[float] = []
    for power in range(exponent - 1, exponent + 3):
        for mantissa in MANTISSAS:
            ticks = _on_step(low, high, mantissa, power)
            if len(ticks) <= most:
                return previous if len(ticks) < 3 and previous else ticks
            previous = ticks
    return previous  # pragma: no cover - a step of 10^(exponent+2) leaves at most one tick


def _on_step(low: float, high: float, mantissa: int, power: int) -> list[float]:
    """Multiples of mantissa x 10^power inside [low, high], each the float nearest its decimal."""
    step = mantissa * 10.0**power
    digits = max(0, -power)
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)  # 0.3 / 0.05 is 5.999...
    ticks = [round(k * mantissa * 10.0**power, digits) for k in range(first, last + 1)]
    return [t for t in ticks if low <= t <= high]


def tick_label(value: float) -> str:
    """A tick value without float noise: 77.5, 80, 0.0125, 1.2e+04 only when very large."""
    text = f"{value:.6g}"
    return text[:-2] if text.endswith(".0") else text


def set_ticks(plt: Any, axis: str, low: float, high: float, most: int = 8) -> list[float]:
    """Round ticks for [low, high] on `axis` ('x' or 'y') of a figure; returns them."""
    ticks = round_ticks(low, high, most)
    if ticks:
        (plt.xticks if axis == "x" else plt.yticks)(ticks, [tick_label(t) for t in ticks])
    return ticks
