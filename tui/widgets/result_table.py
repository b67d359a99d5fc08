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

from gpuscope.metrics import export
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
        self._shown: tuple[ResultTable, tuple[str, ...], dict[str, int], dict[str, int], str | None] | None = None
        """The last `show()` arguments, to refit when the width changes."""
        self._fitted_width = 0

    def show(self, model: ResultTable, hide: Sequence[str] = (), max_widths: Mapping[str, int] | None = None,
             squeeze: Mapping[str, int] | Sequence[str] = (), fit_through: str | None = None) -> None:
        """Replace columns and rows with `model`'s, keeping the cursor row where possible.

        `hide`: column keys not shown (e.g. ones the screen states elsewhere); the model,
        and so any export, keeps them. `max_widths`: cap for columns whose text can be very
        long. `squeeze`: text columns (names, verdicts) cut in the middle, as far as needed,
        so the table fits the width it has (`export.fit_widths`; numbers are never cut, and a
        header wider than its column wraps onto a second line instead of being cut); a mapping
        gives the narrowest each is cut to. Refitted when the width changes. `fit_through`: only the columns up to this one need to fit (the
        others scroll into view); default all.
        """
        least = dict(squeeze) if isinstance(squeeze, Mapping) else {key: export.MIN_SQUEEZED for key in squeeze}
        self._shown = (model, tuple(hide), dict(max_widths or {}), least, fit_through)
        self._fit()

    def on_resize(self) -> None:
        if self._shown is not None and self.size.width != self._fitted_width:
            self._fit()

    def _room(self) -> int:
        """Columns the cells may use: the width less the vertical scrollbar (0 before layout)."""
        width = self.size.width
        return max(0, width - self.styles.scrollbar_size_vertical) if width else 0

    def _fit(self) -> None:
        assert self._shown is not None
        model, hide, max_widths, squeezable, fit_through = self._shown
        row = self.cursor_row
        self.model = model
        self._fitted_width = self.size.width
        self.clear(columns=True)
        shown = [i for i, c in enumerate(model.columns) if c.key not in hide]
        numeric = {i: model.columns[i].is_numeric(model.column_values(i)) for i in shown}
        headers = {i: clean(model.columns[i].header) for i in shown}
        texts = {i: [model.cell_text(r, i) for r in range(len(model.rows))] for i in shown}
        values = [max(map(cell_len, texts[i]), default=0) for i in shown]
        widths = [max(cell_len(headers[i]), v) for i, v in zip(shown, values)]
        widths = [min(w, max_widths[model.columns[i].key]) if model.columns[i].key in max_widths else w for i, w in zip(shown, widths)]
        keys = [model.columns[i].key for i in shown]
        fitted = keys.index(fit_through) + 1 if fit_through in keys else len(keys)
        room = self._room()
        excess = sum(widths[:fitted]) + 2 * self.cell_padding * fitted - room
        if room and excess > 0 and squeezable:
            # Headers wrap onto a second line rather than being cut ('medi…op/s', 'Lau…hes').
            floors = [export.header_floor(headers[i]) for i in shown[:fitted]]
            cuttable = [key in squeezable and not numeric[i] and v > 4 for key, i, v in zip(keys[:fitted], shown, values)]
            least = [max(export.distinct_width(texts[i], squeezable.get(key, export.MIN_SQUEEZED)), floor) if key in squeezable else 0
                     for key, i, floor in zip(keys[:fitted], shown, floors)]
            value_floors = [max(min(v, w), floor) for v, w, floor in zip(values, widths, floors)]
            widths[:fitted] = export.fit_widths(widths[:fitted], value_floors, cuttable, excess, least)
        labels = [export.header_lines(headers[i], width) for i, width in zip(shown, widths)]
        self.header_height = max(map(len, labels), default=1)
        for i, width, label in zip(shown, widths, labels):
            self.add_column(Text("\n".join(label), justify="right" if numeric[i] else "left"),
                            key=model.columns[i].key, width=width)
        for r in range(len(model.rows)):
            self.add_row(*(_cell(texts[i][r], numeric[i], width) for i, width in zip(shown, widths)))
        if model.rows:
            self.move_cursor(row=min(row, len(model.rows) - 1))


def _cell(text: str, numeric: bool, width: int) -> Text:
    """A cell no wider than its column: longer text is cut in the middle, so both ends stay."""
    return Text(export.middle(text, width), justify="right" if numeric else "left")
