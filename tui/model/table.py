"""Provides `TableModel`: rows of a table file to sort, filter, describe and plot (no Textual).

Cells keep the file's text; each column is also read once as numbers (`metrics.cells`:
`143.9 ± 0.0` is 143.9, `15.85×` 15.85, `1.2 GB/s` 1.2 in the column's unit), so sorting,
statistics, numeric filters and plots use the numbers while the view shows the text. Building
the model reads every column, so it runs in the screen's worker thread; sorting and filtering
work on arrays afterwards, on the main thread.

A value that cannot be computed is NaN (shown `n/a`), never 0. `marks` are cells an expected
range failed on, as (row in the file, column) pairs; the view highlights them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from gpuscope.metrics.cells import NA_TEXTS, numeric_column
from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.table import Column, ResultTable, format_cell, is_missing, plain_value
from gpuscope.tui.model.table_filter import Condition, RowFilter
from gpuscope.tui.model.table_read import TableRead

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""What `clean` removes or replaces starts with one of these (ESC, CSI, controls)."""
ROW = "row"
"""The pseudo-column a plot uses as x when no column is chosen: the row's place in the file."""


@dataclass(frozen=True, slots=True)
class NumericColumn:
    """A column read as numbers: values (NaN where a cell holds none), errors (`±`), unit."""

    values: np.ndarray
    errors: np.ndarray
    unit: str


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """Statistics of one column over the rows shown; NaN where they cannot be computed."""

    column: str
    count: int
    """Cells with a value."""
    missing: int
    """Cells without one (empty, `n/a`, text in a numeric column)."""
    unique: int
    numeric: bool
    unit: str = ""
    minimum: float = math.nan
    median: float = math.nan
    mean: float = math.nan
    maximum: float = math.nan


@dataclass(frozen=True, slots=True)
class TableView:
    """What the table shows: sorted by `sort` (a column, or None for file order), filtered."""

    sort: str | None = None
    descending: bool = False
    filter: RowFilter = field(default_factory=RowFilter)


@dataclass(frozen=True, slots=True)
class TableState:
    """What the user set on one file's table, kept for the session so that reopening the file
    shows it again: the sort, the filter last kept with Enter (its text: the columns are
    matched again when the file is read), the plot's (x, y) once chosen."""

    sort: str | None = None
    descending: bool = False
    filter_text: str = ""
    plot: tuple[str, str] | None = None


def _text_column(series: pd.Series) -> np.ndarray:
    """Display text of every cell (cleaned: escape sequences in a cell are removed). A text
    column is searched for unprintable characters in one pass over its joined cells (pandas'
    string methods cost a millisecond a column on a small table); only cells holding one are
    cleaned one by one."""
    if isinstance(series.dtype, pd.StringDtype):
        text = series.fillna("").to_numpy(dtype=object)
        if _UNPRINTABLE.search("".join(text)):
            text = np.array([clean(t) if _UNPRINTABLE.search(t) else t for t in text], dtype=object)
        return text
    return np.array([_shown(v) for v in series.tolist()], dtype=object)


def _shown(value: Any) -> str:
    """One cell as text: floats with 10 significant digits (the file's own, mostly), others as
    `format_cell` shows them (blank for missing, cleaned text)."""
    if isinstance(value, float) and not is_missing(value):
        return f"{value:.10g}"
    return format_cell(value)


def read_numbers(series: pd.Series) -> NumericColumn | None:
    """`series` as numbers, or None when it is a text column. Plain numbers take pandas'
    vectorised path; only cells with units, `±` or `×` go through `metrics.cells`."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return None
    if not pd.api.types.is_numeric_dtype(series.dtype):
        plain = pd.to_numeric(series, errors="coerce")
        filled = series.notna() & (series.astype(str).str.strip() != "")
        if filled.any() and plain[filled].notna().all():
            series = plain
    read = numeric_column(series)
    if read is None:
        return None
    values, errors, unit = read
    return NumericColumn(values.to_numpy(float), errors.to_numpy(float), unit)


class TableModel:
    """One table: text for display, numbers for sort/stats/plot, the rows a view keeps."""

    def __init__(self, read: TableRead, marks: set[tuple[int, str]] | frozenset[tuple[int, str]] = frozenset()) -> None:
        self.read = read
        frame = read.frame
        self.columns: tuple[str, ...] = tuple(str(c) for c in frame.columns)
        self.row_count = len(frame)
        self.text: dict[str, np.ndarray] = {c: _text_column(frame[c]) for c in self.columns}
        """Display text per column; also what text filters and text sorts compare."""
        self.numbers: dict[str, NumericColumn | None] = {c: read_numbers(frame[c]) for c in self.columns}
        self.filled: dict[str, np.ndarray] = {c: np.array([t.strip().lower() not in NA_TEXTS for t in self.text[c]], dtype=bool) for c in self.columns}
        """Cells with a value (not empty, `n/a`, `-` ...) per column."""
        self.marks = frozenset(marks)
        """(row in the file, column) cells outside their expected range."""
        self._folded: dict[str, np.ndarray] = {}

    @property
    def complete(self) -> bool:
        return self.read.complete

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.read.findings

    def is_numeric(self, column: str) -> bool:
        return self.numbers.get(column) is not None

    def folded(self, column: str) -> np.ndarray:
        """Lower-case text of a column (cached: text filters and sorts reuse it)."""
        if column not in self._folded:
            self._folded[column] = np.array([t.casefold() for t in self.text[column]], dtype=object)
        return self._folded[column]

    def rows(self, view: TableView) -> np.ndarray:
        """Indices (into the file's rows) the view shows, in its order."""
        keep = self._kept(view.filter)
        if view.sort is None or view.sort not in self.columns:
            return np.flatnonzero(keep)
        indices = np.flatnonzero(keep)
        numbers = self.numbers[view.sort]
        if numbers is not None:
            key = numbers.values[indices]
            present = ~np.isnan(key)
            order = np.argsort(key[present], kind="stable")
            ordered = indices[present][order[::-1] if view.descending else order]
            return np.concatenate([ordered, indices[~present]])  # n/a last, either way
        texts = self.folded(view.sort)[indices]
        empty = texts == ""
        order = sorted(range(int((~empty).sum())), key=texts[~empty].__getitem__, reverse=view.descending)
        return np.concatenate([indices[~empty][order], indices[empty]]).astype(int)

    def _kept(self, row_filter: RowFilter) -> np.ndarray:
        keep = np.ones(self.row_count, dtype=bool)
        if row_filter.text:
            needle = row_filter.text.casefold()
            found = np.zeros(self.row_count, dtype=bool)
            for column in self.columns:
                found |= np.fromiter((needle in t for t in self.folded(column)), bool, self.row_count)
            keep &= found
        for condition in row_filter.conditions:
            keep &= self._holds(condition)
        return keep

    def _holds(self, c: Condition) -> np.ndarray:
        numbers = self.numbers[c.column]
        if c.op in ("~", "!~"):
            found = np.fromiter((c.value.casefold() in t for t in self.folded(c.column)), bool, self.row_count)
            return found if c.op == "~" else ~found
        if numbers is not None and not math.isnan(c.number) and c.op in ("<", "<=", ">", ">=", "==", "!="):
            values = numbers.values
            with np.errstate(invalid="ignore"):
                result = {"<": values < c.number, "<=": values <= c.number, ">": values > c.number,
                          ">=": values >= c.number, "==": values == c.number, "!=": values != c.number}[c.op]
            return result & ~np.isnan(values) if c.op == "!=" else result
        texts = self.folded(c.column)
        value = c.value.casefold()
        compare = {"==": texts == value, "!=": texts != value, "<": texts < value, "<=": texts <= value,
                   ">": texts > value, ">=": texts >= value}
        return np.asarray(compare[c.op], dtype=bool)

    def stats(self, column: str, rows: np.ndarray | None = None) -> ColumnStats:
        """Statistics of `column` over `rows` (default every row)."""
        rows = np.arange(self.row_count) if rows is None else rows
        texts, filled = self.text[column][rows], self.filled[column][rows]
        unique = len(set(texts[filled].tolist()))
        numbers = self.numbers[column]
        if numbers is None:
            count = int(filled.sum())
            return ColumnStats(column, count, len(rows) - count, unique, False)
        values = numbers.values[rows]
        values = values[~np.isnan(values)]
        count = len(values)
        if not count:
            return ColumnStats(column, 0, len(rows), unique, True, numbers.unit)
        return ColumnStats(column, count, len(rows) - count, unique, True, numbers.unit, float(values.min()),
                           float(np.median(values)), float(values.mean()), float(values.max()))

    def points(self, x: str, y: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the rows where both are numbers, sorted by x; x `ROW` is the row number."""
        ys = self.numbers[y]
        if ys is None:
            return np.array([]), np.array([])
        xs = (rows + 1).astype(float) if x == ROW else self.numbers[x].values[rows] if self.numbers.get(x) is not None else None
        if xs is None:
            return np.array([]), np.array([])
        y_values = ys.values[rows]
        keep = ~np.isnan(xs) & ~np.isnan(y_values)
        order = np.argsort(xs[keep], kind="stable")
        return xs[keep][order], y_values[keep][order]

    def result_table(self, rows: np.ndarray, title: str) -> ResultTable:
        """The rows shown, as the exporters' model (the file's own values, cleaned text)."""
        frame = self.read.frame
        columns = tuple(Column(c, title=clean(c)) for c in self.columns)
        body = tuple(tuple(_raw(frame.iat[int(r), i]) for i in range(len(self.columns))) for r in rows)
        return ResultTable(title=title, columns=columns, rows=body)


def _raw(value: Any) -> Any:
    if is_missing(value):
        return None
    value = plain_value(value)
    return clean(value) if isinstance(value, str) else value


def stats_cells(stats: ColumnStats) -> list[tuple[str, str]]:
    """(label, text) pairs for the statistics panel: numbers with the column's unit, n/a when none."""
    def number(value: float) -> str:
        return "n/a" if math.isnan(value) else f"{value:.6g}{(' ' + stats.unit) if stats.unit else ''}"

    cells = [("count", f"{stats.count:,}"), ("n/a", f"{stats.missing:,}")]
    if stats.numeric:
        cells += [("min", number(stats.minimum)), ("median", number(stats.median)), ("mean", number(stats.mean)), ("max", number(stats.maximum))]
    else:
        cells += [("min", "n/a"), ("median", "n/a"), ("mean", "n/a"), ("max", "n/a")]
    return cells + [("unique", f"{stats.unique:,}")]
