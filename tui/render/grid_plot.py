"""Provides `GridFigure`: the part of plotext's figure API the roofline and scaling drawings use,
drawn straight into a character grid, for `--format text`.

Why not plotext for text: importing it and building its figure costs 0.05-0.07 s of CPU per
command, more than the rest of a small plot. The drawing functions (`kernel_plots.draw_roofline`,
`scaling_plots.draw_speedup` ...) take a figure and call `plot`, `scatter`, `bar`, `hline`,
`xticks` ... on it: the screen hands them its `PlotextPlot.plt`, the text print a `GridFigure`,
so each plot is drawn by one function on either surface. Text is plain (colours are ignored).

The layout follows plotext's: title, a frame with the legend in its top-left corner, tick labels
on the left (`┤`) and below (`┬`), the x label last. Lines are braille dots (2 x 4 per cell) or,
for plotext's "hd" marker, quarter blocks (2 x 2), a one-character marker draws that character at each point, bars
are full blocks with a half block at their top. No Textual, no plotext here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from gpuscope.tui.render.plots import round_ticks, tick_label

BRAILLE = "".join(chr(0x2800 + bits) for bits in range(256))
BRAILLE_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
"""Bit of the braille dot at (dot row 0-3, dot column 0-1) of a cell: `BRAILLE[bits]` draws them."""
QUADRANTS = " ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"
QUADRANT_BITS = ((1, 2), (4, 8))
"""plotext's "hd" marker: quarter blocks, 2 x 2 a cell."""
LEGEND_MARKS = {"braille": "⢕", "hd": "▞"}
NAMED_MARKS = {"dot": "•"}


@dataclass
class _Layer:
    kind: str  # "line", "points", "bars", "hline"
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)
    mark: str = "braille"
    width: float = 0.0


class GridFigure:
    """A `width` x `height` character figure with plotext's drawing calls."""

    def __init__(self, width: int, height: int) -> None:
        self.plotsize(width, height)
        self.clear_figure()

    # --- plotext's set-up calls ---------------------------------------------------------------
    def plotsize(self, width: int, height: int) -> None:
        self._width, self._height = max(int(width), 12), max(int(height), 8)

    def _limit_size(self, *_: bool) -> None:
        """plotext shrinks figures to the terminal; a grid has no terminal."""

    def clear_data(self) -> None:
        self._layers: list[_Layer] = []
        self._legend: list[tuple[str, str]] = []

    def clear_figure(self) -> None:
        self.clear_data()
        self._title = self._xlabel = ""
        self._lim: dict[str, tuple[float, float] | None] = {"x": None, "y": None}
        self._ticks: dict[str, tuple[list[float], list[str]] | None] = {"x": None, "y": None}

    def title(self, text: str) -> None:
        self._title = text

    def xlabel(self, text: str) -> None:
        self._xlabel = text

    def ylabel(self, text: str) -> None:
        """Not drawn: the drawings put what the y axis shows in the title."""

    def xlim(self, low: float, high: float) -> None:
        self._lim["x"] = (float(low), float(high))

    def ylim(self, low: float, high: float) -> None:
        self._lim["y"] = (float(low), float(high))

    def xticks(self, values: Sequence[float], labels: Sequence[str] | None = None) -> None:
        self._ticks["x"] = self._tick_pairs(values, labels)

    def yticks(self, values: Sequence[float], labels: Sequence[str] | None = None) -> None:
        self._ticks["y"] = self._tick_pairs(values, labels)

    @staticmethod
    def _tick_pairs(values: Sequence[float], labels: Sequence[str] | None) -> tuple[list[float], list[str]]:
        values = [float(v) for v in values]
        return values, [str(t) for t in labels] if labels is not None else [tick_label(v) for v in values]

    # --- drawing calls ------------------------------------------------------------------------
    def plot(self, xs: Sequence[float], ys: Sequence[float], color: Any = None, marker: str | None = None,
             label: str | None = None) -> None:
        self._add(_Layer("line", _floats(xs), _floats(ys), _mark(marker)), label)

    def scatter(self, xs: Sequence[float], ys: Sequence[float], marker: str | None = None, color: Any = None,
                label: str | None = None) -> None:
        self._add(_Layer("points", _floats(xs), _floats(ys), _mark(marker)), label)

    def bar(self, positions: Sequence[float], heights: Sequence[float], color: Any = None, width: float = 0.8,
            label: str | None = None, marker: str | None = None) -> None:
        xs = _floats(positions)
        gap = min(b - a for a, b in zip(xs, xs[1:])) if len(xs) > 1 else 1.0  # plotext's width is per gap
        self._add(_Layer("bars", xs, _floats(heights), "█", float(width) * gap), label, "█")

    def hline(self, y: float, color: Any = None) -> None:
        self._layers.append(_Layer("hline", [], [float(y)], "─"))

    def _add(self, layer: _Layer, label: str | None, legend_mark: str | None = None) -> None:
        self._layers.append(layer)
        if label:
            self._legend.append((legend_mark or LEGEND_MARKS.get(layer.mark, layer.mark), label))

    # --- the text -----------------------------------------------------------------------------
    def build(self) -> str:
        """The figure as plain text, trailing blanks removed."""
        x_lo, x_hi = self._limits("x")
        y_lo, y_hi = self._limits("y")
        y_ticks = self._ticks["y"] or _round_pairs(y_lo, y_hi)
        y_ticks = [(v, t) for v, t in zip(*y_ticks) if y_lo <= v <= y_hi]
        margin = max((len(t) for _, t in y_ticks), default=0)
        cols = self._width - margin - 2
        rows = self._height - 5  # title, frame top and bottom, tick labels, x label
        canvas = _Canvas(cols, rows, (x_lo, x_hi), (y_lo, y_hi))
        for layer in self._layers:
            canvas.draw(layer)
        canvas.legend(self._legend)
        lines = [[" "] * self._width for _ in range(self._height)]
        centred(lines[0], margin + 1 + cols // 2, self._title)
        lines[1][margin:] = "┌" + "─" * cols + "┐"
        bottom = rows + 2
        lines[bottom][margin:] = "└" + "─" * cols + "┘"
        for r in range(rows):
            line = lines[2 + r]
            line[margin] = "├" if canvas.cells[r][0] == "─" else "│"
            line[margin + 1:margin + 1 + cols] = canvas.cells[r]
            line[-1] = "┤" if canvas.cells[r][-1] == "─" else "│"
        for value, text in y_ticks:
            r = 2 + rows - 1 - cell(value, y_lo, y_hi, rows)
            lines[r][margin - len(text):margin + 1] = text + ("├" if lines[r][margin] == "├" else "┤")  # a line across wins
        x_ticks = self._ticks["x"] or _round_pairs(x_lo, x_hi)
        labels = lines[bottom + 1]
        for value, text in zip(*x_ticks):
            if not x_lo <= value <= x_hi:
                continue
            at = margin + 1 + cell(value, x_lo, x_hi, cols)
            start = tick_start(labels, text, at)
            if fits(labels, start, text):
                put(labels, start, text)
                lines[bottom][at] = "┬"
        centred(lines[bottom + 2], margin + 1 + cols // 2, self._xlabel)
        return "\n".join("".join(line).rstrip() for line in lines)

    def _limits(self, axis: str) -> tuple[float, float]:
        """The axis' limits: as set, else the data's span (bars from 0), else 0 to 1."""
        if self._lim[axis] is not None:
            low, high = self._lim[axis]  # type: ignore[misc]
        else:
            values = [v for layer in self._layers for v in (layer.xs if axis == "x" else layer.ys) if math.isfinite(v)]
            if axis == "y" and any(layer.kind == "bars" for layer in self._layers):
                values.append(0.0)
            low, high = (min(values), max(values)) if values else (0.0, 1.0)
        if not high > low:
            low, high = low - 0.5, high + 0.5
        return low, high


class _Canvas:
    """The inside of the frame: one character per cell and, apart, braille dots per cell."""

    def __init__(self, cols: int, rows: int, x: tuple[float, float], y: tuple[float, float]) -> None:
        self.cols, self.rows, self.x, self.y = cols, rows, x, y
        self.cells = [[" "] * cols for _ in range(rows)]

    def col(self, value: float, per_cell: int = 1) -> float:
        return (value - self.x[0]) / (self.x[1] - self.x[0]) * (self.cols * per_cell - 1)

    def row(self, value: float, per_cell: int = 1) -> float:
        """From the top: row 0 is the highest."""
        return (self.y[1] - value) / (self.y[1] - self.y[0]) * (self.rows * per_cell - 1)

    def put(self, r: int, c: int, char: str) -> None:
        if 0 <= r < self.rows and 0 <= c < self.cols:
            self.cells[r][c] = char

    def draw(self, layer: _Layer) -> None:
        points = [(x, y) for x, y in zip(layer.xs, layer.ys) if math.isfinite(x) and math.isfinite(y)]
        if layer.kind == "hline":
            r = round(self.row(layer.ys[0]))
            if 0 <= r < self.rows:
                self.cells[r] = ["─" if c == " " else c for c in self.cells[r]]
        elif layer.kind == "bars":
            self._bars(points, layer.width)
        elif layer.mark in ("braille", "hd"):
            self._dots(points, layer.kind == "line", layer.mark)
        else:
            self._marks(points, layer.mark, join=layer.kind == "line")

    def _dots(self, points: list[tuple[float, float]], join: bool, mark: str) -> None:
        """Points (joined by straight runs of dots for a line) in braille (2 x 4 dots a cell) or
        quadrant blocks ("hd", 2 x 2); dots already in a cell of the same kind stay."""
        per_row, bits_of, chars = (4, BRAILLE_BITS, BRAILLE) if mark == "braille" else (2, QUADRANT_BITS, QUADRANTS)
        spots = [(self.col(x, 2), self.row(y, per_row)) for x, y in points]
        dots = {(round(r), round(c)) for c, r in spots}
        if join:
            for (c0, r0), (c1, r1) in zip(spots, spots[1:]):
                steps = max(1, math.ceil(max(abs(c1 - c0), abs(r1 - r0))))
                dots.update((round(r0 + (r1 - r0) * k / steps), round(c0 + (c1 - c0) * k / steps)) for k in range(steps + 1))
        bits: dict[tuple[int, int], int] = {}
        for r, c in dots:
            if 0 <= r < per_row * self.rows and 0 <= c < 2 * self.cols:
                cell = (r // per_row, c // 2)
                bits[cell] = bits.get(cell, 0) | bits_of[r % per_row][c % 2]
        for (r, c), bit in bits.items():
            old = chars.find(self.cells[r][c])
            self.cells[r][c] = chars[bit | max(old, 0)]

    def _marks(self, points: list[tuple[float, float]], mark: str, join: bool) -> None:
        spots = [(self.col(x), self.row(y)) for x, y in points]
        cells = {(round(r), round(c)) for c, r in spots}
        if join:
            for (c0, r0), (c1, r1) in zip(spots, spots[1:]):
                steps = max(1, math.ceil(max(abs(c1 - c0), abs(r1 - r0))))
                cells.update((round(r0 + (r1 - r0) * k / steps), round(c0 + (c1 - c0) * k / steps)) for k in range(steps + 1))
        for r, c in cells:
            self.put(r, c, mark)

    def _bars(self, points: list[tuple[float, float]], width: float) -> None:
        base = min(max(0.0, self.y[0]), self.y[1])
        for x, height in points:
            first, last = round(self.col(x - width / 2)), round(self.col(x + width / 2))
            bottom, top = self.row(base, 2), self.row(min(height, self.y[1]), 2)
            top_half = max(round(top), 0)
            for c in range(max(first, 0), min(last, self.cols - 1) + 1):
                for half in range(top_half, round(bottom) + 1):  # half cells, from the top
                    self.put(half // 2, c, "▄" if half == top_half and half % 2 else "█")

    def legend(self, entries: list[tuple[str, str]]) -> None:
        for r, (mark, label) in enumerate(entries[:self.rows]):
            text = f" {mark * 2} {label}"[:self.cols]
            self.cells[r][:len(text)] = text


def _floats(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values]


def _mark(marker: str | None) -> str:
    """A plotext marker as drawn here: lines in braille, a one-character marker as itself."""
    if marker and len(marker) == 1 or marker == "hd":
        return marker
    return NAMED_MARKS.get(marker or "", "braille")


def _round_pairs(low: float, high: float) -> tuple[list[float], list[str]]:
    ticks = round_ticks(low, high)
    return ticks, [tick_label(t) for t in ticks]


def cell(value: float, low: float, high: float, cells: int) -> int:
    """The cell (0 to cells - 1) of `value` on an axis from `low` to `high`: plotext's rule."""
    return math.floor(round(0.5 + (cells - 1) * (value - low) / (high - low), 8))


def tick_start(line: list[str], text: str, col: int) -> int:
    """Where a tick label for column `col` starts: centred on the free stretch of `line` around
    the tick (plotext's rule, so a label near the frame or a neighbour moves aside)."""
    n = len(text)
    free = [i for i in range(max(col - n + 1, 0), min(col + n, len(line) - 1)) if line[i] == " "]
    first, last = (min(free), max(free)) if free else (col - n + 1, col + n)
    return (first + last - n + 1) // 2


def fits(line: list[str], start: int, text: str) -> bool:
    """`text` fits at `start` with a blank on either side."""
    end = start + len(text)
    return start >= 0 and end <= len(line) and all(c == " " for c in line[max(start - 1, 0):end + 1])


def put(line: list[str], start: int, text: str) -> None:
    line[start:start + len(text)] = text


def centred(line: list[str], centre: int, text: str) -> None:
    """`text` centred on column `centre`, moved inside the line when it would stick out, and cut
    with an ellipsis when longer than the line (plotext leaves such a title out)."""
    if len(text) > len(line):
        text = text[:len(line) - 1] + "…"
    put(line, min(max(centre - len(text) // 2, 0), len(line) - len(text)), text)
