"""Provides `ProcessTable`: the process list, GPU memory and SM % next to CPU and RSS.

A line-API widget instead of a `DataTable`: DataTable measures every cell of every new row,
about 200 ms on the main thread for 500 processes at each refresh, which is a key press
waiting. Here a refresh stores the rows and only the ~40 lines on screen are drawn.

The screen decides which rows and in which order (`tui.watch_model.select_rows`); this widget
draws them, with the cursor kept on the same pid across refreshes, so a process chosen for a
signal does not change under the cursor when the order changes. Cells are plain strings
turned into segments: `[bold]` in a command line is shown as typed.
"""

from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from gpuscope.metrics.samples import ProcessRow
from gpuscope.metrics.snapshot_tables import GPU_COLUMNS as GPU_KEYS  # left out on a node without a GPU view: always empty there
from gpuscope.metrics.snapshot_tables import NODE_COLUMN, PROCESS_COLUMNS, elapsed_text, size_text  # noqa: F401 - re-exported
from gpuscope.tui.model.watch import ShownRow

Columns = tuple[tuple[str, str, int, str | None], ...]
"""(key, header, width, sort key it shows), cut from `snapshot_tables.PROCESS_COLUMNS`, the one
definition the export (`e`, `watch --once`) uses too."""
COLUMNS: Columns = tuple((c.key, c.title, c.width, c.sort) for c in PROCESS_COLUMNS)
NARROW_COLUMNS: Columns = tuple((c.key, c.narrow_title or c.title, c.narrow, c.sort) for c in PROCESS_COLUMNS
                                if c.narrow or c.key == "command")
"""Below `NARROW` cells: no state column and short headers, so COMMAND keeps ~20 at 80."""
NARROW = 110
NUMERIC = frozenset(c.key for c in PROCESS_COLUMNS if c.numeric)
_TEXTS = tuple((c.key, c.text) for c in (NODE_COLUMN, *PROCESS_COLUMNS))
NODE_COLUMNS = {False: (NODE_COLUMN.key, NODE_COLUMN.title, NODE_COLUMN.width, None),
                True: (NODE_COLUMN.key, NODE_COLUMN.title, NODE_COLUMN.narrow, None)}
"""NODE, first, when the rows come from several nodes (the all-nodes view of a multi-node job)."""


def row_key(p: ProcessRow) -> tuple[int, str]:
    """What identifies a row: its pid, and its node in the all-nodes view (pids repeat across nodes)."""
    return p.pid, getattr(p, "node", "")


def cell_texts(p: ProcessRow) -> dict[str, str]:
    """Every column's text for one process; the table picks the columns that fit."""
    return {key: text(p) for key, text in _TEXTS}


def fit(text: str, width: int, right: bool = False) -> str:
    """`text` in exactly `width` cells (wide characters counted), cut with `…`."""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…" if width > 1 else set_cell_size(text, width)
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


VIRTUAL_STEP = 32
"""The scroll height grows and shrinks in steps of this many rows. A new virtual size means a
layout pass of the whole screen and a repaint of every line; on a node where processes come
and go every second (job scripts, `nvidia-smi` loops), exact heights made every tick a full
repaint, most of the watch screen's CPU. The price: up to 31 blank lines after the last row
when scrolled to the very end, as below htop's last process."""


def virtual_height(rows: int, view: int) -> int:
    """Header line plus `rows`: the view's height while they fit (no scroll bar, and no new
    size as processes come and go), else rounded up to a multiple of `VIRTUAL_STEP`."""
    lines = rows + 1
    return max(view, 1) if lines <= view else -(-lines // VIRTUAL_STEP) * VIRTUAL_STEP


def _padded(keys: list, length: int) -> list:
    return keys + [None] * (length - len(keys))


class ProcessTable(ScrollView, can_focus=True):
    """A header line and one line per `ShownRow`; up/down/page/home/end move the cursor."""

    COMPONENT_CLASSES = {"process-table--header", "process-table--cursor", "process-table--even-row", "process-table--tree"}
    DEFAULT_CSS = """
    ProcessTable {
        height: 1fr;
        overflow-x: hidden;
        background: $surface;
        color: $foreground;
        & > .process-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .process-table--even-row { background: $surface-lighten-1 50%; }
        & > .process-table--tree { color: $text-muted; }
        & > .process-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
        }
        &:focus > .process-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-1000000)", "First", show=False),
        Binding("end", "cursor(1000000)", "Last", show=False),
    ]
    """Cursor keys, as in htop."""

    class HeaderClicked(Message):
        """A click on the header of a sortable column: `sort` is its `watch_model.SORTS` key."""

        def __init__(self, sort: str) -> None:
            super().__init__()
            self.sort = sort

    cursor_row: reactive[int] = reactive(0, repaint=False)
    """Index into `shown` of the highlighted process (the watcher repaints just two lines)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.shown: list[ShownRow] = []
        """The rows, in order; tests and the signal action read these."""
        self.sort = "cpu"
        self.descending = True
        """The sort direction, shown by the header's arrow (▼ biggest first, ▲ smallest)."""
        self.gpu_columns = True
        """Show GPU MEM, SM% and GPU; the screen turns them off when there is no GPU view."""
        self.node_column = False
        """Show NODE first: the screen turns it on for the all-nodes view of a multi-node job."""
        self.hidden: frozenset[str] = frozenset()
        """Column keys left out (the setup screen's choice, `tui.model.settings.HIDEABLE`)."""
        self._styles: dict[str, object] = {}
        self._strips: dict[tuple[object, ...], Strip] = {}
        self._drawn: tuple[list[tuple[object, ...]], tuple[str, bool], int] | None = None
        """(visible line keys, sort, scroll) as of the last `show`: the next one compares with
        it instead of formatting every visible row twice. Cleared when the cursor moves."""

    @property
    def selected(self) -> ProcessRow | None:
        """The process under the cursor."""
        return self.shown[self.cursor_row].row if 0 <= self.cursor_row < len(self.shown) else None

    def show(self, rows: Sequence[ShownRow], sort: str, descending: bool = True) -> None:
        """Replace the rows, keeping the cursor on the same pid when it is still there.

        Only the visible lines whose text changed are repainted: most processes sleep, so a
        refresh tick usually touches a handful of lines, not the whole table (idle CPU).
        """
        keep = row_key(self.selected) if self.selected is not None else None
        # What the last refresh drew, unless a cursor move or scroll drew something since.
        before = self._drawn if self._drawn is not None and self._drawn[2] == int(self.scroll_y) else (
            self._visible_keys(), (self.sort, self.descending), int(self.scroll_y))
        seen: set[tuple[int, str]] = set()
        self.shown = [s for s in rows if not ((key := row_key(s.row)) in seen or seen.add(key))]  # type: ignore[func-returns-value]
        self.sort, self.descending = sort, descending
        height = virtual_height(len(self.shown), self.scrollable_content_region.height)
        if self.virtual_size.height != height:  # a new size means a layout pass of the screen
            self.virtual_size = Size(0, height)
        index = next((i for i, s in enumerate(self.shown) if row_key(s.row) == keep), self.cursor_row)
        self.move_cursor(row=index, scroll=keep is not None)
        after = self._visible_keys()
        self._drawn = (after, (self.sort, self.descending), int(self.scroll_y))
        if before[1:] != ((self.sort, self.descending), int(self.scroll_y)):
            self.refresh()
            return
        width = self.size.width
        lines = max(len(before[0]), len(after))
        changed = [Region(0, line + 1, width, 1) for line, old, new in zip(range(lines), _padded(before[0], lines), _padded(after, lines))
                   if old != new]
        if changed:
            self.refresh(*changed)

    def _visible_keys(self) -> list[tuple[object, ...]]:
        """What each visible line shows (pid, cell texts, tree prefix)."""
        top = int(self.scroll_y)
        height = max(0, self.scrollable_content_region.height - 1)
        return [(s.row.pid, tuple(cell_texts(s.row).values()), s.prefix, top + i == self.cursor_row)
                for i, s in enumerate(self.shown[top : top + height])]

    def move_cursor(self, row: int, scroll: bool = True) -> None:
        self.cursor_row = max(0, min(row, len(self.shown) - 1))
        if scroll:
            visible = max(1, self.scrollable_content_region.height - 1)
            if self.cursor_row < self.scroll_y:
                self.scroll_to(y=self.cursor_row, animate=False)
            elif self.cursor_row >= self.scroll_y + visible:
                self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._drawn = None
        top = int(self.scroll_y)
        self.refresh(*(Region(0, row - top + 1, self.size.width, 1) for row in (old, new)))

    def action_cursor(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self.move_cursor(self.cursor_row + step * max(1, self.scrollable_content_region.height - 2))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(int(self.scroll_y) + event.y - 1)
        elif (sort := self.column_at(event.x)) is not None:
            self.post_message(self.HeaderClicked(sort))

    def column_at(self, x: int) -> str | None:
        """The sort key of the column under cell `x` of the header (None: not sortable)."""
        left = 0
        for _, _, w, sort in self.columns():
            right = left + 1 + (w or self.size.width)
            if x < right:
                return sort
            left = right
        return None

    def columns(self) -> Columns:
        narrow = self.size.width < NARROW
        columns = NARROW_COLUMNS if narrow else COLUMNS
        if not self.gpu_columns:
            columns = tuple(c for c in columns if c[0] not in GPU_KEYS)
        if self.hidden:
            columns = tuple(c for c in columns if c[0] not in self.hidden)
        return (NODE_COLUMNS[narrow], *columns) if self.node_column else columns

    def show_gpu_columns(self, show: bool, node: bool = False) -> None:
        """Show or leave out the GPU columns, and NODE (a change redraws the whole table)."""
        if (show, node) != (self.gpu_columns, self.node_column):
            self.gpu_columns, self.node_column = show, node
            self._strips.clear()
            self._drawn = None
            self.refresh()

    def hide_columns(self, keys: frozenset[str]) -> None:
        """Leave out these columns (PID and COMMAND always show); a change redraws the table."""
        keys = frozenset(keys) - {"pid", "command"}
        if keys != self.hidden:
            self.hidden = keys
            self._strips.clear()
            self._drawn = None
            self.refresh()

    def on_resize(self) -> None:
        """A taller or shorter view changes what fits (also while paused)."""
        height = virtual_height(len(self.shown), self.scrollable_content_region.height)
        if self.virtual_size.height != height:
            self.virtual_size = Size(0, height)

    def notify_style_update(self) -> None:
        self._styles.clear()  # a theme or focus change: styles and the lines drawn with them
        self._strips.clear()
        super().notify_style_update()

    def _line_styles(self) -> dict[str, Style]:
        """The line styles, computed once per theme and focus state, not per line: asking
        Textual for `rich_style` walks every ancestor, and that was a third of the table's
        drawing time each tick."""
        key = (self.has_focus, self.app.theme)
        if self._styles.get("key") != key:
            self._styles.clear()
            self._strips.clear()
            base = self.rich_style
            component = self.get_component_rich_style
            self._styles.update(
                key=key, base=base, header=base + component("process-table--header"),
                cursor=base + component("process-table--cursor"), even=base + component("process-table--even-row"),
                tree=component("process-table--tree", partial=True))  # type: ignore[arg-type]
        return self._styles  # type: ignore[return-value]

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        columns = self.columns()
        command_width = max(8, width - sum(w + 1 for *_, w, _ in columns) - 1)
        styles = self._line_styles()
        if y == 0:
            style = styles["header"]
            arrow = "▼" if self.descending else "▲"
            heads = [(fit(h + (arrow if s == self.sort else ""), w or command_width, k in NUMERIC), style) for k, h, w, s in columns]
            return self._strip(heads, style, width)
        index = int(self.scroll_y) + y - 1
        if index >= len(self.shown):
            return Strip.blank(width, styles["base"])
        kind = "cursor" if index == self.cursor_row else ("even" if index % 2 else "base")
        shown = self.shown[index]
        texts = cell_texts(shown.row)
        # Sorted by CPU %, rows move up and down as processes wake; a moved row is drawn again
        # from this cache, not rebuilt.
        cache_key = (shown.row.pid, tuple(texts.values()), shown.prefix, kind, width)
        strip = self._strips.get(cache_key)
        if strip is None:
            if len(self._strips) > 4 * max(64, self.size.height):
                self._strips.clear()
            strip = self._strips[cache_key] = self._row_strip(shown, texts, columns, styles[kind], command_width, width)
        return strip

    def _row_strip(self, shown: ShownRow, texts: dict[str, str], columns: Columns, style: Style, command_width: int, width: int) -> Strip:
        cells: list[tuple[str, Style]] = []
        for key, _, w, _ in columns:
            if key == "command" and shown.prefix:
                tree = style + self._line_styles()["tree"]
                rest = max(1, command_width - cell_len(shown.prefix))
                cells.append((shown.prefix + "\0" + fit(texts[key], rest), tree))  # split in _strip
            else:
                cells.append((fit(texts[key], w or command_width, key in NUMERIC), style))
        return self._strip(cells, style, width)

    @staticmethod
    def _strip(cells: list[tuple[str, Style]], style: Style, width: int) -> Strip:
        """One space before each cell; a tree cell is `prefix NUL command`: prefix dimmed.

        One segment per cell, never merged across cells: an SVG screenshot (ctrl+s) places
        each segment at its own x and stretches its text to its cell count, so one odd-width
        glyph (`…` in a cut command, `▼` in a fallback font) could only shift its own cell.
        Merged into one segment per row, such a glyph shifted every column of that row
        (seen on an H100 node: PID/CPU%/MEM/TIME+ out of line from row to row)."""
        segments: list[Segment] = []
        for text, cell_style in cells:
            prefix, nul, rest = text.partition("\0")
            if nul:
                segments.append(Segment(" ", style))
                if prefix:
                    segments.append(Segment(prefix, cell_style))
                if rest:
                    segments.append(Segment(rest, style))
            else:
                segments.append(Segment(" " + text, cell_style))
        return Strip(segments).adjust_cell_length(width, style)
