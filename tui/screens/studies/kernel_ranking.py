"""Provides `KernelRanking` and `KernelDetail`: the kernels screen's ranking table, its numbers
always in view, and the full name of the row under the cursor.

The numbers the ranking is read for (calls, total time, share and the two efficiencies) keep
their width; the name column gets the rest, and names are folded to it with `short_name`
(`void at::native::elementwise_kernel<…>(…)`) rather than cut. The columns after the
efficiencies come into view where the terminal has room for them and a readable name, and
scroll otherwise. Recomputed when the width changes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from gpuscope.metrics import export
from gpuscope.metrics.kernels.names import short_name
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.widgets.result_table import ResultTableView

ALWAYS_SHOWN = "bw_eff_pct"
"""The last column that must fit: calls, total, share, FLOPS and bandwidth efficiency before it."""
READABLE_NAME = 40
"""The columns after the efficiencies are shown only while the names keep this many cells."""
LEAST_NAME = 12
"""The name column is never narrower (on a terminal too narrow for the numbers, they scroll)."""


class KernelRanking(ResultTableView):
    """The kernel ranking: `show_ranking` takes the whole table and shows it fitted."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ranking: ResultTable | None = None
        """The ranking with its full names (`.model` holds the names as shown)."""
        self._name_width = 0

    def show_ranking(self, table: ResultTable) -> None:
        self.ranking = table
        self._refit(force=True)

    def on_resize(self) -> None:
        self._refit()  # runs before ResultTableView's own refit, which then finds nothing to do

    def longest_name(self) -> int:
        """Cells of the longest full name."""
        if self.ranking is None:
            return 0
        return max((cell_len(self.ranking.cell_text(r, 0)) for r in range(len(self.ranking.rows))), default=0)

    def full_name(self, row: int) -> str | None:
        """The full name (the first column) of `row`, cleaned of escape sequences."""
        if self.ranking is None or not 0 <= row < len(self.ranking.rows):
            return None
        return self.ranking.cell_text(row, 0)

    def _refit(self, force: bool = False) -> None:
        if self.ranking is None or (not force and self.size.width == self._fitted_width):
            return
        width, fit_through = name_width(self.ranking, self._room(), 2 * self.cell_padding)
        self._name_width = width
        names = tuple((short_name(clean(str(row[0])), width) if isinstance(row[0], str) and width else row[0],
                       *row[1:]) for row in self.ranking.rows)
        shown = replace(self.ranking, rows=names)
        self.show(shown, squeeze={self.ranking.columns[0].key: width or export.MIN_SQUEEZED}, fit_through=fit_through)


def name_width(table: ResultTable, room: int, padding: int) -> tuple[int, str | None]:
    """(the name column's width, the last column that must fit) for `table` in `room` cells:
    every column with whole headers when the names keep READABLE_NAME cells, else every column
    with headers on two lines, else the columns through ALWAYS_SHOWN with headers on two lines
    (the name gets what is left, LEAST_NAME at least). (0, None) before layout (no room known)."""
    if not room:
        return 0, None
    keys = table.keys
    longest = max((cell_len(table.cell_text(r, 0)) for r in range(len(table.rows))), default=0)
    longest = max(longest, cell_len(clean(table.columns[0].header)))
    whole, wrapped = [], []
    for i, column in enumerate(table.columns[1:], start=1):
        values = max((cell_len(table.cell_text(r, i)) for r in range(len(table.rows))), default=0)
        header = clean(column.header)
        whole.append(max(cell_len(header), values))
        wrapped.append(max(export.header_floor(header), values))
    last = keys.index(ALWAYS_SHOWN) if ALWAYS_SHOWN in keys else len(keys) - 1
    for widths, fit_through in ((whole, None), (wrapped, None), (wrapped[:last], ALWAYS_SHOWN)):
        left = room - sum(widths) - padding * (len(widths) + 1)
        if left >= min(longest, READABLE_NAME) or fit_through is not None:
            return max(LEAST_NAME, min(left, longest)), fit_through
    raise AssertionError("unreachable: the last choice always returns")


class KernelDetail(Static):
    """The full name of the ranking row under the cursor, on as many lines as it is given;
    a name longer still is folded (`short_name`) to those lines, so its function name stays."""

    DEFAULT_CSS = """
    KernelDetail {
        height: 2;
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, **kwargs)
        self.lines = 2
        """Lines the name takes: the same for every row of a ranking, so the table above keeps
        its height as the cursor moves (a table that shrank under the cursor would hide the row
        selected)."""
        self.label, self.full = "", ""

    def show_name(self, label: str, name: str, most: int, longest: int) -> None:
        """Show `label: name` on at most `most` lines, as many as the longest name of the
        ranking (`longest` cells) needs at the width there is."""
        self.label, self.full = label, name
        width = self.content_size.width
        needed = -(-(cell_len(label) + 2 + longest) // width) if width else most
        self.lines = max(1, min(most, needed))
        self.styles.height = self.lines
        self.refresh()

    def render(self) -> Text:
        return detail_text(self.label, self.full, self.content_size.width, self.lines)


def detail_text(label: str, name: str, width: int, lines: int) -> Text:
    """`label: name` filling `lines` lines of `width` cells (broken anywhere, as a terminal
    would: C++ names have few good places to break), the name folded only when it cannot fit."""
    prefix = f"{label}: " if label else ""
    if width <= 0:
        return Text(prefix + name, no_wrap=True)
    room = max(1, width * lines - cell_len(prefix))
    shown = name if cell_len(name) <= room else short_name(name, room)
    text = Text(prefix, style="bold").append(shown)
    plain = text.plain
    breaks = [k for k in range(width, len(plain), width)]  # names are mostly one cell per character
    if breaks and cell_len(plain) == len(plain):
        return Text("\n").join(text.divide(breaks))
    return text
