"""Provides `KeysFooter`: the screen's shown keys on one line, drawn by one widget, compact on
narrow terminals so that `q Quit` and `? Help` stay on screen at 80 columns.

Textual's `Footer` mounts one widget per key and mounts them all again whenever the bindings
change (a focus change, a screen opened, a key joining the footer): each new widget is styled
by the stylesheet, and that restyling was the largest share of opening a view. This footer
lists the same keys, in the same order and colours, as one line of text, drawn again (not
rebuilt) when the bindings change.

Below `NARROW` columns the footer is compact (no padding around each key) and leaves out the
palette key (ctrl+p still works, and `?` lists it), as htop keeps F1 Help and F10 Quit on its
one line; at 80 columns the standard layout pushed the app's own keys (Quit, Help, listed
after each screen's) off the right edge.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widget import Widget

NARROW = 110
"""Below this many columns the footer is compact and leaves out `^p Commands`."""
PALETTE_EDGE = "▏"
"""Between the screen's keys and the palette key docked right, as Footer's border draws it."""


class ShownKey(NamedTuple):
    """A key the footer draws whole, on columns `start` to `end` (end excluded)."""

    key: str
    display: str
    description: str
    action: str
    enabled: bool
    start: int
    end: int


class KeysFooter(Widget):
    """The shown bindings of the screen, one line at the bottom; a click on a key presses it."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"keys-footer--key", "keys-footer--description", "keys-footer--edge"}
    DEFAULT_CSS = """
    KeysFooter {
        dock: bottom;
        height: 1;
        width: 1fr;
        color: $footer-foreground;
        background: $footer-background;
        .keys-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .keys-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .keys-footer--edge {
            color: $foreground 20%;
        }
    }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, _screen: object) -> None:
        self.refresh()

    def render(self) -> Text:
        return self._layout()[0]

    def shown_keys(self) -> list[ShownKey]:
        """The keys drawn whole at the footer's present width, left to right."""
        return self._layout()[1]

    def on_click(self, event: events.Click) -> None:
        for shown in self.shown_keys():
            if shown.start <= event.x < shown.end:
                if shown.enabled:
                    self.app.simulate_key(shown.key)
                else:
                    self.app.bell()
                return

    def _footer_bindings(self) -> tuple[list[tuple[Binding, bool]], tuple[Binding, bool] | None]:
        """The shown bindings, the first of each action as Footer lists them, and the palette's."""
        active = self.screen.active_bindings
        by_action: dict[str, tuple[Binding, bool]] = {}
        for _node, binding, enabled, _tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, (binding, enabled))
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.app.ENABLE_COMMAND_PALETTE else None
        return list(by_action.values()), (palette.binding, palette.enabled) if palette else None

    def _layout(self) -> tuple[Text, list[ShownKey]]:
        """The line at the footer's width and the keys it draws whole."""
        width = self.size.width
        compact = width < NARROW
        key_style = self.get_component_rich_style("keys-footer--key")
        description_style = self.get_component_rich_style("keys-footer--description")
        bindings, palette = self._footer_bindings()
        if compact:
            palette = None
        line = Text(no_wrap=True, overflow="crop", end="")
        shown: list[ShownKey] = []
        right = Text(no_wrap=True, end="")
        if palette is not None:
            binding, enabled = palette
            right.append(PALETTE_EDGE, self.get_component_rich_style("keys-footer--edge"))
            right.append(f" {self.app.get_key_display(binding)} ", key_style)
            right.append(f"{binding.description} ", description_style)
        room = width - right.cell_len
        for binding, enabled in bindings:
            dim = Style(dim=True) if not enabled else Style()
            display = self.app.get_key_display(binding)
            start = line.cell_len
            if compact:
                line.append(display, key_style + dim)
                line.append(f" {binding.description}", description_style + dim)
            else:
                line.append(f" {display} ", key_style + dim)
                line.append(f"{binding.description} ", description_style + dim)
            if line.cell_len <= room:
                shown.append(ShownKey(binding.key, display, binding.description, binding.action, enabled, start, line.cell_len))
            if compact:
                line.append(" ")  # the gap between keys
        line.truncate(room, pad=True)
        if palette is not None:
            binding, enabled = palette
            shown.append(ShownKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action, enabled, room + len(PALETTE_EDGE), width))
            line.append_text(right)
        line.stylize_before(self.rich_style)
        return line, shown
