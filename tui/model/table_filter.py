"""Provides `parse_filter`: the table view's row filter, from what the user types after `/`.

A filter is either plain text (rows where any cell contains it, any case) or one or more
conditions joined by `and`: `batch_size > 2`, `"Mean Latency (ms)" <= 200`, `strategy ~ top`,
`speedup != 1`. A column is named as its header (any case), in quotes or backticks when it has
spaces or operators in it. Comparing with a number compares the column's numbers (cells such as
`143.9 ± 0.0` or `15.85×` read by `metrics.cells`); comparing with text compares the cell text.
Nothing here is evaluated as code: the text is split into tokens and each condition is one of
the operators below, so no input can run anything or raise anything but `FilterError`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

OPERATORS = ("<=", ">=", "!=", "==", "!~", "<", ">", "=", "~")
"""Longest first, so `<=` is not read as `<` then `=`. `~` is "contains", `!~` "does not"."""
_TOKEN = re.compile(r"\s*(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|`(?P<bq>[^`]*)`|(?P<op><=|>=|!=|==|!~|<|>|=|~)|(?P<word>[^\s<>=!~\"'`]+|!))")
_AND = re.compile(r"\s+(?:and|&&)\s+", re.IGNORECASE)


class FilterError(ValueError):
    """The filter text names no column, or a condition is incomplete; the message says which."""


@dataclass(frozen=True, slots=True)
class Condition:
    """`column op value`; `number` is the value read as a number (NaN when it is text)."""

    column: str
    op: str
    value: str
    number: float


@dataclass(frozen=True, slots=True)
class RowFilter:
    """Either `text` (plain search) or `conditions` (all must hold); empty keeps every row."""

    text: str = ""
    conditions: tuple[Condition, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.text and not self.conditions


def _number(text: str) -> float:
    try:
        value = float(text.replace(",", "").rstrip("%×x"))
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


def _tokens(part: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: `op`, `name` (quoted) or `word`; FilterError on an unclosed quote."""
    out, pos = [], 0
    while pos < len(part):
        if part[pos:].isspace():
            break
        match = _TOKEN.match(part, pos)
        if match is None or match.end() == pos:
            raise FilterError(f"cannot read the filter from {part[pos:]!r} on (a quote not closed?)")
        kind = next(k for k in ("dq", "sq", "bq", "op", "word") if match.group(k) is not None)
        out.append(("op" if kind == "op" else "name" if kind != "word" else "word", match.group(kind)))
        pos = match.end()
    return out


def _column(name: str, columns: Sequence[str]) -> str | None:
    """The column called `name`: exactly, else ignoring case and surrounding spaces."""
    if name in columns:
        return name
    folded = name.strip().casefold()
    return next((c for c in columns if c.strip().casefold() == folded), None)


def _condition(part: str, columns: Sequence[str]) -> Condition | None:
    """One `column op value`, or None when `part` has no operator (plain text)."""
    tokens = _tokens(part)
    ops = [i for i, (kind, _) in enumerate(tokens) if kind == "op"]
    if not ops:
        return None
    at = ops[0]
    left, op, right = tokens[:at], tokens[at][1], tokens[at + 1:]
    name = " ".join(text for _, text in left)
    value = " ".join(text for _, text in right)
    if not name:
        raise FilterError(f"no column before {op!r}: write it as  column {op} value")
    column = _column(name, columns)
    if column is None:
        shown = ", ".join(columns[:8]) + (" ..." if len(columns) > 8 else "")
        raise FilterError(f"no column named {name!r} (columns: {shown}); quote names with spaces")
    if not right:
        raise FilterError(f"no value after {op!r}: write it as  {name} {op} value")
    op = "==" if op == "=" else op
    return Condition(column, op, value, _number(value))


def parse_filter(text: str, columns: Sequence[str]) -> RowFilter:
    """The filter `text` means over `columns`; raises only `FilterError`."""
    text = text.strip()
    if not text:
        return RowFilter()
    parts = _AND.split(text)
    conditions = [_condition(part, columns) for part in parts]
    if all(c is None for c in conditions):
        return RowFilter(text=text)  # no operator anywhere: plain text, `and` included
    if any(c is None for c in conditions):
        raise FilterError("every part joined by 'and' needs an operator (< <= > >= = != ~ !~)")
    return RowFilter(conditions=tuple(c for c in conditions if c is not None))
