"""Provides `LogViewScreen`: a plain log, its end first, error / warning / success lines
tinted and counted in the status line; it follows the file as it grows, searches it, and
jumps to its problems.

The loading worker does the file work in two steps, each shown as it is done: the tail (the
first screen: at most `TAIL_BYTES` read), then, once that is drawn, one read of the file
(`model.log.scan`) for the offset of every line (then the whole log scrolls, with line
numbers) and the counts. The view stays on the lines it shows when the index arrives. A log
over the size limit keeps its tail, and the counts say they cover its first part only. Lines
are plain, cleaned text. Nothing here loads pandas: a log view is lines.

Following (`F`, as `less +F` and toolong's tail): every `FOLLOW_S` a worker stats the file and
reads only the bytes past the end known (`LogDocument.read_growth`); the lines are appended on
the UI thread, and the view stays on the last line while it is there. A look that found lines
is drawn as one frame (lines, scroll bar and status line together, no layout of the screen),
and while the file keeps growing the next look waits `BUSY_S`: lines that come faster than
anyone reads are drawn once a second (as `tail -f` looks), not at every look. Scrolling up
(or any jump) pauses following; back at the end (`G`, End) it goes on. A file that shrank or was
replaced is said in the status line and read again from its tail. A file changed in the last
`GROWING_S` is followed from the start (a running job's output), unless told otherwise.

Search (`/`): plain text, or a regular expression after `r/`, run over the file's bytes in a
worker (`LogSearch`); the matches are highlighted, counted in the status line as they are
found, and `n` / `N` go from one matching line to the next. Lines appended while following
are searched as they come.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Input, Static
from textual.worker import get_current_worker

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.files import MAX_BYTES, _human
from gpuscope.tui.model.log import Growth, LogDocument, Scan, scan
from gpuscope.tui.model.log_search import Found, LogSearch
from gpuscope.tui.screens.views.base import FileScreen
from gpuscope.tui.widgets.log_lines import LogLines

LABELS = {"error": "ERROR", "warning": "WARNING", "success": "SUCCESS"}
PROBLEMS = ("error", "warning")
"""What `e` / `E` jump between."""
FOLLOW_S = 0.5
"""How often a followed file is looked at while it is quiet."""
BUSY_S = 1.0
"""How often while it grows (each look that finds lines draws a frame)."""
FIRST_FRAME_S = 2.0
"""The longest the read of the whole file waits for the first screen to be drawn."""
GROWING_S = 60.0
"""A file changed this recently is taken for growing: followed unless told otherwise."""


class LogViewScreen(FileScreen):
    """The log's lines, the counts (and what following and search are doing) in the status
    line above them, the search box under them while it is asked for."""

    KIND = "Log"
    HELP_TITLE = "Keys: log"
    DEFAULT_CSS = """
    LogViewScreen #log-body { height: 1fr; }
    LogViewScreen #log-notes { height: auto; max-height: 2; padding: 0 1; color: $text-warning; }
    LogViewScreen #log-search { dock: bottom; display: none; }
    """
    BINDINGS = [
        Binding("slash", "search", "Search", tooltip="Find text in the whole log (r/ before a regular expression; case ignored unless the text has a capital)"),
        Binding("n", "match(False)", "Next", tooltip="Next line that matches the search"),
        Binding("N", "match(True)", "Prev match", show=False, tooltip="Previous line that matches the search"),
        Binding("e", "problem(False)", "Error", tooltip="Next error or warning line (ERROR, Traceback, CUDA error, WARNING ...)"),
        Binding("E", "problem(True)", "Prev error", show=False, tooltip="Previous error or warning line"),
        Binding("F", "follow", "Follow", tooltip="Follow the file as it grows (as less +F): new lines show at the end; scrolling up pauses, G / End goes on"),
        Binding("w", "wrap", "Wrap", tooltip="Wrap long lines onto several rows, or cut them at the edge (› marks a cut line)"),
        Binding("g,home", "edge(False)", "Top", show=False, tooltip="First line"),
        Binding("G,end", "edge(True)", "End", show=False, tooltip="Last line (and following again, when it is on)"),
    ]

    @dataclass
    class Tail:
        """The tail is read (or the reasons the file cannot be shown)."""

        document: LogDocument
        findings: list[Finding]
        growing: bool

    @dataclass
    class Scanned:
        """The offset of every line and the lines of each class, of the file's first `scan.end`
        bytes (all of it within the size limit); `size` is the file's when the tail was read."""

        document: LogDocument
        scan: Scan
        size: int

    class Grown(Message):
        """What a look at a followed file found."""

        def __init__(self, document: LogDocument, growth: Growth) -> None:
            super().__init__()
            self.document = document
            self.growth = growth

    class Searched(Message):
        """A chunk searched (`found` None: the search reached the end known)."""

        def __init__(self, search: LogSearch, found: Found | None) -> None:
            super().__init__()
            self.search = search
            self.found = found

    def __init__(self, path: str | Path, recognition: Any = None, *, follow: bool | None = None) -> None:
        """`follow`: follow the file as it grows; None (default): when it changed in the
        last `GROWING_S` seconds (a running job's output)."""
        super().__init__(path, recognition)
        self.document = LogDocument(self.path)
        """The lines; the worker fills in the offsets, the widget reads lines from it."""
        self.follow = follow
        """Following the file (None until the tail says whether it grows)."""
        self.stopped = False
        """The user stopped following with F (the status says so)."""
        self.counts: dict[str, int] | None = None
        """error / warning / success counts once counted; None before."""
        self.counted_lines = 0
        """How many lines the counts cover (the lines followed since are counted from the view)."""
        self.counted_part = ""
        """'' when the counts cover the whole file, else which part they cover."""
        self.search: LogSearch | None = None
        self.note = ""
        """What happened to the file (truncated, replaced, gone), for the status line."""
        self.ready = False
        self._poll_timer: Timer | None = None
        self._status_shown: Text | None = None
        self._drawn = threading.Event()
        """Set once the tail is on screen: the read of the whole file waits for it (on two
        cores it shared the interpreter with the first frame and delayed it by half)."""
        self._searching = False
        self._jump_to_match = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="log-body"):
            yield LogLines(id="log-lines")
            yield Static(id="log-notes", markup=False)
            yield Input(placeholder="search: text, or r/regex · Enter finds, Escape closes", id="log-search")

    # --- reading ----------------------------------------------------------------------------

    def read_steps(self) -> Iterator[Tail | Scanned]:
        """The tail, then one read of the file (up to the size limit) for the offset of every
        line and the counts."""
        document = self.document
        findings = document.open_tail()
        yield self.Tail(document, findings, _growing(self.path))
        if findings:
            return
        self._drawn.wait(FIRST_FRAME_S)
        found = scan(self.path, min(document.size, MAX_BYTES))
        if found is not None:
            yield self.Scanned(document, found, document.size)

    def show(self, step: Tail | Scanned) -> None:
        if step.document is not self.document:  # a step of the file before it was reopened
            return
        with self.app.batch_update():
            if isinstance(step, self.Scanned):
                self.show_scan(step)
            else:
                self.show_tail(step)

    def show_tail(self, step: Tail) -> None:
        if self.follow is None:
            self.follow = step.growing
        empty = all(f.kind == "empty" for f in step.findings)
        if step.findings and not (empty and self.follow):  # an empty file followed waits for lines
            self.sub_title = f"{self.KIND} · nothing to show · {self.name_text}"
            self.show_empty(f"Cannot show {self.paths_text()}.", step.findings)
            return
        self.ready = True
        self.call_after_refresh(self._drawn.set)
        self.refresh_bindings()
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "log-body"
        lines = self.query_one(LogLines)
        lines.show(self.document)
        lines.search = self.search
        if not self.query_one("#log-search", Input).display:
            lines.focus()
        self._arm()
        self._more_search()
        self._update_status()

    def show_scan(self, step: Scanned) -> None:
        """The offsets (within the size limit: then the whole log scrolls, with line numbers)
        and the counts."""
        found, document, lines = step.scan, self.document, self.query_one(LogLines)
        notes = []
        if step.size > MAX_BYTES:
            self.counted_part = f"in the first {_human(MAX_BYTES)}"
            notes.append(f"{_human(step.size)}: counted in the first {_human(MAX_BYTES)} only (GPUSCOPE_MAX_FILE_MB raises it); the tail is the file's end")
        elif len(found.offsets):  # none: the file was emptied meanwhile (the next look reopens it)
            keep = None if lines.stick else lines.top_offset()
            document.set_offsets(found.offsets, found.end)
            lines.show(document, keep)
        self.counts = dict(found.counts)
        self.counted_lines = len(found.offsets)
        document.set_classes(found.lines_of, self.counted_lines)
        self.query_one("#log-notes", Static).update(Text("\n".join(notes)))
        lines.refresh()
        self._update_status()

    # --- following --------------------------------------------------------------------------

    def _arm(self, busy: bool = False) -> None:
        """Look at the file again in `FOLLOW_S`, or `BUSY_S` after a look that found lines (one
        look at a time: the next is armed when this one is taken)."""
        if self._poll_timer is not None:
            self._poll_timer.stop()
        self._poll_timer = self.set_timer(BUSY_S if busy else FOLLOW_S, self._look) if self.follow else None

    def _look(self) -> None:
        self._poll_timer = None
        self.look_at_file(self.document)

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False)
    def look_at_file(self, document: LogDocument) -> None:
        self.post_message(self.Grown(document, document.read_growth()))

    def on_log_view_screen_grown(self, message: Grown) -> None:
        if message.document is not self.document or not self.follow:
            return
        growth = message.growth
        if growth.change in ("truncated", "replaced"):
            self.reopen(growth.change)
            return
        if growth.change == "same":
            self._arm()
            return
        with self.app.batch_update():  # the lines, the scroll bar and the status: one frame
            if growth.change == "gone":
                self.note = "the file is gone: waiting for it"
            elif growth.change == "grown":
                self.document.extend(growth)
                if self.note.startswith("the file is gone"):
                    self.note = ""
                self.query_one(LogLines).grew()
                self._more_search()
            self._update_status()
        self._arm(busy=growth.change == "grown")

    def reopen(self, why: str) -> None:
        """The file shrank or is another one: read it again from its tail, and say so."""
        self.note = f"{why} at {time.strftime('%H:%M:%S')}: reopened"
        self.notify(f"{self.name_text} was {why}: reopened", title="Log", markup=False)
        self.document = LogDocument(self.path)
        self.counts, self.counted_lines, self.counted_part = None, 0, ""
        if self.search is not None:
            self.search = LogSearch.compile(self.search.text)
        self.load()

    def action_follow(self) -> None:
        """F: follow the end; when following but paused (scrolled up), go on following, as G
        does; when following at the end, stop."""
        self.follow = not self.follow or self.paused
        self.stopped = not self.follow  # said in the status: a log the user stopped following
        if self.follow:
            self.action_edge(True)
        self._arm()
        self._update_status()

    # --- search -----------------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one("#log-search", Input)
        box.display = True
        box.value = self.search.text if self.search is not None else ""
        box.focus()

    def action_back(self) -> None:
        """Escape: close the search box when it is open, else the view."""
        box = self.query_one("#log-search", Input)
        if box.display:
            box.display = False
            self.query_one(LogLines).focus()
            return
        super().action_back()

    @on(Input.Submitted, "#log-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False
        lines = self.query_one(LogLines)
        lines.focus()
        text = event.value
        if not text:
            self.search = lines.search = None
        else:
            try:
                self.search = lines.search = LogSearch.compile(text)
            except ValueError as exc:
                self.notify(clean(str(exc)), title="Search", severity="error", markup=False)
                return
            self._jump_to_match = True
            self._more_search()
        lines.refresh()
        self._update_status()

    def _more_search(self) -> None:
        """Search the bytes not searched yet (the whole file first, then what following
        appended), one worker at a time."""
        search = self.search
        if search is None or self._searching or not self.ready or search.scanned_to >= self.document.end:
            return
        self._searching = True
        self.scan(search, self.document, search.scanned_to, self.document.end)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def scan(self, search: LogSearch, document: LogDocument, start: int, end: int) -> None:
        worker = get_current_worker()
        for found in search.scan(document.path, start, end, lambda: worker.is_cancelled):
            self.post_message(self.Searched(search, found))
        self.post_message(self.Searched(search, None))

    def on_log_view_screen_searched(self, message: Searched) -> None:
        search = message.search
        if search is not self.search:
            self._searching = self._searching and message.found is not None
            return
        if message.found is not None:
            search.add(message.found)
            if self._jump_to_match:
                self._first_jump(done=False)
        else:
            self._searching = False
            if self._jump_to_match:
                self._first_jump(done=True)
            self._more_search()
        self.query_one(LogLines).refresh()
        self._update_status()

    def _first_jump(self, done: bool) -> None:
        """After a new search: to the first match from the top line on screen down, as soon as
        one is found; when the search is done and none was, to the nearest one above."""
        search, lines, document = self.search, self.query_one(LogLines), self.document
        if search is None or not document.line_count:
            return
        top = lines.top_offset() or 0
        found = search.next_line(top - 1)
        if found is None and done:
            found = search.next_line(top, backwards=True)
        if found is not None and found >= document.first_offset:
            self._jump_to_match = False
            lines.go_to(document.index_of_offset(found))
        elif done:
            self._jump_to_match = False
            if search.line_count:
                self.notify(f"{search.line_count:,} matching lines, all before the part read", title="Search", markup=False)
            else:
                self.notify(f"No line matches {clean(search.text)}", title="Search", markup=False)

    def action_match(self, backwards: bool = False) -> None:
        search, lines, document = self.search, self.query_one(LogLines), self.document
        if search is None:
            self.notify("No search yet: / to search", markup=False)
            return
        at = lines.anchor(backwards)
        offset = int(document.offsets[at]) if 0 <= at < document.line_count else (document.end if at >= 0 else -1)
        found = search.next_line(offset, backwards)
        if found is None or found < document.first_offset:
            kept = search.lines[search.lines >= document.first_offset]
            if not len(kept):
                self.notify(f"No match in the lines read so far for {clean(search.text)}", markup=False)
                return
            found = int(kept[-1] if backwards else kept[0])
            self.notify("Back at the last match" if backwards else "Back at the first match", markup=False)
        lines.go_to(document.index_of_offset(found))
        self._update_status()

    # --- moving -----------------------------------------------------------------------------

    def action_problem(self, backwards: bool = False) -> None:
        lines = self.query_one(LogLines)
        found = self.document.next_of(PROBLEMS, lines.anchor(backwards), backwards)
        if found is None:
            where = "before" if backwards else "after"
            self.notify(f"No error or warning line {where} this one" + ("" if self.document.indexed else " in the tail read so far"), markup=False)
            return
        lines.go_to(found)
        self._update_status()

    def action_wrap(self) -> None:
        lines = self.query_one(LogLines)
        lines.set_wrap(not lines.wrap)
        self._update_status()

    def action_edge(self, end: bool) -> None:
        lines = self.query_one(LogLines)
        lines.cursor = None
        if end:
            lines.scroll_end(animate=False, immediate=True)
        else:
            lines.scroll_home(animate=False, immediate=True)
        self._update_status()

    def on_mount(self) -> None:  # before LoadingScreen's, which starts the reading (Textual calls each class's)
        self.watch(self.query_one(LogLines), "scroll_y", self._scrolled, init=False)

    @property
    def paused(self) -> bool:
        """Following, but scrolled up from the end: new lines are read, the view stays."""
        return bool(self.follow) and not self.query_one(LogLines).stick

    def _scrolled(self) -> None:
        """Scrolling up from the end pauses following, reaching it again goes on: said."""
        if self.follow and self.ready:
            self._update_status()

    # --- status -----------------------------------------------------------------------------

    def status_text(self) -> Text:
        document = self.document
        text = Text()
        lines = self.query_one(LogLines)
        if self.follow:
            text.append("‖ paused: G to follow  " if self.paused else "● following  ", style=self._style("warning" if self.paused else "success"))
        elif self.stopped:
            text.append("not following: F follows  ", style=self._style("warning"))
        if self.note:
            text.append(self.note + "  ", style=self._style("warning"))
        if not document.line_count:
            text.append("empty so far: waiting for lines", style="dim")
            return text
        for name, count in self._counts().items():
            text.append(f"{LABELS[name]} {count:,}", style=self._style(name) if count else "dim").append("  ")
        if self.counts is None:
            text.append("so far (counting ...)  ", style="dim")
        elif self.counted_part:
            text.append(self.counted_part + "  ", style="dim")
        if self.search is not None:
            text.append(self._search_text() + "  ")
        if document.indexed:
            text.append(f"· {document.line_count:,} lines · {_human(document.size)}", style="dim")
        else:
            text.append(f"· last {_human(document.size - document.first_offset)} of {_human(document.size)} shown"
                        + (" (indexing the rest ...)" if document.size <= MAX_BYTES else " (over the size limit: the tail only)"), style="dim")
        if lines.cursor is not None and document.indexed:
            text.append(f" · at line {lines.cursor + 1:,}", style="dim")
        if lines.wrap:
            text.append(" · wrapped", style="dim")
        return text

    def _counts(self) -> dict[str, int]:
        """The counted lines of each class, plus those followed since (known to the view)."""
        known = self.document.classes
        if self.counts is None:
            values = list(known.values())
            return {name: values.count(name) for name in LABELS}
        if self.counted_part or not self.document.indexed:
            return dict(self.counts)
        later = [c for i, c in known.items() if i >= self.counted_lines]
        return {name: self.counts[name] + later.count(name) for name in LABELS}

    def _search_text(self) -> str:
        search = self.search
        assert search is not None
        where = f"/{clean(search.text)}: {search.line_count:,} matching lines"
        if self._searching and search.scanned_to < self.document.end:
            where += f" (searching {100 * search.scanned_to // max(1, self.document.end)} %)"
        return where + (" (n / N visit the first 1,000,000)" if search.capped else "")

    def _style(self, name: str) -> str:
        color = self.app.theme_variables.get({"error": "text-error", "warning": "text-warning", "success": "text-success"}[name], "")
        return f"bold {color}".strip()

    def _update_status(self) -> None:
        self.status(self.status_text())

    def status(self, text: Text | str) -> None:
        """The status line, drawn again only when its text changed, and without a layout of
        the screen: it is one row whatever it says (a layout per look was most of a frame)."""
        text = text if isinstance(text, Text) else Text(text)
        if text != self._status_shown:
            self._status_shown = text
            self.query_one(f"#{self.VIEW_ID}", Static).update(text, layout=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action in ("match", "problem", "edge", "search", "follow", "wrap") and not self.ready else True


def _growing(path: Path) -> bool:
    """Whether `path` changed in the last `GROWING_S` seconds (taken for a file being written)."""
    try:
        return time.time() - os.stat(path).st_mtime < GROWING_S
    except OSError:
        return False


class TextViewScreen(LogViewScreen):
    """A text file the registry knows no kind for: the log view, titled as text."""

    KIND = "Text"
    HELP_TITLE = "Keys: text"
