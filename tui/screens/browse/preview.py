"""Provides `PreviewPane`: what the browser says about the file or folder under the cursor.

The head (kind, why, summary, problem, what Enter opens) comes from the recognition already
on the main thread; the first lines of a file are read in a thread worker (a file can sit on a
slow mount, or be a FIFO swapped in), at most `PREVIEW_BYTES`, and shown as plain text with
escape sequences removed; a Parquet file (binary) shows its schema and first rows instead, read
within a small budget (`parquet_text`). A folder shows its files counted per kind and what `a`
would open.

The pane is one fixed region (its size comes from the screen's layout, never from what it
shows), so a new selection only repaints it: a `height: auto` pane made every cursor move
re-lay out the whole screen, most of a key's cost while the tree is being recognised
(bench/browse_bench.py). What does not fit is cut; Enter opens the whole file.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import format_cell
from gpuscope.parsers import parquet_read
from gpuscope.parsers.files import display_name, head, looks_binary
from gpuscope.tui.model.folder import STUDIES

PREVIEW_BYTES = 16 * 1024
READ_DELAY = 0.08
"""Seconds the cursor rests on a file before its first lines are read."""
DRAW_DELAY = 0.05
"""Seconds the cursor rests before the pane is redrawn for the new selection: repainting the
whole pane took longer than moving the cursor, so a key held down (or pressed while the tree
is being recognised) waited for panes nobody saw (bench/browse_bench.py). The tree's own
line already names the file's kind and summary."""
PREVIEW_LINES = 120
PARQUET_ROWS = 10
PARQUET_DECODED = 8 * 1024 * 1024
"""A Parquet preview decodes at most this: a row group bigger than that, uncompressed, is not
read (its schema is still shown), so a decompression bomb costs nothing."""
CELL_CHARS = 24
RAISES = re.compile(r"\s*\(GPUSCOPE_\w+ raises it\)")
LINE_CHARS = 240
OPENS = {"magma": "the MAGMA distributions screen", "kernels": "the kernel efficiency screen", "scaling": "the scaling screen",
         "table": "the table view", "log": "the log view", "markdown": "the Markdown view", "image": "the image view",
         "pdf": "the PDF view", "text": "the log view"}
"""What Enter opens, per `Recognition.screen`."""


class PreviewPane(Static, can_focus=True):
    """A head describing the selection, then the first lines of a file."""

    DEFAULT_CSS = """
    PreviewPane {
        padding: 0 1;
        overflow: hidden;
    }
    """

    class HeadRead(Message):
        """The worker read the first lines of `path` (or why it could not)."""

        def __init__(self, path: Path, text: Text) -> None:
            super().__init__()
            self.path = path
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path: Path | None = None
        """What is shown; a head read for another path is dropped."""
        self.head: Table | Text = Text()
        """The description (kind, why, summary...)."""
        self.body: Text = Text()
        """The file's first lines (dimmed), or nothing for a folder."""
        self._reading: Timer | None = None
        self._drawing: Timer | None = None

    def _draw_soon(self) -> None:
        if self._drawing is not None:
            self._drawing.stop()
        self._drawing = self.set_timer(DRAW_DELAY, self._draw)

    def _draw(self) -> None:
        # Only the lines that can show are rendered (each takes a row or more): a whole head of
        # PREVIEW_LINES long lines, wrapped and then cut, was most of a key's repaint.
        body = self.body
        if body.plain.count("\n") >= self.size.height:
            body = Text("\n", style=body.style, no_wrap=body.no_wrap, overflow=body.overflow).join(body.split("\n", allow_blank=True)[: max(1, self.size.height)])
        self.update(Group(self.head, Text(), body), layout=False)  # the size is the layout's: see the module doc

    def on_resize(self) -> None:
        self._draw()

    def show_file(self, path: Path, rec: Any | None, titles: dict[str, str], checks: Sequence[Any] = ()) -> None:
        """Describe a file from its recognition (None: not recognised yet) and its expected
        ranges checked; read its head unless this file is already shown (a new batch only
        refreshes the description)."""
        same = path == self.path
        self.path = path
        self.head = file_text(path, rec, titles, checks)
        if not same:
            self.body = Text("…", style="dim")
            # Read once the cursor rests: holding a key down reads (and lays out) no head
            # of a file it only passes.
            if self._reading is not None:
                self._reading.stop()
            self._reading = self.set_timer(READ_DELAY, lambda: self.read_head(path))
        self._draw_soon()

    def show_folder(self, path: Path, counts: Counter[str], done: bool, titles: dict[str, str], screens: dict[str, str]) -> None:
        self.path = path
        self.head = folder_text(path, counts, done, titles, screens)
        self.body = Text()
        self._draw_soon()

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def read_head(self, path: Path) -> None:
        self.post_message(self.HeadRead(path, head_text(path)))

    def on_preview_pane_head_read(self, message: HeadRead) -> None:
        message.stop()
        if message.path == self.path:
            self.body = message.text
            self._draw()


def _rows(pairs: list[tuple[str, Text | str | Table]]) -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    for key, value in pairs:
        grid.add_row(key, Text(clean(value)) if isinstance(value, str) else value)
    return grid


def file_text(path: Path, rec: Any | None, titles: dict[str, str], checks: Sequence[Any] = ()) -> Table:
    """Name, kind and title, why, summary, problem, expected ranges, what Enter opens."""
    name = Text(clean(display_name(path.name)), style="bold")
    pairs: list[tuple[str, Text | str | Table]] = [("File", name)]
    if rec is None:
        pairs.append(("Kind", Text("not recognised yet …", style="dim")))
        return _rows(pairs)
    if rec.kind:
        pairs.append(("Kind", Text(clean(rec.kind), style="bold").append(f"  {clean(titles.get(rec.kind, ''))}", style="")))
    else:
        pairs.append(("Kind", Text("not recognised", style="italic")))
    if rec.reason:
        pairs.append(("Why", rec.reason))
    if rec.summary:
        pairs.append(("Size", rec.summary))
    if rec.problem is not None:
        pairs.append(("Problem", Text(f"⚠ {clean(rec.problem.message)}", style="bold")))
    for result in checks:  # expected.toml's ranges on this file
        check = result.check
        line = Text().append(f"{result.status} ", style="bold").append(clean(f"{check.title} ({check.where_text})"))
        detail = result.value_text or result.why
        pairs.append(("Expected", line.append(clean(f": {detail}") if detail else "", style="dim")))
    if rec.screen and rec.kind:
        pairs.append(("Enter", f"opens {OPENS.get(rec.screen, rec.screen)}" + (" (cells outside their range marked)" if any(r.outside for r in checks) else "")))
    return _rows(pairs)


def folder_text(path: Path, counts: Counter[str], done: bool, titles: dict[str, str], screens: dict[str, str]) -> Table:
    """The folder's files per kind, and what `a` would gather (`screens`: kind -> screen)."""
    total = sum(counts.values())
    pairs: list[tuple[str, Text | str | Table]] = [("Folder", Text(clean(display_name(path.name or path)), style="bold"))]
    pairs.append(("Files", f"{total:,} below" + ("" if done else " so far (recognising …)")))
    # One line per kind: count and kind whole, the title (a nicety) cut when the pane is narrow.
    kinds = Text(no_wrap=True, overflow="ellipsis")
    count_width = max((len(f"{n:,}") for n in counts.values()), default=1)
    kind_width = max((len(clean(k)) for k in counts), default=1)
    for i, (kind, n) in enumerate(counts.most_common()):
        kinds.append("\n" if i else "").append(f"{n:>{count_width},} ").append(f"{clean(kind):<{kind_width}}", "bold")
        kinds.append(f"  {clean(titles.get(kind, ''))}", "dim")
    if counts:
        pairs.append(("Kinds", kinds))
    study = Counter[str]()
    for kind, n in counts.items():
        if screens.get(kind) in STUDIES:
            study[screens[kind]] += n
    if study:
        pairs.append(("a", " · ".join(f"{STUDIES[screen]} ({n})" for screen, n in study.items())))
    pairs.append(("s", "summary: kinds, what failed, errors and warnings in logs"))
    return _rows(pairs)


def head_text(path: Path) -> Text:
    """The first lines of a file as plain text, or why there are none. Runs in a thread."""
    data, findings = head(path, clean(display_name(path)), PREVIEW_BYTES)
    if data is None:
        return Text(clean(findings[0].message) if findings else "cannot be read", style="italic")
    if not data:
        return Text("(empty file)", style="italic")
    if data[:4] == b"PAR1":
        return parquet_text(path)
    if looks_binary(data):
        return Text("binary data: no text preview", style="italic")
    lines = data.decode("utf-8", "replace").splitlines()[:PREVIEW_LINES]
    return Text("\n".join(clean(line)[:LINE_CHARS] for line in lines), style="dim")


def parquet_text(path: Path) -> Text:
    """A Parquet file's shape, schema (column names and types) and first `PARQUET_ROWS` rows,
    decoding at most `PARQUET_DECODED` bytes; or why it cannot be read. Runs in a thread."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    label = clean(display_name(path))
    try:
        with pq.ParquetFile(path) as parquet:
            schema, meta = parquet.schema_arrow, parquet.metadata
        table, total, findings = parquet_read.read_budgeted(str(path), label, max_rows=PARQUET_ROWS, max_bytes=PARQUET_DECODED)
    except (OSError, ValueError, pa.ArrowException, MemoryError) as error:
        return Text(f"not a readable Parquet file: {clean(str(error))[:LINE_CHARS]}", style="italic")
    text = Text(no_wrap=True, overflow="ellipsis")  # a row per line: the pane cuts what is too wide
    text.append(f"Parquet · {meta.num_rows:,} rows · {meta.num_columns} columns · {meta.num_row_groups} row group(s)\n", style="bold")
    # The type first (short), then the whole name: a narrow pane cuts a name's end, not its type.
    types = [clean(str(f.type))[:CELL_CHARS] for f in schema]
    width = max(map(len, types), default=1)
    for field, kind in zip(schema, types):
        text.append(f"{kind:<{width}}  ", style="dim").append(f"{clean(field.name)[:LINE_CHARS]}\n")
    if table is None or not table.num_rows:
        why = "; ".join(RAISES.sub("", clean(f.message)) for f in findings) or "no rows"  # the preview's budget is its own
        return text.append(f"\nFirst rows not read: {why.removeprefix('not read: ')}", style="italic")
    rows = table.slice(0, PARQUET_ROWS).to_pylist()
    names = [clean(n) for n in table.column_names]
    cells = [[_cut(format_cell(row[n])) for n in table.column_names] for row in rows]
    widths = [max(len(_cut(n)), *(len(r[i]) for r in cells)) for i, n in enumerate(names)]
    text.append(f"\nFirst {len(rows)} rows" + (f" of {total:,}" if total > len(rows) else "") + "\n", style="bold")
    text.append("  ".join(_cut(n).ljust(w) for n, w in zip(names, widths))[:LINE_CHARS] + "\n", style="bold")
    for row in cells:
        text.append("  ".join(c.ljust(w) for c, w in zip(row, widths))[:LINE_CHARS] + "\n", style="dim")
    return text


def _cut(value: str) -> str:
    value = clean(value).replace("\n", " ")
    return value if len(value) <= CELL_CHARS else value[: CELL_CHARS - 1] + "…"
