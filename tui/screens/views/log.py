"""Provides `LogViewScreen`: a plain log, its end first, error / warning / success lines
tinted and counted in the status line, `n` / `N` to the next or previous error.

The loading worker does the file work in three steps, each shown as it is done: the tail (the
first screen: at most `TAIL_BYTES` read), the offset of every line (`plain_log.line_index`:
then the whole log scrolls, with line numbers), and the counts (`plain_log.read`). The view
stays on the lines it shows when the index arrives. A log over the size limit keeps its tail,
and the counts say they cover its first part only. Lines are plain, cleaned text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import ContentSwitcher, Static

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import logs as plain_log
from gpuscope.parsers.files import MAX_BYTES, _human
from gpuscope.tui.model.log import LogDocument
from gpuscope.tui.screens.views.base import FileScreen
from gpuscope.tui.widgets.log_lines import LogLines

LABELS = {"error": "ERROR", "warning": "WARNING", "success": "SUCCESS"}


class LogViewScreen(FileScreen):
    """The log's lines, the counts in the status line above them."""

    KIND = "Log"
    HELP_TITLE = "Keys: log"
    DEFAULT_CSS = """
    LogViewScreen #log-body { height: 1fr; }
    LogViewScreen #log-notes { height: auto; max-height: 2; padding: 0 1; color: $text-warning; }
    """
    BINDINGS = [
        Binding("n", "next('error')", "Next error", tooltip="Jump to the next error line (ERROR, Traceback, CUDA error ...)"),
        Binding("N", "next('error', True)", "Prev error", tooltip="Jump to the previous error line"),
        Binding("w", "next('warning')", "Next warning", show=False, tooltip="Jump to the next warning line"),
        Binding("W", "next('warning', True)", "Prev warning", show=False, tooltip="Jump to the previous warning line"),
        Binding("g,home", "edge(False)", "Top", show=False, tooltip="First line"),
        Binding("G,end", "edge(True)", "End", show=False, tooltip="Last line"),
    ]

    @dataclass
    class Tail:
        """The tail is read (or the reasons the file cannot be shown)."""

        findings: list[Finding]

    @dataclass
    class Indexed:
        """The offset of every line (of the part within the size limit)."""

        offsets: np.ndarray
        end: int

    @dataclass
    class Counted:
        """`plain_log.read`'s counts and the line numbers of each class."""

        meta: dict[str, Any]
        findings: list[Finding]

    def __init__(self, path: str | Path, recognition: Any = None) -> None:
        super().__init__(path, recognition)
        self.document = LogDocument(self.path)
        """The lines; the worker fills in the offsets, the widget reads lines from it."""
        self.counts: dict[str, int] | None = None
        """error / warning / success counts once counted; None before."""
        self.counted_part = ""
        """'' when the counts cover the whole file, else which part they cover."""
        self.ready = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="log-body"):
            yield LogLines(id="log-lines")
            yield Static(id="log-notes", markup=False)

    def read_steps(self) -> Iterator[Tail | Indexed | Counted]:
        """The tail, then (within the size limit) the offset of every line, then the counts."""
        findings = self.document.open_tail()
        yield self.Tail(findings)
        if findings:
            return
        size = self.document.size
        if not self.document.indexed and size <= MAX_BYTES:
            parts = list(plain_log.line_index(self.path))
            yield self.Indexed(np.concatenate(parts) if parts else np.zeros(0, np.int64), size)
        got = plain_log.read(self.path)
        yield self.Counted(got.meta, list(got.findings))

    def show(self, step: Tail | Indexed | Counted) -> None:
        if isinstance(step, self.Indexed):
            self.show_index(step)
        elif isinstance(step, self.Counted):
            self.show_counts(step)
        else:
            self.show_tail(step)

    def show_tail(self, step: Tail) -> None:
        if step.findings:
            self.sub_title = f"{self.KIND} · nothing to show · {self.name_text}"
            self.show_empty(f"Cannot show {self.paths_text()}.", step.findings)
            return
        self.ready = True
        self.refresh_bindings()
        self.query_one(f"#{self.SWITCH_ID}", ContentSwitcher).current = "log-body"
        lines = self.query_one(LogLines)
        lines.show(self.document)
        lines.focus()
        self._update_status()

    def show_index(self, step: Indexed) -> None:
        if not len(step.offsets):
            return
        lines = self.query_one(LogLines)
        at_end = lines.scroll_offset.y >= lines.max_scroll_y
        keep = None if at_end else lines.top_offset()
        self.document.set_offsets(step.offsets, step.end)
        lines.show(self.document, keep)
        self._update_status()

    def show_counts(self, step: Counted) -> None:
        meta = step.meta
        self.counts = {name: int(meta.get(f"{name}s" if name != "success" else "successes", 0) or 0) for name in LABELS}
        if self.document.size > MAX_BYTES:
            self.counted_part = f"in the first {_human(MAX_BYTES)}"
        self.document.set_classes({name: meta.get(f"{name}_lines", ()) for name in LABELS})
        notes = [clean(f.message) for f in step.findings]
        self.query_one("#log-notes", Static).update(Text("\n".join(notes)))
        self.query_one(LogLines).refresh()
        self._update_status()

    def status_text(self) -> Text:
        document = self.document
        text = Text()
        known = list(document.classes.values())
        counts = self.counts or {name: known.count(name) for name in LABELS}
        for name, label in LABELS.items():
            text.append(f"{label} {counts[name]:,}", style=self._style(name) if counts[name] else "dim").append("  ")
        if self.counts is None:
            text.append("so far (counting ...)  ", style="dim")
        elif self.counted_part:
            text.append(self.counted_part + "  ", style="dim")
        if document.indexed:
            text.append(f"· {document.line_count:,} lines · {_human(document.size)}", style="dim")
        else:
            text.append(f"· last {_human(document.size - int(document.offsets[0]))} of {_human(document.size)} shown"
                        + (" (indexing the rest ...)" if document.size <= MAX_BYTES else " (over the size limit: the tail only)"), style="dim")
        lines = self.query_one(LogLines)
        if lines.cursor is not None:
            text.append(f" · at line {lines.cursor + 1:,}" if document.indexed else "", style="dim")
        return text

    def _style(self, name: str) -> str:
        color = self.app.theme_variables.get({"error": "text-error", "warning": "text-warning", "success": "text-success"}[name], "")
        return f"bold {color}".strip()

    def _update_status(self) -> None:
        self.status(self.status_text())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if action in ("next", "edge") and not self.ready else True

    def action_next(self, kind: str, backwards: bool = False) -> None:
        lines = self.query_one(LogLines)
        start = lines.cursor if lines.cursor is not None else (int(lines.scroll_offset.y) + (lines.size.height if backwards else -1))
        found = self.document.next_of(kind, start, backwards)
        if found is None:
            where = "before" if backwards else "after"
            self.notify(f"No {kind} line {where} this one" + ("" if self.document.indexed else " in the tail read so far"), markup=False)
            return
        lines.go_to(found)
        self._update_status()

    def action_edge(self, end: bool) -> None:
        lines = self.query_one(LogLines)
        lines.cursor = None
        if end:
            lines.scroll_end(animate=False, immediate=True)
        else:
            lines.scroll_home(animate=False, immediate=True)
        self._update_status()


class TextViewScreen(LogViewScreen):
    """A text file the registry knows no kind for: the log view, titled as text."""

    KIND = "Text"
    HELP_TITLE = "Keys: text"
