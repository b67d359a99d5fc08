"""The braille line plots of the watch screen's history (tui.braille)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.tui.render.braille import BRAILLE_BASE, axis_label, raster


def dots(grid_chars: tuple[str, ...]) -> set[tuple[int, int]]:
    """(dot column, dot row) of every raised dot, decoded back from the characters."""
    bit_at = {0x01: (0, 0), 0x02: (0, 1), 0x04: (0, 2), 0x40: (0, 3), 0x08: (1, 0), 0x10: (1, 1), 0x20: (1, 2), 0x80: (1, 3)}
    out = set()
    for row, line in enumerate(grid_chars):
        for col, char in enumerate(line):
            if char != " ":
                code = ord(char) - BRAILLE_BASE
                out |= {(2 * col + dx, 4 * row + dy) for bit, (dx, dy) in bit_at.items() if code & bit}
    return out


def test_a_flat_line_is_one_dot_row_at_its_value() -> None:
    grid = raster([[50.0] * 10], width=10, height=5)  # 20 dot rows, 0 at the top: 50 % is 19 - round(9.5)
    assert {y for _, y in dots(grid.chars)} == {9}
    assert {x for x, _ in dots(grid.chars)} == set(range(20))
    assert grid.points == 10


def test_full_and_empty_reach_the_top_and_bottom_rows() -> None:
    grid = raster([[100.0, 100.0], [0.0, 0.0]], width=4, height=3)
    assert grid.chars[0].strip() and grid.chars[-1].strip() and not grid.chars[1].strip()
    assert set(grid.owner[0]) == {0} and set(grid.owner[-1]) == {1}


def test_a_jump_is_a_connected_wall() -> None:
    grid = raster([[0.0, 100.0]], width=1, height=4)  # two dot columns, 16 dot rows
    assert {y for _, y in dots(grid.chars)} == set(range(16))  # every row between 0 and 100 %


def test_a_gap_stays_a_gap_and_later_series_own_their_cells() -> None:
    values = [10.0] * 8 + [math.nan] * 4 + [10.0] * 8
    grid = raster([values, [90.0] * 20], width=20, height=4)
    low = {x for x, y in dots(grid.chars) if y > 8}
    assert low and not any(16 <= x <= 22 for x in low)  # the missing samples' columns are empty
    assert grid.points == 36
    assert (grid.owner[0] == 1).all()


def test_values_outside_the_scale_are_clipped() -> None:
    grid = raster([[-50.0, 250.0, 1e300, -math.inf]], width=4, height=2)
    assert len(grid.chars) == 2 and all(len(line) == 4 for line in grid.chars)


def test_axis_labels() -> None:
    assert [axis_label(s) for s in (0, 45, 600, 5400, 7200, -1, math.nan)] == ["0s", "45s", "10m", "90m", "2.0h", "", ""]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6)), max_size=300), max_size=4),
    st.integers(-3, 120), st.integers(-3, 30),
)
def test_any_series_gives_a_full_grid_of_braille_or_blank(series: list[list[float]], width: int, height: int) -> None:
    grid = raster(series, width, height)
    w, h = max(1, width), max(1, height)
    assert len(grid.chars) == h and all(len(line) == w for line in grid.chars)
    assert all(c == " " or BRAILLE_BASE < ord(c) <= BRAILLE_BASE + 0xFF for line in grid.chars for c in line)
    assert grid.owner.shape == (h, w)
    blank = np.array([[c == " " for c in line] for line in grid.chars])
    assert ((grid.owner == -1) == blank).all()


def test_plot_bench_runs_and_compares_with_plotext() -> None:
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parents[2] / "bench" / "plot_bench.py"
    out = subprocess.run([sys.executable, str(bench), "--seconds", "120", "--repeat", "2"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "gpuscope braille:" in out and "plotext:" in out and "plotext / gpuscope:" in out
