"""Provides `ResultTableView`: a `DataTable` that shows a `ResultTable` model.

The model stays on the widget (`.model`) so export and tests read the model, never the cells.
Every cell is a `rich.text.Text`, so `[bold]` in an environment name is shown as typed; cells
are cleaned by `ResultTable.cell_text`, column headers here (`metrics.safe_text`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable


class ResultTableView(DataTable[Text]):
    """Read-only view of one `ResultTable`; `show()` replaces the content."""

    DEFAULT_CSS = """
    ResultTableView {
        height: 1fr;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cursor_type", "row")
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(**kwargs)
        self.model: ResultTable | None = None
        """The table shown; export reads this, not the widget."""

    def show(self, model: ResultTable, hide: Sequence[str] = (), max_widths: Mapping[str, int] | None = None) -> None:
        """Replace columns and rows with `model`'s, keeping the cursor row where possible.

        `hide`: column keys not shown (e.g. ones the screen states elsewhere); the model,
        and so any export, keeps them. `max_widths`: cap for columns whose text can be very
        long (C++ kernel names), so the numbers stay on screen; longer cells end in an ellipsis.
        """
        row = self.cursor_row
        self.model = model
        self.clear(columns=True)
        shown = [i for i, c in enumerate(model.columns) if c.key not in hide]
        numeric = {i: model.columns[i].is_numeric(model.column_values(i)) for i in shown}
        caps = {i: (max_widths or {}).get(model.columns[i].key) for i in shown}
        for i in shown:
            col = model.columns[i]
            cap = caps[i]
            header = clean(col.header)
            width = min(cap, max([cell_len(header), *(cell_len(model.cell_text(r, i)) for r in range(len(model.rows)))])) if cap else None
            self.add_column(Text(header, justify="right" if numeric[i] else "left"), key=col.key, width=width)
        for r in range(len(model.rows)):
            self.add_row(*(_cell(model.cell_text(r, i), numeric[i], caps[i]) for i in shown))
        if model.rows:
            self.move_cursor(row=min(row, len(model.rows) - 1))


def _cell(text: str, numeric: bool, cap: int | None) -> Text:
    cell = Text(text, justify="right" if numeric else "left")
    if cap and cell_len(text) > cap:
        cell.truncate(cap, overflow="ellipsis")
    return cell
