"""Provides `TableViewScreen`: a CSV, TSV, Parquet or JSON file as a table to sort, filter,
describe and plot.

The first rows are read and shown at once (`table_read.read_head`), the rest in the same loading
worker afterwards; until then the status line says the row count is not known yet. Keys work
on the model (`tui.model.table_model`), which keeps the file's text for display and each
column's numbers (`143.9 ± 0.0`, `15.85×`, `45%`) for sorting, statistics, filters and plots.
The grid shows at most `DISPLAY_ROWS` rows of the result (a `DataTable` holds every cell as an
object); sorting, filtering, statistics and export use all of them. Cell text is cleaned and
shown as `Text`, never markup. Cells an expected range failed on (`marks`) are highlighted.

What the user sets (the sort, the filter kept with Enter, the plot's x and y) is remembered per
file for the app's session (`remembered`), so the file opened again shows it as it was left.
Escape clears a filter before it closes the view: a filter is never left on by accident.
The filter box is made the first time it is needed: most views are never filtered, and a
hidden box still cost its styling each time a view opened.
The first plot asks for its x and y (`PlotPickModal`) rather than guessing them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator
from weakref import WeakKeyDictionary

import numpy as np
from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import ContentSwitcher, DataTable, Input, Static
from textual_plotext import PlotextPlot

from gpuscope.metrics import export
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.model.table_filter import FilterError, RowFilter, parse_filter
from gpuscope.tui.model.table import ROW, TableModel, TableState, TableView, stats_cells
from gpuscope.tui.model.table_read import read_all, read_head
from gpuscope.tui.render.xy_plot import draw_xy
from gpuscope.tui.screens.views.base import FileScreen
from gpuscope.tui.screens.views.plot_pick import PlotPickModal
from gpuscope.tui.widgets.keys_footer import KeysFooter

DISPLAY_ROWS = 2000
"""Rows put in the grid; a filter or a sort brings the others into it."""
MAX_WIDTH = 40
"""Widest a column is drawn; longer cells are cut in the middle (export keeps them whole)."""
MARK_STYLE = "bold white on red"
NEEDS_DATA = {"sort", "filter", "plot", "plot_pick", "export"}

_REMEMBERED: WeakKeyDictionary[Any, dict[str, TableState]] = WeakKeyDictionary()
"""Per app (one session): each file's `TableState`, by absolute path."""


def remembered(app: Any) -> dict[str, TableState]:
    """The table states this app's session has kept, by absolute path."""
    return _REMEMBERED.setdefault(app, {})


class XYPlot(PlotextPlot):
    """One column against another; `replot` on the main thread only."""

    def replot(self, xs: Any, ys: Any, x_label: str, y_label: str) -> str:
        note = draw_xy(self.plt, xs, ys, x_label, y_label, self.size.width or 80)
        self.refresh()
        return note


class TableViewScreen(FileScreen):
    """The grid, an optional plot under it, the cursor column's statistics at the bottom."""

    KIND = "Table"
    HELP_TITLE = "Keys: table"
    DEFAULT_CSS = """
    TableViewScreen #table-body { height: 1fr; }
    TableViewScreen #table-grid { height: 1fr; }
    TableViewScreen #table-plot { height: 16; border-top: hkey $panel; }
    TableViewScreen #table-stats { height: auto; max-height: 2; padding: 0 1; background: $boost; }
    TableViewScreen #table-notes { height: auto; max-height: 3; padding: 0 1; color: $text-warning; }
    TableViewScreen #table-filter { dock: bottom; margin-bottom: 1; }
    """
    BINDINGS = [
        Binding("s", "sort", "Sort", tooltip="Sort by the cursor's column (clicking a header too): ascending, descending, file order"),
        Binding("slash", "filter", "Filter", tooltip="Keep rows containing a text, or matching  column > 3  (< <= = != ~ !~, 'and'; quote names with spaces); "
                "Enter keeps it, also when the file is opened again"),
        Binding("p", "plot", "Plot", tooltip="Plot y against x (the first time it asks which columns; again to hide)"),
        Binding("x", "plot_pick", "Plot x/y", tooltip="Choose the plot's x and y columns"),
        Binding("e", "export", "Export", tooltip="Write the rows shown, all of them (format from the file extension)"),
        Binding("escape", "back", "Back", tooltip="In the filter box: clear the filter; with a plot: hide it; else close this view (a kept filter is shown again when the file is reopened)"),
    ]

    def __init__(self, path: str | Path, recognition: Any = None, marks: set[tuple[int, str]] | None = None) -> None:
        """`marks`: (row in the file, column) cells an expected range failed on."""
        super().__init__(path, recognition)
        self.marks = frozenset(marks or ())
        self.model: TableModel | None = None
        """Rows read so far (the head first, then all); None until the first arrive."""
        self.view = TableView()
        self.rows = np.array([], dtype=int)
        """Indices of the rows the view keeps, in order (all of them, not only those drawn)."""
        self.plot_xy: tuple[str, str] | None = None
        """The plot's (x, y) once chosen; x may be `ROW` (the row number)."""
        self.filter_text = ""
        """The filter last kept with Enter (what reopening the file restores)."""
        self._key = os.path.abspath(self.path)
        self._restored = False
        self._shown: list[str] = []
        self._stats: dict[str, str] = {}
        self._stats_line = ""
        """The statistics line shown (the highlighted cell moves within a column often)."""
        self._notes = ""

    FAILED_TITLE = "Table · could not read {name}"
    FIRST_STEP_S = 0.2
    """A table whose first rows are read by then is shown in the view's first frame (its grid
    laid out and drawn once), not after a loading frame; most take a few milliseconds."""

    def compose_body(self) -> ComposeResult:
        with Vertical(id="table-body"):
            yield DataTable(id="table-grid", cursor_type="cell", zebra_stripes=True)
            yield XYPlot(id="table-plot")
            yield Static(id="table-stats", markup=False)
            yield Static(id="table-notes", markup=False)

    def on_mount(self) -> None:
        self.query_one("#table-plot", XYPlot).display = False

    def filter_box(self) -> Input:
        """The filter box, made above the footer the first time it is asked for."""
        box = next(self.query("#table-filter").results(Input), None)
        if box is None:
            box = Input(id="table-filter", placeholder="filter: text, or  column > 3  (Enter keeps it, Escape clears)", compact=True)
            self.mount(box, before=self.query_one(KeysFooter))
        return box

    def read_steps(self) -> Iterator[TableModel]:
        """The head, then (when there is more) every row: two models, each shown."""
        head = read_head(self.path)
        if head.final or len(head.frame.columns):  # else nothing to show yet (a small file or JSON: read whole)
            yield TableModel(head, self.marks)
        if not head.final:
            yield TableModel(read_all(self.path), self.marks)

    def show(self, model: TableModel) -> None:
        if not model.columns and model.read.final:
            self.model = None
            self.refresh_bindings()
            self.sub_title = f"Table · nothing to show · {self.name_text}"
            self.show_empty(f"No table in {self.paths_text()}.", model.findings)
            return
        if not model.columns:
            return  # a JSON head: nothing until the whole file is read
        self.model = model
        self.refresh_bindings()
        if not self._restored:
            self._restored = True
            self._restore(model)
        switch = self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher)
        if switch.current != "table-body":
            switch.current = "table-body"
            self.query_one("#table-grid", DataTable).focus()
        notes = "\n".join(f"{clean(f.message)}" + (f" ({f.count:,})" if f.count > 1 else "") for f in model.findings)
        if notes != self._notes:  # an update lays the screen out again, even with the same text
            self._notes = notes
            self.query_one("#table-notes", Static).update(Text(notes))
        self.apply(self.view)

    def _restore(self, model: TableModel) -> None:
        """Show the file as this session left it (its sort, filter and plot), where its
        columns still allow; says what was restored."""
        state = remembered(self.app).get(self._key)
        if state is None:
            return
        said = []
        sort = state.sort if state.sort in model.columns else None
        if sort is not None:
            said.append(f"sorted by {clean(sort)}{' ↓' if state.descending else ' ↑'}")
        row_filter = RowFilter()
        if state.filter_text:
            try:
                row_filter = parse_filter(state.filter_text, model.columns)
            except FilterError:
                pass  # a column it named is gone: the file changed
            else:
                self.filter_text = state.filter_text
                box = self.filter_box()
                with box.prevent(Input.Changed):
                    box.value = state.filter_text
                box.display = True
                said.append(f"filter {clean(state.filter_text)!r} (Escape clears it)")
        self.view = TableView(sort, state.descending, row_filter)
        if state.plot is not None and all(c == ROW or model.is_numeric(c) for c in state.plot):
            self.plot_xy = state.plot
        if said:
            self.notify("As left before: " + ", ".join(said), markup=False)

    def _remember(self) -> None:
        remembered(self.app)[self._key] = TableState(self.view.sort, self.view.descending, self.filter_text, self.plot_xy)

    def set_marks(self, marks: set[tuple[int, str]]) -> None:
        """Highlight these cells (e.g. when the expected ranges are checked after opening)."""
        self.marks = frozenset(marks)
        if self.model is not None:
            self.model.marks = self.marks
            self.apply(self.view)

    def apply(self, view: TableView) -> None:
        """Show `view` (sort, filter) of the model: the grid, the status, the statistics."""
        model = self.model
        if model is None:
            return
        self.view = view
        self.rows = model.rows(view)
        self._stats = {}
        grid = self.query_one("#table-grid", DataTable)
        row, column = grid.cursor_coordinate
        grid.clear(columns=True)
        self._shown = list(model.columns)
        drawn = self.rows[:DISPLAY_ROWS]
        for name in self._shown:
            texts = model.text[name][drawn]
            width = min(MAX_WIDTH, max([cell_len(clean(name)) + 2] + [cell_len(t) for t in texts]))
            arrow = (" ↓" if view.descending else " ↑") if view.sort == name else ""
            label = clean(name) + arrow
            pad = " " * max(0, width - cell_len(label)) if model.is_numeric(name) else ""
            grid.add_column(Text(pad + label), key=name, width=width)
        widths = [grid.columns[name].width for name in self._shown]
        numeric = [model.is_numeric(name) for name in self._shown]
        for r in drawn:
            grid.add_row(*(self._cell(int(r), name, width, right) for name, width, right in zip(self._shown, widths, numeric)), key=str(r))
        if len(drawn):
            grid.move_cursor(row=min(row, len(drawn) - 1), column=min(column, len(self._shown) - 1))
        self.status(self._status_text())
        self._show_stats()
        if self.query_one("#table-plot", XYPlot).display:
            self._replot()

    def _cell(self, row: int, column: str, width: int, numeric: bool) -> Text:
        assert self.model is not None
        shown = export.middle(self.model.text[column][row], width)
        marked = (row, column) in self.model.marks
        return Text(" " * (width - cell_len(shown)) + shown if numeric else shown, style=MARK_STYLE if marked else "")  # numbers on the right

    def _status_text(self) -> Text:
        assert self.model is not None
        model, view = self.model, self.view
        text = Text()
        if model.complete:
            text.append(f"{model.row_count:,} rows", style="bold")
        else:
            text.append(f"first {model.row_count:,} rows", style="bold")
            total = model.read.total_rows
            if total is not None:
                text.append(f" of {total:,}", style="dim")
            text.append(" · reading the rest" + ("" if total is not None else ", row count not known yet") if not model.read.final
                        else " · the file is over the size limit (see below)", style="dim")
        text.append(f" · {len(model.columns)} columns", style="dim")
        if view.sort:
            text.append(" · sorted by ", style="dim").append(clean(view.sort) + (" ↓" if view.descending else " ↑"), style="bold")
        if not view.filter.empty:
            text.append(f" · {len(self.rows):,} match", style="bold")
        if len(self.rows) > DISPLAY_ROWS:
            text.append(f" · first {DISPLAY_ROWS:,} drawn (sort/filter reach the rest)", style="dim")
        marked = sum(1 for row, column in model.marks if column in model.text and 0 <= row < model.row_count)
        if marked:
            text.append(f" · {marked} cell(s) outside expected range", style=MARK_STYLE)
        return text

    def cursor_column(self) -> str | None:
        grid = self.query_one("#table-grid", DataTable)
        return self._shown[grid.cursor_column] if self._shown and grid.cursor_column < len(self._shown) else None

    def stats_text(self, column: str) -> str:
        """'column: count 25 · n/a 0 · min ...' over the rows the view keeps (cached per view)."""
        if column not in self._stats and self.model is not None:
            cells = stats_cells(self.model.stats(column, self.rows))
            self._stats[column] = f"{clean(column)}: " + " · ".join(f"{label} {value}" for label, value in cells)
        return self._stats.get(column, "")

    def _show_stats(self) -> None:
        column = self.cursor_column()
        line = self.stats_text(column) if column else ""
        if line != self._stats_line:  # an update lays the screen out again, even with the same text
            self._stats_line = line
            self.query_one("#table-stats", Static).update(Text(line))

    @on(DataTable.CellHighlighted, "#table-grid")
    def _cell_highlighted(self, event: DataTable.CellHighlighted) -> None:
        self._show_stats()

    @on(DataTable.HeaderSelected, "#table-grid")
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action in NEEDS_DATA and self.model is None else True

    def sort_by(self, column: str) -> None:
        """Ascending, then descending, then back to the file's order."""
        view = self.view
        if view.sort != column:
            self.apply(TableView(column, False, view.filter))
        elif not view.descending:
            self.apply(TableView(column, True, view.filter))
        else:
            self.apply(TableView(None, False, view.filter))
        self._remember()

    def action_sort(self) -> None:
        column = self.cursor_column()
        if column is not None:
            self.sort_by(column)

    def action_filter(self) -> None:
        box = self.filter_box()
        box.display = True
        box.focus()

    def filter_by(self, text: str) -> str:
        """Keep the rows `text` matches; returns the error (empty when it parsed)."""
        if self.model is None:
            return ""
        try:
            row_filter = parse_filter(text, self.model.columns)
        except FilterError as error:
            self.status(Text(f"Filter: {error}", style="bold"))
            return str(error)
        self.apply(TableView(self.view.sort, self.view.descending, row_filter))
        return ""

    @on(Input.Changed, "#table-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_by(event.value)

    @on(Input.Submitted, "#table-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        event.input.display = bool(text)
        self.query_one("#table-grid", DataTable).focus()
        try:
            parse_filter(text, self.model.columns if self.model is not None else ())
        except FilterError:
            return  # the status says why; nothing is kept
        self.filter_text = text
        self._remember()

    def action_back(self) -> None:
        """Escape in the filter box clears the filter (and it is forgotten); with a plot shown it
        hides the plot; otherwise it closes the view, and a filter kept with Enter is what
        reopening the file shows (`/` then Escape clears it)."""
        box = self.focused
        if isinstance(box, Input):  # the filter box, this screen's one input
            with box.prevent(Input.Changed):
                box.value = ""
            box.display = False
            self.query_one("#table-grid", DataTable).focus()
            self.filter_by("")
            self.filter_text = ""
            self._remember()
            return
        plot = self.query_one("#table-plot", XYPlot)
        if plot.display:  # a plot over the rows closes first
            plot.display = False
            return
        super().action_back()

    def action_plot_pick(self) -> None:
        """Ask for the plot's x and y (the numeric columns), then show it."""
        model = self.model
        if model is None:
            return
        numeric = [c for c in model.columns if model.is_numeric(c)]
        if not numeric:
            self.notify("No column holds numbers: nothing to plot", severity="warning", markup=False)
            return
        cursor = self.cursor_column()
        x, y = self.plot_xy or (ROW, cursor if cursor in numeric else numeric[0])
        self.app.push_screen(PlotPickModal(ROW, numeric, x, y), self._plot_chosen)

    def _plot_chosen(self, chosen: tuple[str, str] | None) -> None:
        if chosen is None:
            return
        self.plot_xy = chosen
        self._remember()
        self.query_one("#table-plot", XYPlot).display = True
        self._replot()

    def action_plot(self) -> None:
        plot = self.query_one("#table-plot", XYPlot)
        if plot.display:
            plot.display = False
        elif self.plot_xy is None:
            self.action_plot_pick()  # the first plot asks: a guess plotted a column against itself
        else:
            plot.display = True
            self._replot()

    def _replot(self) -> str:
        if self.model is None or self.plot_xy is None:
            return ""
        x, y = self.plot_xy
        xs, ys = self.model.points(x, y, self.rows)
        plot = self.query_one("#table-plot", XYPlot)
        note = plot.replot(xs, ys, "row number" if x == ROW else x, y)
        if note:
            self.notify(note, severity="warning", markup=False)
        return note

    def action_export(self) -> None:
        if self.model is not None:
            self.ask_export(f"{self.path.stem}-view.csv", "table shown")

    def export_tables(self, fmt: str) -> tuple[list[ResultTable], tuple[str, ...]] | None:
        """The rows shown, in their order, with every column."""
        if self.model is None:
            return None
        return [self.model.result_table(self.rows, self.name_text)], ()
