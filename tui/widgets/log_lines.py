"""Provides `LogLines`: a `LogDocument` drawn line by line, only the lines on screen read.

A `ScrollView` with the line API (as toolong's log lines): its virtual height is the number of
lines known, and `render_line` asks the document for the one line it draws, so a log of
millions of lines costs what one screen costs. Error, warning and success lines are tinted
with the theme's `$error`, `$warning` and `$success` (the word in the line says which, so the
tint is not the only signal); the current line (where `n` / `N` jumped) is highlighted.
Lines are plain text: the document cleaned them, and nothing here reads markup.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gpuscope.tui.model.log import LogDocument


class LogLines(ScrollView, can_focus=True):
    """The document's lines, a line-number gutter once the line numbers are known."""

    COMPONENT_CLASSES = {"log-lines--error", "log-lines--warning", "log-lines--success", "log-lines--gutter", "log-lines--cursor"}
    DEFAULT_CSS = """
    LogLines { height: 1fr; background: $surface; }
    LogLines > .log-lines--error { color: $text-error; background: $error-muted; text-style: bold; }
    LogLines > .log-lines--warning { color: $text-warning; background: $warning-muted; }
    LogLines > .log-lines--success { color: $text-success; background: $success-muted; text-style: bold; }
    LogLines > .log-lines--gutter { color: $text-muted; }
    LogLines > .log-lines--cursor { background: $accent 40%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document: LogDocument | None = None
        self.cursor: int | None = None
        """The line `n` / `N` jumped to (highlighted), or None."""
        self._widest = 0

    def show(self, document: LogDocument, keep_offset: int | None = None) -> None:
        """Draw `document` (again, after its index arrived): at the line holding byte
        `keep_offset` if given, else at the end (a log is read from its end)."""
        self.document = document
        self._widest = max(self._widest, max((cell_len(document.line(i)) for i in range(max(0, document.line_count - 200), document.line_count)), default=0))
        self._resize()
        if keep_offset is not None:
            self.cursor = document.index_of_offset(keep_offset) if self.cursor is not None else None
            self.scroll_to(y=max(0, document.index_of_offset(keep_offset)), animate=False, immediate=True)
        else:
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def _gutter_width(self) -> int:
        document = self.document
        return len(f"{document.line_count:,}") + 1 if document is not None and document.indexed else 0

    def _resize(self) -> None:
        lines = self.document.line_count if self.document is not None else 0
        self.virtual_size = Size(self._widest + self._gutter_width() + 1, lines)

    def top_offset(self) -> int | None:
        """Byte offset of the first line on screen (to stay there when the index arrives)."""
        document = self.document
        if document is None or not document.line_count:
            return None
        return int(document.offsets[min(int(self.scroll_offset.y), document.line_count - 1)])

    def go_to(self, index: int) -> None:
        """Make line `index` current and bring it to the middle of the view."""
        self.cursor = index
        self.scroll_to(y=max(0, index - self.size.height // 2), animate=False, immediate=True)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        document, width = self.document, self.size.width
        base = self.rich_style
        index = int(self.scroll_offset.y) + y
        if document is None or index >= document.line_count:
            return Strip.blank(width, base)
        text = document.line(index)
        if cell_len(text) > self._widest:  # a line wider than any seen: widen the scroll range
            self._widest = cell_len(text)
            self.call_after_refresh(self._resize)
        kind = document.classes.get(index)
        style = base + self.get_component_rich_style(f"log-lines--{kind}") if kind else base
        if index == self.cursor:
            style += self.get_component_rich_style("log-lines--cursor")
        gutter = self._gutter_width()
        segments = [Segment(f"{index + 1:>{gutter - 1},} ", base + self.get_component_rich_style("log-lines--gutter"))] if gutter else []
        line = Strip([Segment(text, style)]).crop(int(self.scroll_offset.x), int(self.scroll_offset.x) + width - gutter)
        strip = Strip(segments + list(line), gutter + line.cell_length)
        return strip.extend_cell_length(width, style).crop(0, width)
