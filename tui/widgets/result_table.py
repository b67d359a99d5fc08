"""Provides `ResultTableView`: a `DataTable` that shows a `ResultTable` model.

The model stays on the widget (`.model`) so export and tests read the model, never the cells.
Every cell is a `rich.text.Text`, so `[bold]` in an environment name is shown as typed.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

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

    def show(self, model: ResultTable) -> None:
        """Replace columns and rows with `model`'s, keeping the cursor row where possible."""
        row = self.cursor_row
        self.model = model
        self.clear(columns=True)
        numeric = [c.is_numeric(model.column_values(i)) for i, c in enumerate(model.columns)]
        for col, is_num in zip(model.columns, numeric):
            self.add_column(Text(col.header, justify="right" if is_num else "left"), key=col.key)
        for r in range(len(model.rows)):
            self.add_row(
                *(
                    Text(model.cell_text(r, c), justify="right" if numeric[c] else "left")
                    for c in range(len(model.columns))
                )
            )
        if model.rows:
            self.move_cursor(row=min(row, len(model.rows) - 1))
