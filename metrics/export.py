"""Provides the one exporter: `ResultTable`s to text, markdown, CSV or JSON.

Text goes through rich's recording console so exported text looks like the screen, minus
colour. Markdown and CSV are generated from the model (raw values for CSV), not from rich,
because rich neither escapes `|` nor keeps numbers raw.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Sequence

from rich import box
from rich.console import Console
from rich.cells import cell_len
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from gpuscope.metrics.table import ResultTable

FORMATS = ("text", "markdown", "csv", "json")
DEFAULT_WIDTH = 120


def to_rich(table: ResultTable) -> Table:
    """A rich Table view of the model; every cell is plain `Text`, never markup."""
    view = Table(title=Text(table.title), box=box.SIMPLE_HEAD, title_justify="left")
    for i, col in enumerate(table.columns):
        numeric = col.is_numeric(table.column_values(i))
        view.add_column(Text(col.header), justify="right" if numeric else "left", no_wrap=numeric)
    for r in range(len(table.rows)):
        view.add_row(*(Text(table.cell_text(r, c)) for c in range(len(table.columns))))
    return view


def table_lines(table: ResultTable) -> list[str]:
    """The table exactly as rich prints `to_rich(table)` (SIMPLE_HEAD box, no colour,
    natural width), built with plain string operations.

    Rich measures and wraps every cell, which takes seconds for the thousand-row tables a
    large study produces; this takes milliseconds. tests/test_export.py checks that both
    give the same text.
    """
    ncols = len(table.columns)
    cells = [[table.cell_text(r, c) for c in range(ncols)] for r in range(len(table.rows))]
    numeric = [col.is_numeric(table.column_values(i)) for i, col in enumerate(table.columns)]
    headers = [col.header for col in table.columns]
    widths = [max([cell_len(headers[c])] + [cell_len(row[c]) for row in cells]) for c in range(ncols)]

    def line(values: Sequence[str]) -> str:
        parts = []
        for c, value in enumerate(values):
            pad = " " * (widths[c] - cell_len(value))
            parts.append(" " + (pad + value if numeric[c] else value + pad) + " ")
        return (" " + " ".join(parts) + " ").rstrip()

    out = [table.title.rstrip(), ""] if table.title else [""]
    out.append(line(headers))
    out.append(" " + "─".join("─" * (w + 2) for w in widths))
    out.extend(line(row) for row in cells)
    out.append("")
    return out


def to_text(tables: Sequence[ResultTable], width: int | None = None, extra: Sequence[str] = ()) -> str:
    """Tables as plain text, then their notes; `extra` blocks (plots rendered as text) follow."""
    parts: list[str] = []
    for table in tables:
        parts.extend(table_lines(table))
        parts.extend(table.notes)
        parts.append("")
    parts.extend(block.rstrip("\n") for block in extra)
    return "\n".join(parts).rstrip("\n") + "\n"


def to_text_with_rich(tables: Sequence[ResultTable], width: int | None = None, extra: Sequence[str] = ()) -> str:
    """The same text through rich's recording console (the reference `to_text` must match)."""
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
            console.print(Text(note))
        console.print()
    for block in extra:
        console.print(Text(block))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()).rstrip("\n") + "\n"


def _md_cell(text: str) -> str:
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


def to_csv(table: ResultTable) -> str:
    """One table as CSV with raw (unformatted) values; missing values are empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.keys)
    for record in table.records():
        writer.writerow(["" if v is None else v for v in record.values()])
    return out.getvalue()


def to_json(tables: Sequence[ResultTable]) -> str:
    """One table: a list of records. Several: an object keyed by table title."""
    if len(tables) == 1:
        payload: object = tables[0].records()
    else:
        payload = {t.title: t.records() for t in tables}
    return json.dumps(payload, indent=2, allow_nan=False, default=str) + "\n"


def render(tables: Sequence[ResultTable], fmt: str, width: int | None = None, extra: Sequence[str] = ()) -> str:
    """Render tables in `fmt`. CSV holds one table, so only the first is written."""
    if fmt == "text":
        return to_text(tables, width, extra)
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
    """Write atomically (temp file + rename), so a failed export never leaves half a file."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def format_for_path(path: str | os.PathLike[str], default: str = "text") -> str:
    """Guess the export format from a file name's extension."""
    suffix = Path(path).suffix.lower()
    return {".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".json": "json", ".txt": "text"}.get(suffix, default)
