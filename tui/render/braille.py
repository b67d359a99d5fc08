"""Provides `raster`: percent series drawn as braille line plots, a character grid per call.

Why not plotext for the live history plots: plotext builds its figure point by point in
Python, 18-57 ms per plot at 200x50 once an hour of history is on screen (measured by
`bench/plot_bench.py`), which alone costs more CPU than htop's whole refresh. Here one
braille cell holds 2x4 dots; each series becomes one dot row per dot column (numpy), a
vertical run joins neighbouring columns so steep changes stay connected lines, and the grid
costs well under a millisecond. Same look as plotext's braille marker: the last series drawn
in a cell gives it its colour.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

BRAILLE_BASE = 0x2800
DOT_ORDER = np.array([0, 1, 2, 4, 5, 6, 3, 7])
"""Dots of a cell, indexed `4 * column + row`, in the order of their bits in the character
(Unicode braille: dots 1-3 and 4-6 down the two columns, then 7 and 8 on the bottom row)."""


@dataclass(frozen=True)
class Grid:
    """`chars[row]` is one line of text; `owner[row][col]` the series that coloured the cell
    (-1 for an empty cell)."""

    chars: tuple[str, ...]
    owner: np.ndarray
    points: int
    """Values drawn, over all series (NaN gaps not counted)."""


def _dot_rows(values: np.ndarray, dot_cols: int, dot_rows: int, top: float) -> np.ndarray:
    """Dot row (0 = top) of each dot column, NaN where the series has no value; the values
    span the whole width, oldest at the left."""
    n = values.size
    if n == 0:
        return np.full(dot_cols, np.nan)
    if n == 1:
        xs = np.array([dot_cols - 1.0])
    else:
        xs = np.linspace(0.0, dot_cols - 1.0, n)
    cols = np.arange(dot_cols, dtype=np.float64)
    ys = np.clip(values / top, 0.0, 1.0) * (dot_rows - 1)
    # NaN (a gap in the history) propagates through interp: no dots between its neighbours.
    out = np.interp(cols, xs, ys, left=np.nan, right=np.nan)
    return (dot_rows - 1) - np.rint(out)


def raster(series: Sequence[Sequence[float]], width: int, height: int, top: float = 100.0) -> Grid:
    """Draw each series (values on a 0..`top` scale, oldest first) across `width` x `height`
    cells; later series are drawn over earlier ones."""
    width, height = max(1, width), max(1, height)
    dot_cols, dot_rows = 2 * width, 4 * height
    bits = np.zeros((height, width), dtype=np.uint8)
    owner = np.full((height, width), -1, dtype=np.int8)
    points = 0
    for index, values in enumerate(series):
        array = np.asarray(values, dtype=np.float64)
        points += int(np.count_nonzero(~np.isnan(array)))
        dots = _line_dots(_dot_rows(array, dot_cols, dot_rows, top), dot_rows)
        # (cell row, dot row, cell column, dot column) -> (cell row, cell column, 8 dots) -> bits
        per_cell = dots.reshape(height, 4, width, 2).transpose(0, 2, 3, 1).reshape(height, width, 8)
        cells = np.packbits(per_cell[:, :, DOT_ORDER], axis=-1, bitorder="little")[:, :, 0]
        bits |= cells
        owner[cells > 0] = index
    codes = np.where(bits > 0, BRAILLE_BASE + bits.astype(np.uint32), ord(" ")).astype("<u4")
    chars = tuple(row.tobytes().decode("utf-32-le") for row in codes)
    return Grid(chars, owner, points)


def _line_dots(rows: np.ndarray, dot_rows: int) -> np.ndarray:
    """Boolean (dot row, dot column) picture of the line through `rows` (one row per column,
    NaN = none). Each column also covers half the way to its neighbours' rows, so a jump
    from 0 to 100 % is a connected wall, not two lone dots."""
    valid = ~np.isnan(rows)
    lo, hi = rows.copy(), rows.copy()
    gap = np.array([np.nan])
    for neighbour in (np.concatenate((gap, rows[:-1])), np.concatenate((rows[1:], gap))):
        both = valid & ~np.isnan(neighbour)
        half = (neighbour + rows) / 2
        half = np.where(neighbour > rows, np.floor(half), np.ceil(half))  # rounded towards this column's row
        lo = np.where(both, np.fmin(lo, half), lo)
        hi = np.where(both, np.fmax(hi, half), hi)
    index = np.arange(dot_rows)[:, None]
    with np.errstate(invalid="ignore"):  # NaN columns compare False: no dots
        return (index >= lo[None, :]) & (index <= hi[None, :])


def axis_label(seconds: float) -> str:
    """`45s`, `12m`, `1.5h`: how long ago the left edge of the plot is."""
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
