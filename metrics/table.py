"""Provides `ResultTable`, the one table model every screen shows and every export reads.

Widgets (DataTable, rich Table) are views of it; exporters turn it into text, markdown, CSV or
JSON. Cells keep their raw values (numbers stay numbers for CSV/JSON); `Column.fmt` says how
to show them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Sequence

from gpuscope.metrics.safe_text import clean


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its key (CSV/JSON name), title (screen/text header) and display format."""

    key: str
    title: str = ""
    fmt: str = ""
    """A `format()` spec for numbers, e.g. `.2f`; empty means `str()`."""
    missing: str = ""
    """Text shown for a missing value (None, NaN): blank, or `n/a` where a value could not be
    computed. CSV and JSON are not affected (empty and null)."""
    show: Callable[[Any], str] | None = None
    """How a present value is shown, where a format spec cannot say it (bytes as MiB, seconds
    as htop's m:ss.cc); CSV and JSON keep the raw value."""
    low_value: bool = False
    """Left out (and named in a note) when a text table is too wide for its width, before
    its columns are split into parts."""
    shorten: Callable[[str, int], str] | None = None
    """How a cell is shortened to a width where its meaning survives (a kernel name folds its
    template arguments); None: a text cell too wide wraps onto more lines instead."""

    @property
    def header(self) -> str:
        return self.title or self.key

    def is_numeric(self, values: Iterable[Any]) -> bool:
        return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def is_missing(value: Any) -> bool:
    """None and NaN (pandas' missing values) are shown as blank, never as 0."""
    if value is None:
        return True
    try:
        return isinstance(value, float) and math.isnan(value)
    except TypeError:  # pragma: no cover - exotic types
        return False


def format_cell(value: Any, fmt: str = "") -> str:
    """Display text of one cell: blank for missing, `fmt` for numbers, cleaned text otherwise."""
    if is_missing(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt and isinstance(value, (int, float)):
        try:
            return format(value, fmt)
        except (ValueError, TypeError):
            return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return clean(value)


@dataclass(frozen=True)
class ResultTable:
    """Rows of raw values under named columns, with a title and optional notes."""

    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...]
    notes: tuple[str, ...] = field(default=())
    row_keys: tuple[str, ...] | None = None
    """The keys of the columns that name a row, most telling first: a text table split into
    parts starts each with as many of them as fit. None: the leading text columns (at least
    the first)."""

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.columns]

    def cell_text(self, row: int, col: int) -> str:
        value, column = self.rows[row][col], self.columns[col]
        if is_missing(value):
            return column.missing
        return clean(column.show(value)) if column.show is not None else format_cell(value, column.fmt)

    def laid_out(self, row_keys: Sequence[str] | None = None, low_value: Iterable[str] = (),
                 shorten: Callable[[str, int], str] | None = None, shortened: Iterable[str] = ()) -> "ResultTable":
        """This table with its text layout declared: `row_keys` (see the field), the columns
        keyed in `low_value` are the first left out to fit a width, those in `shortened` are
        cut by `shorten` (see `Column`)."""
        low, short = set(low_value), set(shortened)
        columns = tuple(replace(c, low_value=c.low_value or c.key in low, shorten=shorten if c.key in short else c.shorten)
                        for c in self.columns)
        return replace(self, columns=columns, row_keys=self.row_keys if row_keys is None else tuple(row_keys))

    def column_values(self, col: int) -> list[Any]:
        return [r[col] for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """Rows as dicts of JSON-safe values (NaN becomes None)."""
        return [
            {c.key: (None if is_missing(v) else plain_value(v)) for c, v in zip(self.columns, r)}
            for r in self.rows
        ]

    @classmethod
    def from_frame(
        cls,
        frame: Any,
        title: str,
        columns: Sequence[Column | str] | None = None,
        notes: Sequence[str] = (),
    ) -> "ResultTable":
        """Build from a pandas DataFrame, keeping `columns` (Column or key) in that order."""
        cols = [c if isinstance(c, Column) else Column(c) for c in (columns or list(frame.columns))]
        cols = [c for c in cols if c.key in frame.columns]
        data = frame[[c.key for c in cols]]
        rows = tuple(tuple(plain_value(v) for v in row) for row in data.itertuples(index=False, name=None))
        return cls(title=title, columns=tuple(cols), rows=rows, notes=tuple(notes))


def plain_value(value: Any) -> Any:
    """numpy/pandas scalars to Python ones, so CSV/JSON writers see ints, floats, str."""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            return item()
        except (ValueError, TypeError):
            return value
    if value is not None and type(value).__name__ in {"NAType", "NaTType"}:
        return None
    return value
