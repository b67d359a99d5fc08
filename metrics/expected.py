"""Provides `Check` and `evaluate`: expected ranges checked against the cells of result tables.

A check names files (a glob), optionally rows (column = value), a column and an inclusive
range. Every selected cell is read through `metrics.cells` (`15.85×` is 15.85, `45%` is 45,
`143.9 ± 0.2` is 143.9; see there what a value is), in its column's most common unit. One
`CheckResult` per check and matching file says pass, FAIL (a value outside the range) or n/a
(why it could not be checked: no file matched, the file could not be read, a column is
missing, no row matched, a cell is not a number), and which cells failed, so a table view
can mark them. Pure: the tables are handed in, nothing is read here.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.cells import numeric_column, parse_cell
from gpuscope.metrics.table import Column, ResultTable

Status = Literal["pass", "FAIL", "n/a"]
MAX_LISTED = 5
"""Rows named in a result's `why` before "…"."""


@dataclass(frozen=True, slots=True)
class Check:
    """One expected range: cells of `column` in files matching `file` (and rows matching
    `where`) lie in [low, high]; an open end is -inf / inf."""

    index: int
    """1-based position of the check in its file."""
    file: str
    column: str
    low: float = -math.inf
    high: float = math.inf
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """(column, accepted values): a row is selected when every column holds one of its values."""
    name: str = ""
    line: int | None = None
    """Line of the check in its file, for messages."""

    @property
    def title(self) -> str:
        return self.name or f"{self.column} {self.range_text}"

    @property
    def range_text(self) -> str:
        low, high = _number(self.low), _number(self.high)
        if math.isinf(self.low) and math.isinf(self.high):
            return "any"
        if math.isinf(self.low):
            return f"≤ {high}"
        if math.isinf(self.high):
            return f"≥ {low}"
        return f"{low} … {high}"

    @property
    def where_text(self) -> str:
        parts = []
        for column, values in self.where:
            shown = ", ".join(str(v) for v in values)
            parts.append(f"{column} = {shown}" if len(values) == 1 else f"{column} in ({shown})")
        return "; ".join(parts) or "all rows"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A check on one file (or on its pattern when no file matched)."""

    check: Check
    file: str
    status: Status
    why: str = ""
    values: tuple[float, ...] = ()
    """The selected cells' values (NaN where a cell is not a number), in `unit`."""
    unit: str = ""
    outside: tuple[tuple[int, str], ...] = ()
    """(row position, column) of each cell outside the range: row positions count from 0 in
    the table as read (iloc), so a view marks them without matching index labels."""
    unreadable: tuple[tuple[int, str], ...] = ()
    """(row position, column) of each selected cell that is not a number."""

    @property
    def value_text(self) -> str:
        numbers = [v for v in self.values if not math.isnan(v)]
        unit = f" {self.unit}" if self.unit else ""
        if not numbers:
            return ""
        low, high = min(numbers), max(numbers)
        shown = _number(low) if low == high else f"{_number(low)} … {_number(high)}"
        return f"{shown}{unit}" + (f" ({len(numbers)} cells)" if len(numbers) > 1 else "")


def _number(x: float) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def matches(pattern: str, path: str) -> bool:
    """Whether the relative POSIX `path` matches the glob `pattern`: a pattern without `/` is
    matched against the file name at any depth, one with `/` against the whole path (`*` also
    crosses `/`; a leading `**/` also matches at the top)."""
    if "/" not in pattern:
        return fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    return fnmatchcase(path, pattern) or (pattern.startswith("**/") and fnmatchcase(path, pattern[3:]))


def _find_column(frame: pd.DataFrame, name: str) -> str | None:
    """`name` among the columns: exactly, else the one column equal ignoring case and spaces."""
    columns = [str(c) for c in frame.columns]
    if name in columns:
        return name
    folded = [c for c in columns if c.strip().casefold() == name.strip().casefold()]
    return folded[0] if len(folded) == 1 else None


def _same(cell: Any, wanted: Any) -> bool:
    """A where-value matches a cell: numbers as numbers (`1` matches `1.0` and `1,000`
    matches 1000), text as text with the ends' spaces ignored. An empty cell matches nothing."""
    if _is_na(cell):
        return False
    if isinstance(wanted, bool):
        return str(cell).strip().casefold() == str(wanted).casefold()
    if isinstance(wanted, (int, float)):
        if isinstance(cell, (int, float, np.number)) and not isinstance(cell, bool):
            return float(cell) == float(wanted)
        return parse_cell(str(cell)).value == float(wanted)
    return str(cell).strip() == str(wanted).strip()


def _is_na(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _missing_column(name: str, frame: pd.DataFrame, what: str) -> str:
    columns = [str(c) for c in frame.columns]
    shown = ", ".join(columns[:8]) + (", …" if len(columns) > 8 else "")
    return f"{what} {name!r} missing (columns: {shown})"


def _rows(positions: Sequence[int]) -> str:
    """Row positions as 1-based data rows, the first few."""
    shown = ", ".join(str(p + 1) for p in positions[:MAX_LISTED])
    return ("row " if len(positions) == 1 else "rows ") + shown + (", …" if len(positions) > MAX_LISTED else "")


def _check_table(check: Check, file: str, frame: pd.DataFrame) -> CheckResult:
    column = _find_column(frame, check.column)
    if column is None:
        return CheckResult(check, file, "n/a", _missing_column(check.column, frame, "column"))
    mask = np.ones(len(frame), dtype=bool)
    for name, values in check.where:
        where_column = _find_column(frame, name)
        if where_column is None:
            return CheckResult(check, file, "n/a", _missing_column(name, frame, "row selector column"))
        cells = frame[where_column].tolist()
        mask &= np.array([any(_same(cell, v) for v in values) for cell in cells], dtype=bool)
    positions = np.flatnonzero(mask).tolist()
    if not positions:
        return CheckResult(check, file, "n/a", f"no row where {check.where_text}")
    series = frame[column]
    if isinstance(series, pd.DataFrame):  # duplicate column names: the first
        series = series.iloc[:, 0]
    read = numeric_column(series)
    if read is not None:
        values, unit = read[0].to_numpy()[positions], read[2]
    else:  # a mostly-text column: the selected cells on their own
        cells = [parse_cell(str(series.iloc[p])) for p in positions]
        values = np.array([c.value for c in cells])
        units = Counter(c.unit for c in cells if c.is_number)
        unit = units.most_common(1)[0][0] if units else ""
    outside = [p for p, v in zip(positions, values) if not math.isnan(v) and not (check.low <= v <= check.high)]
    unreadable = [p for p, v in zip(positions, values) if math.isnan(v)]
    result = dict(values=tuple(float(v) for v in values), unit=unit, outside=tuple((p, column) for p in outside), unreadable=tuple((p, column) for p in unreadable))
    if outside:
        return CheckResult(check, file, "FAIL", f"{len(outside)} of {len(positions)} outside: {_rows(outside)}", **result)
    if unreadable:
        first = series.iloc[unreadable[0]]
        shown = "empty" if _is_na(first) else repr(str(first)[:20])
        return CheckResult(check, file, "n/a", f"not a number: {_rows(unreadable)} ({shown})", **result)
    return CheckResult(check, file, "pass", "", **result)


def evaluate(checks: Sequence[Check], tables: Mapping[str, pd.DataFrame], unreadable: Mapping[str, str] | None = None) -> list[CheckResult]:
    """Every check against the tables whose relative POSIX path matches its pattern, in the
    checks' order and then by path. `unreadable` names files that matched but could not be
    read (path -> why): their checks are n/a with that reason."""
    unreadable = unreadable or {}
    paths = sorted(set(tables) | set(unreadable))
    results: list[CheckResult] = []
    for check in checks:
        files = [p for p in paths if matches(check.file, p)]
        if not files:
            results.append(CheckResult(check, check.file, "n/a", "no file matched"))
        for path in files:
            if path in unreadable or tables.get(path) is None:
                results.append(CheckResult(check, path, "n/a", unreadable.get(path) or "not a table"))
            else:
                results.append(_check_table(check, path, tables[path]))
    return results


def failed_cells(results: Sequence[CheckResult], file: str) -> set[tuple[int, str]]:
    """(row position, column) of every cell of `file` outside its expected range."""
    return {cell for r in results if r.file == file for cell in r.outside}


def all_passed(results: Sequence[CheckResult]) -> bool:
    """True when there is at least one result and every one passed (n/a is not a pass)."""
    return bool(results) and all(r.status == "pass" for r in results)


COLUMNS = (
    Column("check", "#"),
    Column("name", "check"),
    Column("file"),
    Column("rows"),
    Column("column"),
    Column("range"),
    Column("value", missing="n/a"),
    Column("status"),
    Column("why"),
)


def results_table(results: Sequence[CheckResult], title: str = "Expected ranges") -> ResultTable:
    """The results as one table for the screen and every export format."""
    rows = tuple(
        (r.check.index, r.check.title, r.file, r.check.where_text, r.check.column, r.check.range_text, r.value_text or None, r.status, r.why)
        for r in results
    )
    counts = Counter(r.status for r in results)
    note = ", ".join(f"{counts[s]} {s}" for s in ("pass", "FAIL", "n/a") if counts[s]) or "no checks"
    return ResultTable(title=title, columns=COLUMNS, rows=rows, notes=(note,))
