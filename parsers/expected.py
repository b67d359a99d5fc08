"""Provides the file kind `expected` and `read_checks` / `parse`: the expected ranges of a result
folder, from `expected.toml`.

The file is a list of checks, each a `[[check]]` table:

```toml
[[check]]
name = "8xA100 speedup ~4-6x"        # optional: how the check is shown
file = "*summary*.csv"               # glob: without `/` the file name at any depth below the
                                     # folder, with `/` the path relative to it (`results/*.csv`)
where = { system = "8xA100" }        # optional row selector: column = value; a list accepts any
                                     # of its values (`batch_size = [1, 2]`); all must hold
column = "speedup"                   # the column whose cells are checked (each selected row)
range = [4, 6]                       # inclusive; "*" leaves an end open: [4, "*"] is >= 4
# min = 4 / max = 6                  # the same as range, one end or both (not with range)
```

Cells are read as numbers by `metrics.cells` (`15.85×` is 15.85, `45%` is 45, `143.9 ± 0.2`
is 143.9), so a range is written in the numbers the table shows. Column names match exactly,
else ignoring case and surrounding spaces. A check with an unknown key, a range whose low end
is above its high end, or no range is left out with an error finding that names the check
(its number and line): a misspelt key must not turn into a check that always passes. Bad
TOML gives one error finding with its line, never a traceback.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import display_name, read_text

if TYPE_CHECKING:
    from gpuscope.metrics.expected import Check

FILE_NAME = "expected.toml"
"""Looked for in the folder being checked or browsed."""
KEYS = frozenset({"name", "file", "where", "column", "range", "min", "max"})
OPEN = "*"
"""A range end that is left open."""
MAX_BYTES = 1024 * 1024
"""An expected-ranges file is written by hand: anything larger is not one."""
_HEADER = re.compile(r"^\s*\[\[\s*check\s*\]\]")
_AT_LINE = re.compile(r"at line (\d+)")


def _header_lines(text: str) -> list[int]:
    """1-based line of every `[[check]]` header, in order."""
    return [i for i, line in enumerate(text.splitlines(), start=1) if _HEADER.match(line)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _end(value: Any, what: str) -> float:
    """A range end: a number, or "*" for an open end (-inf / +inf by `what`)."""
    if value == OPEN:
        return -math.inf if what == "low" else math.inf
    if not _is_number(value):
        raise ValueError(f"range {what} end {value!r} is not a number or {OPEN!r}")
    return float(value)


def _bounds(raw: dict[str, Any]) -> tuple[float, float]:
    has_range, has_min_max = "range" in raw, "min" in raw or "max" in raw
    if has_range and has_min_max:
        raise ValueError("give either range = [low, high] or min / max, not both")
    if has_range:
        value = raw["range"]
        if not isinstance(value, list) or len(value) != 2:
            raise ValueError(f"range must be [low, high] (use {OPEN!r} for an open end), not {value!r}")
        low, high = _end(value[0], "low"), _end(value[1], "high")
    elif has_min_max:
        low, high = _end(raw.get("min", OPEN), "low"), _end(raw.get("max", OPEN), "high")
    else:
        raise ValueError("no range: give range = [low, high] or min / max")
    if low > high:
        raise ValueError(f"range low end {low:g} is above its high end {high:g}")
    if math.isinf(low) and math.isinf(high):
        raise ValueError("both ends of the range are open: the check could never fail")
    return low, high


def _where(value: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    if not isinstance(value, dict):
        raise ValueError(f"where must be a table of column = value, e.g. where = {{ system = \"8xA100\" }}, not {value!r}")
    selectors = []
    for column, wanted in value.items():
        values = tuple(wanted) if isinstance(wanted, list) else (wanted,)
        if not values or not all(isinstance(v, (str, int, float, bool)) for v in values):
            raise ValueError(f"where {column!r} must be a text, a number or a list of them")
        selectors.append((str(column), values))
    return tuple(selectors)


def _check(index: int, raw: Any, line: int | None) -> Check:
    from gpuscope.metrics.expected import Check  # quantiphy, uncertainties: only to read an expected.toml

    if not isinstance(raw, dict):
        raise ValueError("is not a table")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        raise ValueError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    for key in ("file", "column"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ValueError(f"needs {key} = \"...\" (a {'glob' if key == 'file' else 'column name'})")
    if "name" in raw and not isinstance(raw["name"], str):
        raise ValueError("name must be a text")
    low, high = _bounds(raw)
    where = _where(raw["where"]) if "where" in raw else ()
    return Check(index=index, file=raw["file"].strip(), column=raw["column"], low=low, high=high, where=where, name=raw.get("name", ""), line=line)


def parse(text: str, label: str = FILE_NAME) -> tuple[list[Check], list[Finding]]:
    """The checks of an expected-ranges file's text, and findings for what was left out."""
    if sys.version_info >= (3, 11):  # imported here: every command imports this kind through the registry
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = _AT_LINE.search(str(exc))
        return [], [Finding("error", "bad-toml", f"not valid TOML: {exc}", label, int(at.group(1)) if at else None)]
    findings: list[Finding] = []
    for key in sorted(set(data) - {"check"}):
        findings.append(Finding("error", "unknown-key", f"unknown top-level key {key!r}: checks are [[check]] tables", label))
    raw_checks = data.get("check", [])
    if not isinstance(raw_checks, list):
        return [], findings + [Finding("error", "bad-check", "check must be a list of tables: write each as [[check]]", label)]
    lines = _header_lines(text)
    lines = lines if len(lines) == len(raw_checks) else []
    checks: list[Check] = []
    for index, raw in enumerate(raw_checks, start=1):
        line = lines[index - 1] if lines else None
        try:
            checks.append(_check(index, raw, line))
        except ValueError as exc:
            findings.append(Finding("error", "bad-check", f"check {index} left out: {exc}", label, line))
    if not raw_checks and not findings:
        findings.append(Finding("warning", "no-checks", "has no [[check]] tables", label))
    return checks, findings


def to_frame(checks: list[Check]) -> pd.DataFrame:
    """The checks as a table (one row each, as `gpuscope check` shows them), for a file view."""
    return pd.DataFrame(
        [(c.index, c.line, c.title, c.file, c.where_text, c.column, c.range_text) for c in checks],
        columns=["check", "line", "name", "file", "rows", "column", "range"],
    )


KIND = "expected"
TITLE = "Expected result ranges"
VIEW = "table"
BOUNDED = False


def match(name: str, head: Head) -> str | None:
    return "named expected.toml: expected result ranges" if name.lower() == FILE_NAME else None


def describe(head: Head, size: int) -> str:
    return "expected ranges"


def read(path: Path) -> FileRead:
    """The checks as a table (`to_frame`), for a file view."""
    checks, findings = read_checks(path)
    return FileRead(to_frame(checks), list(findings), {"checks": len(checks)})


def read_checks(path: str | Path) -> tuple[list[Check], list[Finding]]:
    """The checks of the expected-ranges file at `path`; never raises."""
    label = display_name(path)
    text, findings = read_text(Path(path), label, max_bytes=MAX_BYTES)
    if text is None:
        return [], findings
    checks, more = parse(text, label)
    return checks, findings + more
