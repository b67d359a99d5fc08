"""Provides `GpuscopeApp`: the shell every gpuscope screen plugs into.

The app owns what is common to all screens: the theme (dark by default, ctrl+t for light),
the command palette with our commands, `q` to quit, `?`/F1 for help and Escape to close a
screen opened over another. Screens bring their own Header/Footer and content; the first one
comes from a zero-argument factory so the command line (and tests) decide what it is and with
which data.

Watch and browse are two Textual modes of one app, each with its own screen stack, so each
keeps its state while the other is shown: `b` on the watch opens the browser (on the job's
working directory), `w` on the browser the watch. The first screen is the `main` mode; the
other mode is made the first time it is asked for. A watch left for the browser keeps polling
and recording its history, and draws nothing until it is shown again (its `redraw` skips a
screen that is not the active one): it costs a poll thread's time, nothing on screen.

`run()` refuses to start without a terminal on both sides (`NoTerminal`: the command line
prints instead, or says what to use), and watches standard input for a hang-up: a terminal
that goes away without SIGHUP (a closed pseudo-terminal, a dropped SSH connection whose
shell never sent it) makes the screen exit. Without that, Textual's input thread (8.2.8)
reads end-of-file in a loop and the process spins at 100 % CPU forever. Public API only:
`select.poll` on the descriptor, asking for no events, so only a hang-up or an error wakes
the watching thread (keys never do), and `post_message`, which is safe from a thread.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from datetime import datetime
from typing import Any, Callable, TextIO

from textual.app import App
from textual.binding import ActiveBinding, Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen, Screen

from gpuscope.tui.commands import GpuscopeCommands
from gpuscope.tui.model import settings
from gpuscope.tui.screens.help import HelpScreen

MAIN = "main"
"""The mode of the first screen."""
DARK_THEME = "textual-dark"
LIGHT_THEME = "textual-light"


class NoTerminal(Exception):
    """`GpuscopeApp.run()` found no terminal: `stream` is 'stdin' or 'stdout'."""

    def __init__(self, stream: str) -> None:
        super().__init__(f"the screen needs a terminal, and {stream} is not one")
        self.stream = stream


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):  # closed, or no descriptor
        return False


class HangupWatch:
    """A thread that sleeps in `poll()` on `fd` until it hangs up (or errs), then calls
    `on_hangup` once. `stop()` wakes and ends it through a pipe."""

    def __init__(self, fd: int, on_hangup: Callable[[], Any]) -> None:
        self.fd = fd
        self.on_hangup = on_hangup
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._run, name="gpuscope-hangup-watch", daemon=True)

    def start(self) -> "HangupWatch":
        self._thread.start()
        return self

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, 0)  # no events asked: POLLHUP, POLLERR and POLLNVAL still come
        poller.register(self._wake_read, select.POLLIN)
        while True:
            try:
                events = poller.poll()
            except InterruptedError:  # pragma: no cover - Python retries poll() itself
                continue
            for fd, mask in events:
                if fd == self._wake_read:
                    return
                if mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    self.on_hangup()
                    return

    def stop(self) -> None:
        try:
            os.write(self._wake_write, b"x")
        except OSError:
            pass
        self._thread.join(timeout=2)
        for fd in (self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass


class GpuscopeApp(App[None]):
    """gpuscope's Textual application."""

    CSS_PATH = "gpuscope.tcss"
    TITLE = "gpuscope"
    COMMANDS = App.COMMANDS | {GpuscopeCommands}
    DEFAULT_MODE = MAIN
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    """Below 110 columns panes stack vertically instead of side by side."""

    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Leave gpuscope"),
        Binding("question_mark,f1", "help", "Help", tooltip="Show all keys"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, tooltip="Dark or light theme"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, tooltip="Command palette"),
        Binding("ctrl+s", "screenshot", "Screenshot", show=False, tooltip="Save the screen as an SVG in the current folder"),
        Binding("escape", "back", "Back", tooltip="Close this screen: back to the one it was opened from"),
    ]
    """App-wide keys; screens add theirs."""

    class TerminalLost(Message):
        """Standard input hung up: the terminal is gone."""

    def __init__(self, first_screen: Callable[[], Screen[object]] | None = None, *, mode: str | None = None,
                 watch: Callable[[], Screen[object]] | None = None) -> None:
        """`mode`: what the first screen is, 'watch' or 'browse' (None: a screen alone, as
        `gpuscope magma` opens); `watch`: makes the watch screen when the browser asks for it."""
        super().__init__()
        self._first_screen = first_screen
        self.first_mode = mode
        self._watch_screen = watch
        self._modes_made = {MAIN}
        self.add_mode(MAIN, self.get_default_screen)
        saved = settings.load()[0].theme  # a broken file is said by the watch's setup, not here
        self.theme = saved if saved in self.available_themes else DARK_THEME
        self.terminal_lost = False
        """Set when the screen exited because its terminal went away."""
        self._watch_fd: int | None = None
        self._watch: HangupWatch | None = None

    def run(self, **kwargs: Any) -> Any:  # type: ignore[override]
        """Textual's `run`, on a terminal only (raises `NoTerminal`), ending when standard
        input hangs up. Headless runs (`headless=True`) need no terminal."""
        if not kwargs.get("headless"):
            for name, stream in (("stdout", sys.__stdout__), ("stdin", sys.__stdin__)):
                if not _is_terminal(stream):
                    raise NoTerminal(name)
            self._watch_fd = sys.__stdin__.fileno()  # type: ignore[union-attr]
        try:
            return super().run(**kwargs)
        finally:
            if self._watch is not None:
                self._watch.stop()
                self._watch = None

    def on_mount(self) -> None:
        if self._watch_fd is not None and not self.is_headless:
            self._watch = HangupWatch(self._watch_fd, lambda: self.post_message(self.TerminalLost())).start()
        if self.first_mode == "browse":
            self.open_selected_file()

    def open_selected_file(self) -> None:
        """`gpuscope browse FILE`: the browser opens on the file's folder with the file
        selected, and the file opens straight in its view over it (as `less FILE` or
        `toolong FILE` would; Escape goes back to the browser)."""
        from gpuscope.parsers import registry
        from gpuscope.tui.screens.browse.open import view_screen
        from gpuscope.tui.screens.browse.screen import BrowseScreen

        browser = self.screen
        if not isinstance(browser, BrowseScreen) or browser.select is None or not browser.select.is_file():
            return
        rec = registry.recognise(browser.select)
        screen = view_screen(rec, browser.typed(browser.select)) if rec.kind is not None else None
        if screen is not None:
            self.push_screen(screen)

    def on_gpuscope_app_terminal_lost(self) -> None:
        self.terminal_lost = True
        self.exit(return_code=1)

    def get_default_screen(self) -> Screen[object]:
        """The screen from the factory; without one, Textual's blank default."""
        if self._first_screen is None:
            return super().get_default_screen()
        return self._first_screen()

    @property
    def can_watch(self) -> bool:
        """Whether `w` can show a watch."""
        return self.first_mode == "watch" or self._watch_screen is not None

    def _mode(self, what: str) -> str:
        return MAIN if what == self.first_mode else what

    def show_watch(self) -> None:
        """Switch to the watch mode (made the first time)."""
        mode = self._mode("watch")
        if mode not in self._modes_made:
            if self._watch_screen is None:
                self.notify("No watch in this session.", markup=False)
                return
            self.add_mode(mode, self._watch_screen)
            self._modes_made.add(mode)
        self.switch_mode(mode)

    def show_browser(self, root: str | os.PathLike[str], select: str | os.PathLike[str] | None = None) -> None:
        """Switch to the browse mode; the first time, it opens on `root` with `select` under
        the cursor. Later it is as it was left."""
        mode = self._mode("browse")
        if mode not in self._modes_made:
            from gpuscope.tui.screens.browse.screen import BrowseScreen

            self.add_mode(mode, lambda: BrowseScreen(root, select=select))
            self._modes_made.add(mode)
        self.switch_mode(mode)

    def action_back(self) -> None:
        """Escape: close a screen opened over another (a view over the browser)."""
        self.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return len(self.screen_stack) > 1 and not isinstance(self.screen, ModalScreen)
        return True

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None, time_format: str | None = None) -> str | None:
        """ctrl+s and the palette's Screenshot: into the current folder, not `~/Downloads`
        (which compute nodes do not have: Textual's default then failed), and never over a file
        that is there: a name already taken gets -2, -3, ... and the new name is said."""
        folder = path or os.getcwd()
        wanted = filename or f"gpuscope_{datetime.now().strftime(time_format or '%Y-%m-%dT%H_%M_%S_%f')}.svg"
        name = free_name(folder, wanted)
        if name != wanted:
            self.notify(f"{wanted} exists: screenshot saved as {name}", title="Screenshot", markup=False)
        return super().deliver_screenshot(name, folder)

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
        # The screen's own keys that a focused widget also binds (the process table's
        # left/right, which fold tree branches) are not active on the screen, but they work.
        for binding in type(self.screen).BINDINGS:
            if not isinstance(binding, Binding) or not binding.description or binding.action in rows:
                continue
            if self.screen.check_action(binding.action.split("(")[0], ()) is False:
                continue
            keys = [self.get_key_display(Binding(key, binding.action)) for key in binding.key.split(",")]
            rows[binding.action] = (keys, binding.description, binding.tooltip)
        # The screen's keys in the order it declares them (fold next to tree), then the rest.
        declared = {_binding_action(b): i for i, b in enumerate(type(self.screen).BINDINGS)}
        ordered = sorted(rows.items(), key=lambda item: declared.get(item[0], len(declared)))
        listing = [(" / ".join(keys), description, tip) for _, (keys, description, tip) in ordered]
        self.push_screen(HelpScreen(listing, title=getattr(self.screen, "HELP_TITLE", "Keys")))

    def _help_order(self, active: ActiveBinding) -> int:
        """The screen's own keys first, then the app's, then generic ones (focus, copy)."""
        if active.node is self.screen and any(
            _binding_action(b) == active.binding.action for b in type(self.screen).BINDINGS
        ):
            return 0
        return 1 if active.node is self else 2


def free_name(folder: str, name: str) -> str:
    """`name`, or `stem-2.ext`, `stem-3.ext`, ... : the first that is not a file in `folder`."""
    stem, ext = os.path.splitext(name)
    candidate, n = name, 1
    while os.path.lexists(os.path.join(folder, candidate)):
        n += 1
        candidate = f"{stem}-{n}{ext}"
    return candidate


def _binding_action(binding: BindingType) -> str:
    return binding.action if isinstance(binding, Binding) else binding[1]
