"""Provides `GpuscopeApp`: the shell every gpuscope screen plugs into.

The app owns what is common to all screens: the theme (dark by default, ctrl+t for light),
the command palette with our commands, `q` to quit and `?`/F1 for help. Screens bring their
own Header/Footer and content; the first one comes from a zero-argument factory so the
command line (and tests) decide what it is and with which data.
"""

from __future__ import annotations

from typing import Callable

from textual.app import App
from textual.binding import ActiveBinding, Binding, BindingType
from textual.driver import Driver
from textual.screen import Screen

from gpuscope.tui.commands import GpuscopeCommands
from gpuscope.tui.screens.help import HelpScreen

DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"


class GpuscopeApp(App[None]):
    """gpuscope's Textual application."""

    CSS_PATH = "gpuscope.tcss"
    TITLE = "gpuscope"
    COMMANDS = App.COMMANDS | {GpuscopeCommands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    """Below 110 columns panes stack vertically instead of side by side."""

    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Leave gpuscope"),
        Binding("question_mark,f1", "help", "Help", tooltip="Show all keys"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, tooltip="Dark or light theme"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, tooltip="Command palette"),
    ]
    """App-wide keys; screens add theirs."""

    def __init__(self, first_screen: Callable[[], Screen[object]] | None = None) -> None:
        super().__init__()
        self._first_screen = first_screen
        self.theme = DARK_THEME

    def get_driver_class(self) -> type[Driver]:
        """Textual's choice, except that its Linux driver becomes `QuietLinuxDriver`, whose
        input thread sleeps until a key instead of waking ten times a second."""
        driver = super().get_driver_class()
        if driver.__name__ != "LinuxDriver":  # Windows, or a driver named in TEXTUAL_DRIVER
            return driver
        from textual.drivers.linux_driver import LinuxDriver  # imports termios: not on Windows

        from gpuscope.tui.quiet_driver import QuietLinuxDriver

        return QuietLinuxDriver if driver is LinuxDriver else driver

    def get_default_screen(self) -> Screen[object]:
        """The screen from the factory; without one, Textual's blank default."""
        if self._first_screen is None:
            return super().get_default_screen()
        return self._first_screen()

    def action_toggle_theme(self) -> None:
        """ctrl+t: flip between the dark and the light theme."""
        self.theme = LIGHT_THEME if self.theme != LIGHT_THEME else DARK_THEME

    def action_help(self) -> None:
        """?/F1: list the keys active on the current screen."""
        if isinstance(self.screen, HelpScreen):
            return
        rows: dict[str, tuple[list[str], str, str]] = {}
        for active in sorted(self.screen.active_bindings.values(), key=self._help_order):
            binding = active.binding
            # Screen and app keys only: a focused table's cursor keys are not worth listing.
            if active.node not in (self, self.screen) or binding.system or not binding.description:
                continue
            keys, _, _ = rows.setdefault(binding.action, ([], binding.description, binding.tooltip))
            display = self.get_key_display(binding)
            if display not in keys:
                keys.append(display)
        listing = [(" / ".join(keys), description, tip) for keys, description, tip in rows.values()]
        self.push_screen(HelpScreen(listing, title=getattr(self.screen, "HELP_TITLE", "Keys")))

    def _help_order(self, active: ActiveBinding) -> int:
        """The screen's own keys first, then the app's, then generic ones (focus, copy)."""
        if active.node is self.screen and any(
            _binding_action(b) == active.binding.action for b in type(self.screen).BINDINGS
        ):
            return 0
        return 1 if active.node is self else 2


def _binding_action(binding: BindingType) -> str:
    return binding.action if isinstance(binding, Binding) else binding[1]
