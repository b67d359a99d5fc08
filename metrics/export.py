"""Provides the one exporter: `ResultTable`s to text, markdown, CSV or JSON.

Text looks as rich's recording console prints the screen's tables, minus colour: `table_lines`
builds it with string operations, and tests check it against rich (`to_text_with_rich`, the
only user of rich's tables here, so a printed report never imports them). Markdown and CSV are
generated from the model (raw values for CSV), not from rich, because rich neither escapes
`|` nor keeps numbers raw.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from rich.cells import cell_len

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import ResultTable

if TYPE_CHECKING:
    from rich.table import Table

FORMATS = ("text", "markdown", "csv", "json")
DEFAULT_WIDTH = 120
SIGNIFICANT = 7
"""Significant digits of floats in CSV and JSON. Seven keep every value a MAGMA tester prints
exactly (`%7.2f` Gflop/s up to 99,999.99, an H100's FP64 peak is ~67,000) and drop only the
float noise of derived statistics (a ratio of 0.8530620632963419 is 0.8530621); integral
floats (nanosecond counts) are written as integers, never rounded."""
ELLIPSIS = "…"
EMPTY_CELLS = frozenset({"", "n/a"})
"""Cells that hold no value: a column of only these is left out of a text table that must fit."""
MIN_SQUEEZED = 8
"""Narrowest a text column is squeezed to (in the middle) to fit a width."""
COMFORTABLE = 24
"""Text columns are cut to this width only after headers have wrapped."""
LONG = 32
"""Text columns wider than this are cut to it before any header wraps."""


def middle(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut in the middle so both ends stay: kernel names differ
    at their ends (`void gemm<...>…_128x64_nn`), environments at both (`azure/…/gpu`)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    keep = width - 1
    head, tail = (keep + 1) // 2, keep // 2
    start = _cells_prefix(text, head)
    end = _cells_suffix(text, tail)
    return start + ELLIPSIS + end


def header_lines(header: str, width: int) -> list[str]:
    """`header` in `width` cells: one line when it fits, else wrapped at a space onto two lines
    (as nvidia-smi's headers are), the split that leaves the shorter first line; only a header
    that cannot wrap so is cut in the middle. A cut header ('u…%', 'me…iB' for both 'mem used
    MiB' and 'mem total MiB') says nothing; two lines cost one row."""
    if cell_len(header) <= width:
        return [header]
    words = header.split(" ")
    for k in range(len(words) - 1, 0, -1):
        first, second = " ".join(words[:k]), " ".join(words[k:])
        if cell_len(first) <= width and cell_len(second) <= width:
            return [first, second]
    return [middle(header, width)]


def header_floor(header: str) -> int:
    """The narrowest width at which `header_lines` keeps `header` whole (on two lines at most)."""
    words = header.split(" ")
    if len(words) == 1:
        return cell_len(header)
    return min(max(cell_len(" ".join(words[:k])), cell_len(" ".join(words[k:]))) for k in range(1, len(words)))


def _cells_prefix(text: str, cells: int) -> str:
    out, used = [], 0
    for char in text:
        if used + cell_len(char) > cells:
            break
        out.append(char)
        used += cell_len(char)
    return "".join(out)


def _cells_suffix(text: str, cells: int) -> str:
    return _cells_prefix(text[::-1], cells)[::-1] if cells > 0 else ""


def fit_widths(widths: Sequence[int], value_widths: Sequence[int], cuttable: Sequence[bool], excess: int,
               least: Sequence[int] | None = None) -> list[int]:
    """Column widths `excess` cells narrower where possible, widest first, in four steps: the
    values of `cuttable` (text) columns down to LONG cells, then headers wider than their
    values (callers wrap them onto a second line, `header_lines`, and pass `header_floor` in
    `value_widths` so no word is cut), then those values down to COMFORTABLE cells, then down
    to MIN_SQUEEZED (a value of four cells or fewer, such as n/a, stays whole). A wrapped
    header costs a row and loses nothing, so it comes before a name of 25 cells loses one.
    Numbers and the values of other columns are never cut.
    Shared by `--width` and the screen's tables. `least`: per column, the narrowest its
    values are cut to (default MIN_SQUEEZED)."""
    out = list(widths)
    cuttable = [cut and v > 4 for v, cut in zip(value_widths, cuttable)]
    least = least or [MIN_SQUEEZED] * len(widths)
    floors = [min(w, max(MIN_SQUEEZED, m) if cut else v) for w, v, cut, m in zip(widths, value_widths, cuttable, least)]
    long = [min(w, max(f, LONG)) if cut else w for w, f, cut in zip(widths, floors, cuttable)]
    headers = [max(f, min(v, w)) if not cut else lw for w, v, f, cut, lw in zip(widths, value_widths, floors, cuttable, long)]
    steps = (long, headers,
             [max(f, min(COMFORTABLE, w)) if cut else h for w, h, f, cut in zip(widths, headers, floors, cuttable)],
             floors)
    for step in steps:
        cut_now = squeeze(out, [min(a, b) for a, b in zip(out, step)], excess)
        excess -= sum(out) - sum(cut_now)
        out = cut_now
    if excess > 0:  # it cannot fit: names stay whole up to LONG cells, headers wrap; the rest scrolls
        return steps[1]
    return out


def distinct_width(texts: Sequence[str], least: int = MIN_SQUEEZED) -> int:
    """The narrowest width from `least` at which `middle` keeps `texts` as distinct as they
    are ('goog…gpu' would make two clouds' environments one)."""
    unique = set(texts)
    widest = max(map(cell_len, unique), default=0)
    width = least
    while width < widest and len({middle(t, width) for t in unique}) < len(unique):
        width += 1
    return width


def squeeze(widths: Sequence[int], floors: Sequence[int], excess: int) -> list[int]:
    """`widths` with `excess` cells taken from the widest columns first, none below its floor;
    as much as possible when the floors alone are too wide."""
    out = list(widths)
    while excess > 0:
        candidates = [i for i, w in enumerate(out) if w > floors[i]]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: out[i])
        others = [out[i] for i in candidates if i != widest]
        target = max(floors[widest], max(others, default=floors[widest]), out[widest] - excess)
        if target >= out[widest]:  # ties: take one cell at a time
            target = out[widest] - 1
        excess -= out[widest] - target
        out[widest] = target
    return out


def to_rich(table: ResultTable) -> Table:
    """A rich Table view of the model; every cell is plain `Text`, never markup."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    view = Table(title=Text(clean(table.title)), box=box.SIMPLE_HEAD, title_justify="left")
    for i, col in enumerate(table.columns):
        numeric = col.is_numeric(table.column_values(i))
        view.add_column(Text(clean(col.header)), justify="right" if numeric else "left", no_wrap=numeric)
    for r in range(len(table.rows)):
        view.add_row(*(Text(table.cell_text(r, c)) for c in range(len(table.columns))))
    return view


WRAP = 24
"""Text columns wrap onto more lines down to this width before a table loses or splits columns."""
TIGHT = 16
"""A table that fits with its text wrapped to this width stays whole rather than split."""
NARROWEST = 8
"""Text columns wrap down to this width in a part still too wide (keys and one more column)."""
NARROWEST_LIMIT = 30
"""A narrower --width is taken as this: below it a title or a number would break letter by letter."""
KEYS_SHARE = 0.6
"""The repeated key columns of a split table take at most this share of the width."""
BREAKS = re.compile(r"(?<=[/_,;:.\-])")
"""Where a word too long for its line breaks, before it is cut anywhere: after a path's `/`,
a name's `_`, a list's `,`."""


def wrap_cell(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken at spaces, then within a word after
    `BREAKS`, then anywhere: every character is kept, in order (a folder name is never cut)."""
    width = max(1, width)
    if cell_len(text) <= width:
        return [text]
    pieces: list[str] = []
    for word in text.split(" "):
        parts = [word] if cell_len(word) <= width else [p for p in BREAKS.split(word) if p]
        for part in parts:
            while cell_len(part) > width:  # no break in `width` cells: break at the edge
                head = _cells_prefix(part, width) or part[0]  # a wide character in a column of one
                pieces.append(head)
                part = part[len(head):]
            pieces.append(part)
        pieces.append(" ")
    lines, line = [], ""
    for piece in pieces[:-1]:
        if piece == " ":
            line += " " if line else ""
        elif cell_len(line + piece) <= width:
            line += piece
        else:
            lines.append(line.rstrip())
            line = piece
    lines.append(line.rstrip())
    return [line for line in lines if line] or [""]


class _Column:
    """One column of a text table being fitted: its header, its cells' text, how it may narrow."""

    def __init__(self, table: ResultTable, c: int) -> None:
        column = table.columns[c]
        self.index = c
        self.header = clean(column.header)
        self.cells = [table.cell_text(r, c) for r in range(len(table.rows))]
        self.numeric = column.is_numeric(table.column_values(c))
        self.low_value = column.low_value
        self.shorten = column.shorten
        self.values = max(map(cell_len, self.cells), default=0)
        self.natural = max(cell_len(self.header), self.values)

    def floor(self, least: int | None = None) -> int:
        """The narrowest this column goes with text wrapped (or shortened) to `least` cells
        (None: kept whole): numbers are never cut, headers wrap at a space but keep their words."""
        header = header_floor(self.header)
        if least is None or self.numeric or self.values <= 4:  # n/a and short words stay whole
            return max(header, self.values)
        return max(header, min(self.values, least))

    def lines(self, text: str, width: int) -> list[str]:
        if cell_len(text) <= width:
            return [text]
        if self.shorten is not None:
            return [self.shorten(text, width)]
        return wrap_cell(text, width)


class _Numbered(_Column):
    """The row number a table split into parts starts each part with."""

    def __init__(self, rows: int) -> None:  # noqa: D107 - no table column behind it
        self.index = -1
        self.header = "#"
        self.cells = [str(r + 1) for r in range(rows)]
        self.numeric, self.low_value, self.shorten = True, False, None
        self.values = self.natural = max(map(cell_len, self.cells), default=1)


def _span(widths: Sequence[int]) -> int:
    """Cells a table line takes with columns this wide (a space, then each column padded by one
    space either side, one space between)."""
    return sum(w + 3 for w in widths)


def _squeezed(columns: Sequence[_Column], limit: int) -> list[int]:
    """Natural widths, narrowed widest first until the line fits `limit` (or nothing narrows
    further): headers wrap first, which loses nothing, then text wraps at WRAP, TIGHT, NARROWEST."""
    widths = [c.natural for c in columns]
    for least in (None, WRAP, TIGHT, NARROWEST):
        widths = squeeze(widths, [min(w, c.floor(least)) for w, c in zip(widths, columns)], _span(widths) - limit)
    return widths


def _keys(table: ResultTable, columns: Sequence[_Column]) -> list[_Column]:
    """The columns that name a row, most telling first (`ResultTable.row_keys`), among `columns`."""
    by_key = {table.columns[c.index].key: c for c in columns}
    keys = [by_key[k] for k in table.row_keys or () if k in by_key]
    if keys:
        return keys
    start = 1 if _numbered(columns) else 0
    leading = next((i for i, c in enumerate(columns) if i >= start and c.numeric), len(columns))
    return list(columns[start:max(start + 1, leading)])


def _numbered(columns: Sequence[_Column]) -> bool:
    """Whether the table numbers its rows itself (a first column `#`)."""
    return bool(columns) and columns[0].header == "#" and columns[0].numeric


def _parts(table: ResultTable, columns: list[_Column], limit: int) -> tuple[list[list[_Column]], list[str]]:
    """The column groups a table is printed in to fit `limit` cells, and notes saying what was
    done: columns with no value in any row left out, then `low_value` ones, then the columns
    split into parts that each start with the row number and the key columns that fit."""
    notes: list[str] = []
    if _span(c.natural for c in columns) <= limit:
        return [columns], notes
    if table.rows:  # n/a in every row says one thing, which a line can say: the others get the room
        empty = [c for c in columns if all(v in EMPTY_CELLS for v in c.cells)]
        if empty and len(empty) < len(columns):
            notes.append(f"Left out, no value in any row: {', '.join(c.header for c in empty)}")
            columns = [c for c in columns if c not in empty]
    keys = _keys(table, columns)
    if _span(c.floor(WRAP) for c in columns) > limit and any(c.low_value and c not in keys for c in columns):
        low = [c for c in columns if c.low_value and c not in keys]
        notes.append(f"Left out to fit {limit} columns: {', '.join(c.header for c in low)} (every column is in --format csv)")
        columns = [c for c in columns if c not in low]
    if _span(c.floor(TIGHT) for c in columns) <= limit:
        return [columns], notes
    lead = columns[:1] if _numbered(columns) else [_Numbered(len(table.rows))]
    keys = [c for c in keys if c not in lead]
    room = limit * KEYS_SHARE
    while len(keys) > 1 and _span(c.floor() for c in [*lead, *keys]) > room:
        keys = keys[:-1]
    least = None if _span(c.floor() for c in [*lead, *keys]) <= room else WRAP  # a key too wide wraps
    head = [*lead, *(c for c in columns if c in keys)]
    parts: list[list[_Column]] = []
    for column in (c for c in columns if c not in head):
        floors = [c.floor(least) for c in head] + [c.floor(WRAP) for c in (parts[-1][len(head):] if parts else [])]
        if parts and len(parts[-1]) > len(head) and _span([*floors, column.floor(WRAP)]) <= limit:
            parts[-1].append(column)
        else:
            parts.append([*head, column])
    named = ", ".join(c.header for c in head)
    notes.insert(0, f"Too wide for {limit} columns: shown in {len(parts)} parts, each starting with {named}")
    return parts, notes


def table_lines(table: ResultTable, limit: int | None = None) -> list[str]:
    """The table exactly as rich prints `to_rich(table)` (SIMPLE_HEAD box, no colour,
    natural width), built with plain string operations.

    Rich measures and wraps every cell, which takes seconds for the thousand-row tables a
    large study produces; this takes milliseconds. tests/test_export.py checks that both
    give the same text. `limit` (`--width`): a table wider than that leaves out the columns
    with no value in any row, wraps headers and text cells onto more lines (a word breaks only
    when it is wider than its column; nothing is cut, except by a column's own `shorten`),
    leaves out `low_value` columns, and then splits its columns into parts, each starting with
    the row number and the key columns; each step is said in a line above the table's rows. Numbers
    are never cut.
    """
    limit = max(limit, NARROWEST_LIMIT) if limit else None
    columns = [_Column(table, c) for c in range(len(table.columns))]
    parts, notes = _parts(table, columns, limit) if limit else ([columns], [])
    shown = clean(table.title)  # rich prints a title of blanks as a blank title line, and so do we
    title = shown.rstrip()
    out = ((textwrap.wrap(title, limit) or [""]) if limit else [title]) + [""] if shown else [""]
    widths = [_squeezed(part, limit) if limit else [c.natural for c in part] for part in parts]
    if len(parts) > 1:  # the columns every part starts with: as wide in each, the narrowest
        head = [c for c in parts[0] if all(c in part for part in parts)]
        narrowest = {id(c): min(w[part.index(c)] for part, w in zip(parts, widths)) for c in head}
        widths = [[narrowest.get(id(c), w) for c, w in zip(part, ws)] for part, ws in zip(parts, widths)]
    if len(parts) > 1 and len(table.rows) == 1:  # one row in parts is a cell or two a part: its fields one a line
        shown = [c for c in dict.fromkeys(c for part in parts for c in part) if not isinstance(c, _Numbered)]
        return out + [n for n in notes[1:] for n in textwrap.wrap(n, limit or DEFAULT_WIDTH)] + ([""] if notes[1:] else []) + _stacked(shown, limit or DEFAULT_WIDTH) + [""]
    for note in notes:  # said before the parts: a reader knows what to match before reading them
        out.extend(textwrap.wrap(note, limit or DEFAULT_WIDTH))
    if notes:
        out.append("")
    for i, (part, ws) in enumerate(zip(parts, widths)):
        if i:
            out.append("")
        out.extend(_part_lines(part, ws))
    out.append("")
    return out


def _stacked(columns: Sequence[_Column], limit: int) -> list[str]:
    """A table's one row as `header  value` lines, its values wrapped to what `limit` leaves."""
    name = min(max(cell_len(c.header) for c in columns), limit // 3)
    out = []
    for c in columns:
        heads, values = wrap_cell(c.header, name), c.lines(c.cells[0], limit - name - 4)
        for i in range(max(len(heads), len(values))):
            head = heads[i] if i < len(heads) else ""
            out.append(f"  {head}{' ' * (name - cell_len(head))}  {values[i] if i < len(values) else ''}".rstrip())
    return out


def _part_lines(columns: Sequence[_Column], widths: Sequence[int]) -> list[str]:
    """Header (wrapped onto a second line where narrowed), rule and rows of these columns."""

    def line(values: Sequence[str]) -> str:
        parts = []
        for column, width, value in zip(columns, widths, values):
            pad = " " * (width - cell_len(value))
            parts.append(" " + (pad + value if column.numeric else value + pad) + " ")
        return (" " + " ".join(parts) + " ").rstrip()

    def block(cells: Sequence[list[str]]) -> list[str]:
        return [line([c[i] if i < len(c) else "" for c in cells]) for i in range(max(map(len, cells), default=1))]

    out = block([header_lines(c.header, w) for c, w in zip(columns, widths)])
    out.append(" " + "─".join("─" * (w + 2) for w in widths))
    for r in range(len(columns[0].cells) if columns else 0):
        out.extend(block([c.lines(c.cells[r], w) for c, w in zip(columns, widths)]))
    return out


def to_text(tables: Sequence[ResultTable], width: int | None = None, extra: Sequence[str] = (), limit: int | None = None) -> str:
    """Tables as plain text, then their notes; `extra` blocks (plots rendered as text) follow.
    `limit`: no table or note wider than that many columns (see `table_lines`; notes wrap)."""
    limit = max(limit, NARROWEST_LIMIT) if limit else None
    parts: list[str] = []
    for table in tables:
        parts.extend(table_lines(table, limit))
        for note in map(clean, table.notes):
            parts.extend(textwrap.wrap(note, limit) or [""] if limit else [note])
        parts.append("")
    parts.extend(block.rstrip("\n") for block in extra)
    return "\n".join(parts).rstrip("\n") + "\n"


def to_text_with_rich(tables: Sequence[ResultTable], width: int | None = None, extra: Sequence[str] = ()) -> str:
    """The same text through rich's recording console (the reference `to_text` must match)."""
    from rich.console import Console
    from rich.measure import Measurement
    from rich.text import Text

    console = Console(
        file=io.StringIO(),
        width=width or DEFAULT_WIDTH,
        color_system=None,
        force_terminal=False,
        record=True,
        highlight=False,
        emoji=False,
        markup=False,
    )
    for table in tables:
        view = to_rich(table)
        # Never squeeze or cut a cell: exported text is for reading later, so a table wider
        # than `width` keeps its natural width instead of truncating names.
        natural = Measurement.get(console, console.options.update_width(100_000), view).maximum
        console.width = max(width or DEFAULT_WIDTH, natural)
        console.print(view)
        for note in table.notes:
            console.print(Text(clean(note)))
        console.print()
    for block in extra:
        console.print(Text(block))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()).rstrip("\n") + "\n"


def _md_cell(text: str) -> str:
    text = clean(text)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(tables: Sequence[ResultTable], extra: Sequence[str] = ()) -> str:
    parts: list[str] = []
    for table in tables:
        parts.append(f"### {_md_cell(table.title)}\n")
        header = "| " + " | ".join(_md_cell(c.header) for c in table.columns) + " |"
        aligns = [
            "---:" if c.is_numeric(table.column_values(i)) else ":---"
            for i, c in enumerate(table.columns)
        ]
        lines = [header, "| " + " | ".join(aligns) + " |"]
        for r in range(len(table.rows)):
            cells = (_md_cell(table.cell_text(r, c)) for c in range(len(table.columns)))
            lines.append("| " + " | ".join(cells) + " |")
        parts.append("\n".join(lines) + "\n")
        parts.extend(f"{_md_cell(n)}\n" for n in table.notes)
    for block in extra:
        parts.append("```text\n" + block.rstrip("\n") + "\n```\n")
    return "\n".join(parts)


def rounded(value: object) -> object:
    """A float to SIGNIFICANT digits (integral ones to int); anything else as it is."""
    if not isinstance(value, float) or not math.isfinite(value):
        return value
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return float(f"{value:.{SIGNIFICANT}g}")


def to_csv(table: ResultTable) -> str:
    """One table as CSV with raw (unformatted) values, floats to SIGNIFICANT digits; missing
    values are empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(map(clean, table.keys))
    for record in table.records():
        # Text cells are cleaned as on screen: CSV printed to a terminal must not carry escapes.
        writer.writerow(["" if v is None else clean(v) if isinstance(v, str) else rounded(v) for v in record.values()])
    return out.getvalue()


def json_key(title: str) -> str:
    """A table's stable JSON key: its title in snake_case without the parenthesised part that
    names the unit or implementation shown, and without what it is grouped by: 'Environments
    compared (ms, magma)' is 'environments_compared' whatever the metric, 'Runs grouped by
    nodes' is 'runs_grouped' whatever the fields."""
    words = re.split(r"\s+by\s+", re.sub(r"\([^)]*\)", " ", title))[0]  # 'Runs grouped by nodes': runs_grouped
    return "_".join(re.findall(r"[a-z0-9]+", words.lower())) or "table"


def _records(table: ResultTable) -> list[dict[str, object]]:
    return [{k: rounded(v) for k, v in record.items()} for record in table.records()]


def to_json(tables: Sequence[ResultTable]) -> str:
    """One table: a list of records. Several: an object keyed by `json_key` of each title
    (snake_case, the same whatever the metric; a repeated key gets _2, _3)."""
    if len(tables) == 1:
        payload: object = _records(tables[0])
    else:
        keyed: dict[str, object] = {}
        for t in tables:
            key = base = json_key(t.title)
            n = 1
            while key in keyed:
                n += 1
                key = f"{base}_{n}"
            keyed[key] = _records(t)
        payload = keyed
    return json.dumps(payload, indent=2, allow_nan=False, default=str) + "\n"


def render(tables: Sequence[ResultTable], fmt: str, width: int | None = None, extra: Sequence[str] = (),
           limit: int | None = None) -> str:
    """Render tables in `fmt`. CSV holds one table, so only the first is written. `limit`
    (text only, `--width`): tables fit that many columns (`table_lines`)."""
    if fmt == "text":
        return to_text(tables, width, extra, limit)
    if fmt == "markdown":
        return to_markdown(tables, extra)
    if fmt == "csv":
        return to_csv(tables[0])
    if fmt == "json":
        return to_json(tables)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def write(path: str | os.PathLike[str], fmt: str, tables: Sequence[ResultTable], width: int | None = None, extra: Sequence[str] = ()) -> Path:
    """Render and write atomically."""
    return write_text(path, render(tables, fmt, width, extra))


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write atomically (temp file + rename), so a failed export never leaves half a file.

    A target that exists and is not a regular file (`-o /dev/null`, `/dev/stdout`, a FIFO) is
    written in place: renaming over it would replace the device with a plain file (as root,
    the system's /dev/null). A symlink is followed, so the link stays and its file is replaced."""
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    if target.exists() and not target.is_file():
        with open(target, "w", encoding="utf-8") as out:
            out.write(text)
        return Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


EXTENSIONS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".csv": "csv", ".json": "json"}
"""The file name extensions that name a format."""


def format_for_path(path: str | os.PathLike[str], default: str = "text") -> str:
    """Guess the export format from a file name's extension."""
    return EXTENSIONS.get(Path(path).suffix.lower(), default)
