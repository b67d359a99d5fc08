"""Plot ticks are round numbers (1, 2 or 5 x 10^k apart), inside the range, three to eight of
them, on every linear axis the plots draw: the helper over any range, and the figures built."""

from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gpuscope.tui.render import plots
from gpuscope.tui.render.xy_plot import draw_xy


def is_round(step: float) -> bool:
    exponent = math.floor(math.log10(step))
    return round(step / 10**exponent, 6) in (1, 2, 5, 10)


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(finite, st.floats(min_value=1e-9, max_value=1e12), st.integers(min_value=3, max_value=8))
def test_ticks_are_round_inside_the_range_three_to_eight(low: float, span: float, most: int) -> None:
    high = low + span
    if span < 1e-9 * max(abs(low), abs(high), 1e-300):
        return  # below float resolution at this magnitude: no range to cut
    ticks = plots.round_ticks(low, high, most)
    assert 3 <= len(ticks) <= 8 and len(ticks) <= max(most, 8), ticks
    assert all(low <= t <= high for t in ticks), (low, high, ticks)
    steps = np.diff(ticks)
    step = float(f"{steps[0]:.2g}")  # the decimal step: near float resolution the differences carry noise
    assert np.allclose(steps, step, rtol=1e-6) and is_round(step), ticks
    assert all(abs(t / step - round(t / step)) < 1e-6 for t in ticks), ticks  # multiples of the step


def test_degenerate_ranges() -> None:
    assert plots.round_ticks(5, 5) == [5]
    assert plots.round_ticks(math.nan, 1) == [] and plots.round_ticks(0, math.inf) == []
    assert plots.round_ticks(72.6, 100.9, 5) == [80, 90, 100]
    assert plots.round_ticks(0.1, 0.3) == [0.1, 0.15, 0.2, 0.25, 0.3]
    assert plots.tick_label(0.30000000000000004) == "0.3" and plots.tick_label(80.0) == "80"


def axis_numbers(text: str) -> list[float]:
    """The numbers on the x axis line of a plain-text plotext figure (the line under the frame)."""
    lines = text.splitlines()
    frame = max(i for i, line in enumerate(lines) if "└" in line)
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", lines[frame + 1])]


def test_table_plot_has_round_ticks_on_both_axes() -> None:
    xs = np.linspace(3.7, 96.1, 40)
    fig = plots.figure(80, 20)
    assert draw_xy(fig, xs, xs * 1.37 + 0.2, "batch", "latency", 80) == ""
    text = plots.plain_text(fig)
    assert axis_numbers(text) == [20, 40, 60, 80]
    y_labels = [float(m) for m in re.findall(r"^\s*(-?\d+(?:\.\d+)?)\s*[┤│├]", text, re.M)]
    assert y_labels and all(v % 20 == 0 for v in y_labels), y_labels
