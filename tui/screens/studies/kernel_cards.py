"""Provides `KernelCards`: the kernels screen's summary cards, one number each.

The cards are the seed notebook's three efficiencies, GPU busy against summed kernel time, and
the peak they are measured against (with its precision), so the peak is never out of sight.
Card contents are computed in `kernels_model` (`Card`); this widget only lays them out.
"""

from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Static

from gpuscope.tui.model.kernels import Card

CARD_COUNT = 5


class KernelCards(Horizontal):
    """A row of `CARD_COUNT` bordered cards: title on the border, a value, a detail line."""

    DEFAULT_CSS = """
    KernelCards {
        height: auto;
    }
    KernelCards > .kernel-card {
        width: 1fr;
        height: 4;
        padding: 0 1;
        border: round $panel;
        border-title-color: $text-muted;
    }
    """

    def compose(self) -> ComposeResult:
        for index in range(CARD_COUNT):
            yield Static(id=f"card-{index}", classes="kernel-card", markup=False)

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cards: tuple[Card, ...] = ()

    def show(self, cards: Sequence[Card]) -> None:
        self.cards = tuple(cards[:CARD_COUNT])
        self._titles()
        for index, card in enumerate(self.cards):
            widget = self.query_one(f"#card-{index}", Static)
            text = Text(no_wrap=True, overflow="ellipsis")  # a style here would cover both lines
            text.append(card.value, style="bold").append("\n").append(card.detail, style="dim")
            widget.update(text)

    def on_resize(self) -> None:
        self._titles()

    def _titles(self) -> None:
        """Each card's title, or its short form where the border has no room for it."""
        for index, card in enumerate(self.cards):
            widget = self.query_one(f"#card-{index}", Static)
            room = widget.size.width - 4  # corners and a space either side of the title
            fits = not widget.size.width or cell_len(card.title) <= room
            widget.border_title = Text(card.title if fits or not card.short else card.short)
