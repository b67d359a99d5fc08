"""Provides `ExportingScreen` (the one `export_to`: `e` writes what a screen shows),
`LoadingScreen`, the base of screens that read result files before showing them, and
`FreezesStartup`, the garbage-collector freeze of the screens a command opens first.

Export: a screen says what it would write in a format (`export_tables`), the dialog asks where
(`ask_export`), and `export_to` writes it atomically and says how that went (a notification,
never a traceback: a full disk or a folder without write permission is one line).

Reading can take seconds (thousands of files, a 10-million-row profile, a gigabyte log on a
slow mount), so it runs in a worker thread and the main thread only gets what is ready to show:
each step `read_steps` yields (by default the one model `read_model` builds) goes to `show`, and
the reason nothing can be shown goes to `show_failed`, never a traceback. A screen can wait a
moment for its first step before it is first drawn (`FIRST_STEP_S`): a small file is then shown
in the first frame, not after a loading frame drawn and laid out for nothing, and the loading
indicator is made only when the step is not there by then. The layout is one too:
a header, a status line, a switcher between the loading indicator, the empty state and the
screen's body (`compose_body`), the keys footer. The empty state's message and findings are
built the first time it is shown: most screens never show it, and a hidden findings table
still cost its styling on every screen opened. File names and error messages come from
outside: `paths_text` and `show_empty` pass them through `metrics.safe_text` (an escape
sequence in a folder name must not retitle or clear the terminal).
"""

from __future__ import annotations

import asyncio
import gc
from inspect import isawaitable
from pathlib import Path
from typing import Any, Iterator, Sequence

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import ContentSwitcher, Header, LoadingIndicator, Static
from textual.worker import get_current_worker

from gpuscope.metrics import export
from gpuscope.metrics.safe_text import clean, clean_lines
from gpuscope.metrics.table import ResultTable
from gpuscope.tui.screens.modals import ExportModal
from gpuscope.tui.widgets.keys_footer import KeysFooter


class Loading(LoadingIndicator):
    """Textual's loading indicator, still while hidden: hidden behind a loaded screen's content,
    the stock one goes on redrawing 16 times a second on every screen ever opened."""

    def on_hide(self) -> None:
        self.auto_refresh = None

    def on_show(self) -> None:
        self.auto_refresh = 1 / 16


class FreezesStartup:
    """Mixed into the screens a command opens first (`gpuscope watch`, `gpuscope browse`):
    once started, the objects alive then are exempt from garbage collection, and handed back
    when the screen goes."""

    freeze_gc = False
    """Set by the command; tests leave the collector alone."""

    def freeze_startup_objects(self) -> None:
        """Collect once, then exempt what is alive now (Textual's DOM and styles, the modules
        imported, the screen's data: about 70,000 objects on the watch, 135,000 in the browser
        with every view imported) from later collections. Without this, each full collection
        walked them all: about 40 ms every 40 s on the watch (a tenth of its CPU at a 1 s
        refresh), 0.1 s in most openings of a view from the browser (bench/open_bench.py)."""
        if self.freeze_gc:
            gc.collect()
            gc.freeze()

    def thaw_startup_objects(self) -> None:
        """What the screen held can be collected again (on unmount)."""
        if self.freeze_gc:
            gc.unfreeze()


class ExportingScreen(Screen[None]):
    """A screen whose `e` writes what it shows to a file the user names."""

    def export_tables(self, fmt: str) -> tuple[Sequence[ResultTable], Sequence[str]] | None:
        """The tables and the text blocks (plots as text) to write in `fmt`; None: nothing to write."""
        raise NotImplementedError

    def ask_export(self, default_path: str, what: str) -> None:
        """Ask where to write `what` (the file name offered: `default_path`), then write it."""
        self.app.push_screen(ExportModal(default_path, what), self.export_to)

    def export_to(self, path: str | None) -> None:
        """Write `export_tables` in the format `path`'s extension names; notify either way."""
        if not path:
            return
        target = Path(path).expanduser()
        fmt = export.format_for_path(target)
        shown = self.export_tables(fmt)
        if shown is None:
            return
        tables, extra = shown
        try:
            written = export.write(target, fmt, tables, extra=extra)
        except (OSError, ValueError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            self.notify(f"Could not export to {target}: {reason}", title="Export failed", severity="error", markup=False)
            return
        self.notify(f"Wrote {fmt} to {written}", title="Exported", markup=False)


class CannotShow(Exception):
    """Raised by a screen's reading when what it read cannot be shown; the message says why and
    is shown as it is (no exception type before it)."""


class LoadingScreen(ExportingScreen):
    INJECTED = "(injected)"
    """What `paths_text` says when a test injects the model instead of paths."""

    class Loaded(Message):
        """The worker read a step (the model, or a part of it shown early)."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

    class LoadFailed(Message):
        """The worker could not build a model at all (e.g. a bad --path-pattern or --group-by)."""

        def __init__(self, error: str) -> None:
            super().__init__()
            self.error = error

    paths: list[Any]

    STATE_PREFIX = ""
    """Prefix of the ids of the states below (`loading`, `empty`, `empty-message`,
    `empty-findings`); stylesheets and tests use them."""
    SWITCH_ID = ""
    """Id of the screen's ContentSwitcher that holds the states and the body."""
    VIEW_ID = ""
    """Id of the one-line Static that says what is shown ("Nothing to show" when empty)."""

    LOADING_TITLE = ""
    """The sub-title while reading ('' leaves it); `{paths}` and the other `text_fields` fill it."""
    LOADING_TEXT = "Reading {paths} ..."
    """The status line while reading."""
    FAILED_TITLE = ""
    """The sub-title when nothing could be read ('' leaves it)."""
    FAILED_TEXT = "Could not read {paths}.\n{error}"
    """The empty state's message when nothing could be read; `{error}` says why."""
    EXPECTED: tuple[type[Exception], ...] = ()
    """Errors whose message says it all (a flag's ValueError): shown without the type's name."""
    FIRST_STEP_S = 0.0
    """How long the screen, once mounted, waits for the worker's first step (or failure) before
    Textual first draws it; 0: it does not wait. A step that comes in time is shown in the
    first frame; a later one as usual, after the loading frame."""

    _loop: asyncio.AbstractEventLoop | None = None
    _waiting: asyncio.Future[Message] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id=self.VIEW_ID, markup=False)
        with ContentSwitcher(initial=None, id=self.SWITCH_ID):  # the loading indicator is added on mount
            yield from self.compose_states()
            yield from self.compose_body()
        yield from self.compose_below()
        yield KeysFooter()

    def compose_body(self) -> ComposeResult:
        """The screen's body: one widget (the switcher shows it by its id once there is data)."""
        raise NotImplementedError

    def compose_below(self) -> ComposeResult:
        """Widgets under the body, above the footer (a filter box); none by default."""
        yield from ()

    def compose_states(self) -> ComposeResult:
        """The empty state's box (`show_empty` fills it): the first child of the screen's
        ContentSwitcher, before its body (the loading indicator joins them on mount)."""
        yield Vertical(id=f"{self.STATE_PREFIX}empty")

    def text_fields(self) -> dict[str, str]:
        """What the titles and messages above name (`{paths}`), cleaned."""
        return {"paths": self.paths_text()}

    _resumed = False

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """The first resume, when the screen is pushed, does not restyle it: every node was
        styled as it was mounted, just before, so Textual's restyle of them all changes
        nothing (a third of the stylesheet applications of opening a table view). Later
        resumes are Textual's own. Runs before Textual's handler, which reads `refresh_styles`."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    async def on_mount(self) -> None:
        fields = self.text_fields()
        if self.LOADING_TITLE:
            self.sub_title = self.LOADING_TITLE.format(**fields)
        self.status(self.LOADING_TEXT.format(**fields))
        self._loop = asyncio.get_running_loop()
        # Textual lays the screen out and draws it when it handles the ScreenResume queued
        # behind this Mount: until this returns, nothing of it is drawn.
        waiting = self._waiting = self._loop.create_future()
        self.load()
        if self.FIRST_STEP_S:
            await asyncio.wait({waiting}, timeout=self.FIRST_STEP_S)
        self._waiting = None  # what comes later is a message, as usual
        if waiting.done():
            await self._handle(waiting.result())
        else:
            switch = self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher)
            await switch.add_content(Loading(id=f"{self.STATE_PREFIX}loading"), set_current=True)

    def _arrive(self, message: Message) -> None:
        """A message from the worker, on the main thread: to `on_mount` while it waits, else
        to the screen's queue."""
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_result(message)
        else:
            self.post_message(message)

    async def _handle(self, message: Message) -> None:
        if isinstance(message, self.Loaded):
            await self.on_loading_screen_loaded(message)
        elif isinstance(message, self.LoadFailed):
            self.on_loading_screen_load_failed(message)

    def status(self, text: Text | str) -> None:
        """Replace the one-line status under the header (plain text, never markup)."""
        self.query_one(f"#{self.VIEW_ID}", Static).update(text if isinstance(text, Text) else Text(text))

    def show_empty(self, text: str, findings: Sequence[object]) -> None:
        """Switch to the empty state: `text` says why (cleaned here: it names files and holds
        error messages), `findings` (if any) what was skipped."""
        from gpuscope.tui.widgets.findings import FindingsPane

        prefix = self.STATE_PREFIX
        self.status("Nothing to show")
        message = Text(clean_lines(text))
        box = self.query_one(f"#{prefix}empty", Vertical)
        if box.children:  # shown before: updated
            self.query_one(f"#{prefix}empty-message", Static).update(message)
            pane = self.query_one(f"#{prefix}empty-findings", FindingsPane)
            pane.show(findings)  # type: ignore[arg-type]
        else:
            pane = FindingsPane(findings, id=f"{prefix}empty-findings")  # type: ignore[arg-type]
            mounted = box.mount(Static(message, id=f"{prefix}empty-message", markup=False), pane)
            if findings:  # the keys move through them (the screen's body is hidden)
                self.call_later(self._focus_when_mounted, mounted, pane)
        pane.display = bool(findings)
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = f"{prefix}empty"

    @staticmethod
    async def _focus_when_mounted(mounted: AwaitMount, pane: Any) -> None:
        await mounted
        pane.table.focus()

    def read_model(self) -> Any:
        """Build the model; runs in the worker thread."""
        raise NotImplementedError

    def read_steps(self) -> Iterator[Any]:
        """What the worker hands to `show`, in order; runs in the worker thread. By default the
        one model `read_model` builds; a screen that can show a first part early yields each."""
        yield self.read_model()

    def error_text(self, error: Exception) -> str:
        return str(error) if isinstance(error, (CannotShow, *self.EXPECTED)) else f"{type(error).__name__}: {error}"

    @work(thread=True, exclusive=True, group="results", exit_on_error=False)
    def load(self) -> None:
        worker = get_current_worker()
        assert self._loop is not None  # set on mount
        try:
            for step in self.read_steps():
                self._loop.call_soon_threadsafe(self._arrive, self.Loaded(step))
                if worker.is_cancelled:  # the screen was closed: the rest would go nowhere
                    return
        except Exception as error:  # noqa: BLE001 - shown to the user instead of a traceback
            self._loop.call_soon_threadsafe(self._arrive, self.LoadFailed(self.error_text(error)))

    async def on_loading_screen_loaded(self, message: Loaded) -> None:
        shown = self.show(message.model)
        if isawaitable(shown):
            await shown

    def on_loading_screen_load_failed(self, message: LoadFailed) -> None:
        self.show_failed(message.error)

    def show(self, model: Any) -> Any:
        """Show what the worker read (on the main thread); may be a coroutine."""
        raise NotImplementedError

    def show_failed(self, error: str) -> None:
        """Nothing could be read: the empty state says why (`FAILED_TEXT`)."""
        fields = self.text_fields()
        if self.FAILED_TITLE:
            self.sub_title = self.FAILED_TITLE.format(**fields)
        self.show_empty(self.FAILED_TEXT.format(error=error, **fields), ())

    def paths_text(self) -> str:
        """The paths read, cleaned for display (titles, loading and empty messages)."""
        return ", ".join(clean(p) for p in self.paths) or self.INJECTED
