"""Provides `PlotPickModal`: asks which column the table's plot puts across (x) and up (y).

Two lists side by side: x (the row number or a numeric column), y (a numeric column). Arrows
move in a list, Tab goes to the other, Enter plots what both lists have highlighted; Escape
cancels. A column is never plotted against itself: the dialog says so and waits.
Dismisses with (x, y), or None when cancelled.
"""

from __future__ import annotations

from typing import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from gpuscope.metrics.safe_text import clean

ROW_LABEL = "row number"


class PlotPickModal(ModalScreen[tuple[str, str] | None]):
    """x and y for the table's plot, from the numeric columns."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PlotPickModal {
        align: center middle;
    }
    PlotPickModal > Vertical {
        width: 72;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    PlotPickModal Horizontal {
        height: auto;
    }
    PlotPickModal OptionList {
        width: 1fr;
        height: auto;
        max-height: 14;
    }
    PlotPickModal #plot-pick-note {
        color: $text-warning;
        height: auto;
    }
    """

    def __init__(self, row: str, numeric: Sequence[str], x: str, y: str) -> None:
        """`row`: the x that means the row number; `numeric`: the columns holding numbers;
        `x`, `y`: highlighted at first."""
        super().__init__()
        self.x_choices = [row, *numeric]
        self.y_choices = list(numeric)
        self.row = row
        self.first = (x if x in self.x_choices else row, y if y in self.y_choices else self.y_choices[0])

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Plot: x across, y up · Tab: the other list · Enter: plot · Esc: cancel", markup=False)
            with Horizontal():
                yield OptionList(*[Option(self._label(c), id=str(i)) for i, c in enumerate(self.x_choices)], id="plot-pick-x")
                yield OptionList(*[Option(self._label(c), id=str(i)) for i, c in enumerate(self.y_choices)], id="plot-pick-y")
            yield Static(id="plot-pick-note", markup=False)

    def _label(self, column: str) -> str:
        return ROW_LABEL if column == self.row else clean(column)

    def on_mount(self) -> None:
        x_list, y_list = self.query_one("#plot-pick-x", OptionList), self.query_one("#plot-pick-y", OptionList)
        x_list.border_title, y_list.border_title = "x", "y"
        x_list.highlighted = self.x_choices.index(self.first[0])
        y_list.highlighted = self.y_choices.index(self.first[1])
        y_list.focus()

    @property
    def chosen(self) -> tuple[str, str]:
        """(x, y) highlighted now."""
        x = self.query_one("#plot-pick-x", OptionList).highlighted or 0
        y = self.query_one("#plot-pick-y", OptionList).highlighted or 0
        return self.x_choices[x], self.y_choices[y]

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        x, y = self.chosen
        if x == y:
            self.query_one("#plot-pick-note", Static).update(f"x and y are both {clean(x)}: choose another for one of them")
            return
        self.dismiss((x, y))

    def action_cancel(self) -> None:
        self.dismiss(None)
