"""Provides `parse_cell` and `numeric_column`: table cells written for humans read as numbers.

Result tables made for papers and reports write numbers with their uncertainty and unit:
`143.9 ± 0.0`, `143.9 +/- 0.2`, `(1.2 ± 0.1) ms`, `1.2(3)`, `15.85×`, `1.2 GB/s`, `45%`,
`$4.20`, `3.2e-4`, `1,234`, `~4`. `uncertainties` reads the `±` forms and `quantiphy` the
number-with-unit forms; this module only chooses between them and checks that what they
call a unit is one (`8xA100` is a system name, not 8 of the unit `xA100`).

What a value is (and so what an expected range compares against): **the number as written,
in the unit as written**. `45%` is 45 with unit `%` (a range of `[30, 40]` means 30-40 %),
`0.45` is 0.45, `15.85×` is 15.85 with unit `x`, `1.2 GB/s` is 1.2 with unit `GB/s`, `120 ms`
is 120 with unit `ms`. Scale prefixes are never applied to a single cell (`5 m` is 5 of `m`:
minutes, metres or milli cannot be told apart). `numeric_column` puts a whole column in its
most common unit, so a `900 MB/s` in a column of `GB/s` reads as 0.9.

A cell that holds no number (empty, `n/a`, `-`, `—`, text, a range such as `4-6`) reads as
NaN, never 0. A cell without a stated uncertainty has error NaN (unknown), not 0.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from quantiphy import Quantity
from uncertainties import ufloat_fromstr

# uncertainties warns on every `x ± 0`; a table cell `143.9 ± 0.0` is an ordinary value.
warnings.filterwarnings("ignore", message="Using UFloat objects with std_dev==0", category=UserWarning)

MAX_CELL = 80
"""Longer text is not a number cell (and is never handed to the recognisers' regexes)."""
NA_TEXTS = frozenset({"", "-", "--", "—", "–", "n/a", "na", "nan", "none", "null", "?", "n.a.", "#n/a", "missing"})
"""Cells that say "no value" (compared in lower case)."""
APPROXIMATE = "~≈∼≃"
"""Leading marks of an approximate value (`~4`): the number is kept, the mark dropped."""
UNCERTAINTY = re.compile(r"\s*(?:±|\+/-|\+-)\s*")
CONCISE = re.compile(r"[0-9]\([0-9]+\)")
"""`1.2(3)`: the concise notation for 1.2 ± 0.3."""
THOUSANDS = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:[.][0-9]*)?")
"""A comma is a thousands separator only in groups of three: `1,234.5` yes, `1,23` no
(quantiphy drops every comma, which would read the decimal comma `1,23` as 123)."""
CURRENCY = "$€£¥₹"
MICRO = "µμ"
"""quantiphy reads `us` but not `µs`: micro is handed over as `u` and given back in the unit."""


class _AsWritten(Quantity):
    """quantiphy reading numbers as written: no scale factor is applied (`5 m` is 5 `m`).
    A subclass so that the preference never changes `Quantity` for anyone else."""


# '_' (unity, 10^0) is the only scale factor left: an empty set is not accepted.
_AsWritten.set_prefs(input_sf="_", assign_rec=r"\A\Z(?P<name>)(?P<val>)")


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell read as a number: value and error in `unit` (NaN when there is none), and the text."""

    value: float
    error: float
    unit: str
    text: str

    @property
    def is_number(self) -> bool:
        return not math.isnan(self.value)


def _nan(text: str) -> Cell:
    return Cell(math.nan, math.nan, "", text)


def _unit_ok(unit: str) -> bool:
    """What quantiphy calls a unit is one: no digits (`xA100`, `x1F` are names), no longer than a
    unit, and `x` only alone (`8xA100`, `0xdead`, `4x2` are names or shapes, not factors)."""
    if len(unit) > 16 or any("0" <= ch <= "9" for ch in unit):
        return False
    return not (unit[:1] in "x×" and len(unit) > 1)


def _quantity(text: str) -> tuple[float, str] | None:
    """`text` as (number, unit) by quantiphy, or None."""
    text = text.strip()
    if not text or ":" in text or "=" in text:  # `12:30` is a time, `n=5` an assignment
        return None
    if "," in text and not THOUSANDS.search(text.lstrip(CURRENCY + "+-")):
        return None
    micro = ""
    for mark in MICRO:
        if mark in text:
            micro, text = mark, text.replace(mark, "u")
    if text.endswith("×"):
        text = text[:-1] + "x"
    try:
        q = _AsWritten(text)
    except Exception:  # quantiphy raises its own errors (InvalidNumber, ...) on non-numbers
        return None
    unit = str(q.units or "")
    if micro and unit.startswith("u"):
        unit = micro + unit[1:]
    elif micro:  # a micro sign somewhere else: not a unit we understand
        return None
    if unit and not _unit_ok(unit):
        return None
    return float(q), unit


def _with_uncertainty(text: str) -> Cell | None:
    """`a ± b`, `a +/- b`, `a unit ± b unit`, `a ± b %` (relative) by quantiphy on each side;
    the notations only `uncertainties` knows (`1.2(3)`, `(a ± b)e3`, `(a ± b) unit`) by it."""
    parts = UNCERTAINTY.split(text, maxsplit=1)
    if len(parts) == 2 and "(" not in text:
        left, right = _quantity(parts[0]), _quantity(parts[1])
        if left is None or right is None or right[0] < 0:
            return None
        (value, unit), (error, error_unit) = left, right
        if error_unit == "%" and unit != "%":
            return Cell(value, abs(value) * error / 100, unit, text)
        if unit and error_unit and unit != error_unit:
            return None
        return Cell(value, error, unit or error_unit, text)
    head, unit = text, ""
    if not text.endswith(")") and " " in text:
        head, _, unit = text.rpartition(" ")
        if _quantity("1 " + unit) != (1.0, unit):
            return None
    try:
        u = ufloat_fromstr(head.strip())
    except Exception:  # uncertainties raises ValueError and others on what it cannot read
        return None
    return Cell(float(u.nominal_value), float(u.std_dev), unit, text)


@lru_cache(maxsize=8192)
def parse_cell(text: str) -> Cell:
    """`text` as a number with its uncertainty and unit; NaN when it holds none. Never raises."""
    try:
        return _parse(text)
    except Exception:  # the last guard: a cell that breaks a recogniser is just not a number
        return _nan(text)


def _parse(text: str) -> Cell:
    if not isinstance(text, str):
        return _nan(str(text))
    t = text.strip().replace("\u2212", "-").replace("\u00a0", " ").replace("\u202f", " ")
    if len(t) > MAX_CELL or t.lower() in NA_TEXTS:
        return _nan(text)
    t = t.lstrip(APPROXIMATE).strip()
    if UNCERTAINTY.search(t) or CONCISE.search(t):
        cell = _with_uncertainty(t)
        return _nan(text) if cell is None else Cell(cell.value, cell.error, cell.unit, text)
    read = _quantity(t)
    if read is None:
        return _nan(text)
    return Cell(read[0], math.nan, read[1], text)


@lru_cache(maxsize=1024)
def _base(unit: str) -> tuple[float, str] | None:
    """(scale, base unit) of `unit` with SI prefixes applied: `GB/s` -> (1e9, `B/s`)."""
    try:
        q = Quantity(f"1 {unit}")
    except Exception:
        return None
    return float(q), str(q.units or "")


def _factor(unit: str, target: str) -> float:
    """What a value in `unit` is multiplied by to be in `target`; NaN when they do not convert."""
    if unit == target:
        return 1.0
    a, b = _base(unit), _base(target)
    if a is None or b is None or a[1] != b[1]:
        return math.nan
    return a[0] / b[0]


def _is_empty(value: Any) -> bool:
    """None, NaN, pandas' NA / NaT, or a text that says "no value"."""
    if isinstance(value, str):
        return value.strip().lower() in NA_TEXTS
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array in a cell: a value, not a number
        return False


def numeric_column(series: pd.Series) -> tuple[pd.Series, pd.Series, str] | None:
    """A column as (values, errors, unit) when most of its non-empty cells read as numbers,
    else None. Values are in the column's most common unit (cells in the same unit with another
    SI prefix are converted, cells in other units are NaN); the index is the series' index."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return None
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.astype(float)
        return values, pd.Series(np.nan, index=series.index), ""
    cells: list[Cell | None] = [None if _is_empty(v) else parse_cell(str(v)) for v in series.tolist()]
    filled = [c for c in cells if c is not None]
    numbers = [c for c in filled if c.is_number]
    if not numbers or 2 * len(numbers) <= len(filled):
        return None
    unit = Counter(c.unit for c in numbers).most_common(1)[0][0]
    values, errors = np.full(len(cells), np.nan), np.full(len(cells), np.nan)
    for i, c in enumerate(cells):
        if c is not None and c.is_number:
            factor = _factor(c.unit, unit)
            values[i], errors[i] = c.value * factor, c.error * factor
    return pd.Series(values, index=series.index), pd.Series(errors, index=series.index), unit
