"""Provides `KeysFooter`: Textual's `Footer`, compact on narrow terminals so that `q Quit` and
`? Help` stay on screen at 80 columns.

At 80 columns the standard footer's padding pushed the app's own keys (Quit, Help, listed after
each screen's) off the right edge, and the `^p Commands` key, docked right, covered the last
visible ones: a new user saw neither how to leave nor how to get help. Below `NARROW` columns
the footer is compact (no padding around each key) and leaves out the palette key (ctrl+p
still works, and `?` lists it), as htop keeps F1 Help and F10 Quit on its one line.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer

NARROW = 110
"""Below this many columns the footer is compact and leaves out `^p Commands`."""


class KeysFooter(Footer):
    """A `Footer` that turns compact, without the palette key, below `NARROW` columns."""

    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(self.app.size.width)

    def _fit(self, width: int) -> None:
        narrow = width < NARROW
        if narrow == self.compact and self.show_command_palette is not narrow:
            return
        self.compact = narrow
        self.show_command_palette = not narrow
        self.call_after_refresh(self.recompose)
