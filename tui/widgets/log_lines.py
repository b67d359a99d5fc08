"""Provides `LogLines`: a `LogDocument` drawn line by line, only the lines on screen read.

A `ScrollView` with the line API (as toolong's log lines): its virtual height is the number of
lines known, and `render_line` asks the document for the one line it draws, so a log of
millions of lines costs what one screen costs. A screen of lines is read from the file in one
read (`render_lines`), and lines that come while following change the scroll range without a
layout of the screen (the widget's own box does not change). Error, warning and success lines
are tinted with the theme's `$error`, `$warning` and `$success` (the word in the line says
which, so the tint is not the only signal); the current line (where a jump went) is
highlighted, and so are the matches of a search. Lines are plain text: the document cleaned
them, and nothing here reads markup.

Long lines are cut at the right edge with a `›` marker (scroll sideways to read on), or, with
`wrap`, folded onto as many rows as they need. Wrapped, a scroll step is still one log line:
the screen is filled from its top line down. At the end (`stick`), wrapped or not, the screen
is filled from the last line up, so the newest line of a followed log is on screen from the
first frame, before the scroll position has caught up with a size just known.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gpuscope.tui.model.log import LogDocument
from gpuscope.tui.model.log_search import LogSearch

CUT = "›"
"""Drawn in the last column of a line that goes on past the right edge."""


class LogLines(ScrollView, can_focus=True):
    """The document's lines, a line-number gutter once the line numbers are known."""

    COMPONENT_CLASSES = {"log-lines--error", "log-lines--warning", "log-lines--success", "log-lines--gutter",
                         "log-lines--cursor", "log-lines--match", "log-lines--cut"}
    DEFAULT_CSS = """
    LogLines { height: 1fr; background: $surface; }
    LogLines > .log-lines--error { color: $text-error; background: $error-muted; text-style: bold; }
    LogLines > .log-lines--warning { color: $text-warning; background: $warning-muted; }
    LogLines > .log-lines--success { color: $text-success; background: $success-muted; text-style: bold; }
    LogLines > .log-lines--gutter { color: $text-muted; }
    LogLines > .log-lines--cursor { background: $accent 40%; }
    LogLines > .log-lines--match { color: $text; background: $accent; text-style: bold; }
    LogLines > .log-lines--cut { color: $text-accent; text-style: bold; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.document: LogDocument | None = None
        self.cursor: int | None = None
        """The line a jump went to (highlighted), or None."""
        self.search: LogSearch | None = None
        """Whose matches are highlighted."""
        self.wrap = False
        """Long lines folded onto several rows instead of cut."""
        self.stick = False
        """Keep the last line on screen as lines come and the size changes (at the end
        until scrolled up)."""
        self._widest = 0
        self._styles: dict[str, Style] = {}
        """The base style and each component's, as drawn (looked up once: Textual's lookup
        per drawn line was most of following's cost)."""
        self._drawing: Size | None = None
        """The view's size while `render_lines` draws (looked up once, not per line)."""
        self._rows: tuple[tuple[Any, ...], list[tuple[int, Strip, Style]]] | None = None
        """The wrapped rows on screen, and what they were laid out for."""

    def show(self, document: LogDocument, keep_offset: int | None = None) -> None:
        """Draw `document` (again, after its index arrived): at the line holding byte
        `keep_offset` if given, else at the end (a log is read from its end)."""
        self.document = document
        self._measure(200)
        if keep_offset is not None:
            self.cursor = document.index_of_offset(keep_offset) if self.cursor is not None else None
            self.scroll_to(y=max(0, document.index_of_offset(keep_offset)), animate=False, immediate=True)
        else:
            self.stick = True
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def grew(self) -> None:
        """The document has more lines: a longer scroll range, the view still on the last
        line when it was there (`stick`)."""
        self._measure(self._view.height if self.stick else 0)
        if self.stick:
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def _measure(self, last: int) -> None:
        """Widen the scroll range to the widest of the `last` lines before they are drawn (a
        line found wider while drawing costs a frame more), and set it."""
        document = self.document
        if document is not None and last:
            lines = range(max(0, document.line_count - last), document.line_count)
            document.read_lines(lines.start, lines.stop)
            self._widest = max(self._widest, max((cell_len(document.line(i)) for i in lines), default=0))
        self._resize()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y:
            self.stick = True
        elif new < old:  # scrolled up, or jumped back
            self.stick = False

    def on_resize(self) -> None:
        """A size came: the last line stays on screen if it was."""
        if self.stick:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def watch_show_horizontal_scrollbar(self) -> None:
        """The sideways scroll bar takes a row: the last line stays on screen if it was."""
        self.on_resize()

    def _style(self, name: str = "") -> Style:
        """The widget's style (''), or a component class's (`log-lines--error` ...)."""
        if name not in self._styles:
            self._styles[name] = self.get_component_rich_style(name) if name else self.rich_style
        return self._styles[name]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    @property
    def _view(self) -> Size:
        """The cells lines are drawn in (the scroll bars take their own)."""
        return self._drawing or self.scrollable_content_region.size

    def _top(self) -> int:
        """The line on the first row: the last screenful at the end (wrapped, the line the
        scroll position is on)."""
        if self.stick and not self.wrap and self.document is not None:
            return max(0, self.document.line_count - self._view.height)
        return int(self.scroll_offset.y)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The rows in `crop`, drawn in one pass: the view's size is looked up once, and the
        lines not read yet are read from the file together."""
        self._drawing = self.scrollable_content_region.size
        try:
            if self.document is not None and not self.wrap:
                top = self._top()
                self.document.read_lines(top + crop.y, top + crop.bottom)
            return super().render_lines(crop)
        finally:
            self._drawing = None

    @property
    def at_end(self) -> bool:
        """Whether the last line is on screen."""
        return self.scroll_offset.y >= self.max_scroll_y

    def set_wrap(self, wrap: bool) -> None:
        self.wrap = wrap
        self._resize()
        self.refresh()

    def _gutter_width(self) -> int:
        document = self.document
        return len(f"{document.line_count:,}") + 1 if document is not None and document.indexed else 0

    def _resize(self) -> None:
        lines = self.document.line_count if self.document is not None else 0
        width = self._view.width if self.wrap else self._widest + self._gutter_width() + 1
        size = Size(width, lines)
        if size == self.virtual_size:
            return
        # Only the scroll range and the scroll bars change, not this widget's box: setting
        # `virtual_size` would lay the whole screen out again, a second frame per look while
        # following. A scroll bar that appears or goes still lays it out (its own reactive).
        # `_scroll_update` is what Textual runs for a new virtual size (textual is pinned).
        self.set_reactive(ScrollView.virtual_size, size)
        self._scroll_update(size)
        self.refresh()

    def top_offset(self) -> int | None:
        """Byte offset of the first line on screen (to stay there when the index arrives)."""
        document = self.document
        if document is None or not document.line_count:
            return None
        return int(document.offsets[min(self._top(), document.line_count - 1)])

    def anchor(self, backwards: bool = False) -> int:
        """The line a jump starts from: the current line, else the top line on screen (the
        bottom one, going back)."""
        if self.cursor is not None:
            return self.cursor
        top = self._top()
        return top + self._view.height if backwards else top - 1

    def go_to(self, index: int) -> None:
        """Make line `index` current and bring it to the middle of the view."""
        self.cursor = index
        self.stick = False
        self.scroll_to(y=max(0, index - self._view.height // 2), animate=False, immediate=True)
        self.refresh()

    def _line_segments(self, index: int, document: LogDocument) -> tuple[list[Segment], Style, int]:
        """Line `index` whole (its class tint, the cursor, the search's matches), the line's
        style, which runs on to the right edge, and its width in cells."""
        base = self._style()
        text = document.line(index)
        length = cell_len(text)
        if length > self._widest and not self.wrap:  # a line wider than any seen: widen the scroll range
            self._widest = length
            self.call_after_refresh(self._resize)
        kind = document.classes.get(index)
        style = base + self._style(f"log-lines--{kind}") if kind else base
        if index == self.cursor:
            style += self._style("log-lines--cursor")
        spans = self.search.spans(text) if self.search is not None else []
        if not spans:
            return [Segment(text, style)], style, length
        match = style + self._style("log-lines--match")
        segments, at = [], 0
        for start, end in spans:
            segments += [Segment(text[at:start], style), Segment(text[start:end], match)]
            at = end
        segments.append(Segment(text[at:], style))
        return [s for s in segments if s.text], style, length

    def _gutter(self, index: int | None) -> list[Segment]:
        width = self._gutter_width()
        if not width:
            return []
        label = f"{index + 1:>{width - 1},} " if index is not None else " " * width
        return [Segment(label, self._style() + self._style("log-lines--gutter"))]

    def _wrapped_rows(self, document: LogDocument) -> list[tuple[int, Strip, Style]]:
        """(line, piece, the line's style) for each row on screen, laid out once per scroll position and size."""
        width, height = max(1, self._view.width - self._gutter_width()), self._view.height
        at_end = self.stick
        top = int(self.scroll_offset.y)
        key = (top, at_end, width, height, document.line_count, document.end, self.cursor, id(self.search))
        if self._rows is not None and self._rows[0] == key:
            return self._rows[1]

        def pieces(index: int) -> list[tuple[int, Strip, Style]]:
            segments, style, length = self._line_segments(index, document)
            strip = Strip(segments, length)
            cuts = [*range(width, length, width), length]  # divide drops what follows the last cut
            return [(index, piece, style) for piece in strip.divide(cuts)]

        rows: list[tuple[int, Strip, Style]] = []
        if at_end:
            index = document.line_count - 1
            while index >= 0 and len(rows) < height:
                rows[:0] = pieces(index)
                index -= 1
            rows = rows[-height:]
        else:
            index = top
            while index < document.line_count and len(rows) < height:
                rows += pieces(index)
                index += 1
        self._rows = (key, rows)
        return rows

    def render_line(self, y: int) -> Strip:
        document, width = self.document, self._view.width
        base = self._style()
        if document is None:
            return Strip.blank(width, base)
        if self.wrap:
            rows = self._wrapped_rows(document)
            if y >= len(rows):
                return Strip.blank(width, base)
            index, piece, style = rows[y]
            first = y == 0 or rows[y - 1][0] != index
            strip = Strip(self._gutter(index if first else None) + list(piece))
            return strip.extend_cell_length(width, style).crop(0, width)
        index = self._top() + y
        if index >= document.line_count:
            return Strip.blank(width, base)
        # One Strip per row, from segments cut here (a Strip per step cost more than the line).
        gutter = self._gutter(index)
        room = width - self._gutter_width()
        segments, style, length = self._line_segments(index, document)
        x = int(self.scroll_offset.x)
        cut = length > x + room and room > 1
        end = min(length, x + room - 1 if cut else x + room)
        shown = list(Segment.divide(segments, [x, end]))[1] if x < end else []
        row = gutter + shown + ([Segment(CUT, style + self._style("log-lines--cut"))] if cut else [])
        used = width - room + max(0, end - x) + (1 if cut else 0)
        if used > width:  # narrower than the gutter
            return Strip(row, used).crop(0, width)
        return Strip([*row, Segment(" " * (width - used), style)] if used < width else row, width)
