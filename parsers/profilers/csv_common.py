"""Provides what the profilers' text readers share: CSV rows, units in headers and cells, the
findings they word alike, and the rule that keeps source files out of the loose text rules.

`nsys`, `ncu`, `nvprof` and `pyprof` read CSV reports with a tool's preamble, units in the header
(`Start (ns)`) or in the cells (`353.084ms`), and rows that do not fit; the helpers here do that
once for all of them.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.profilers.kernel_table import KernelRead, empty
from gpuscope.parsers.files import decode, display_name, read_bytes

SQLITE_MAGIC = b"SQLite format 3\x00"

CODE_SUFFIXES = (".py", ".pyi", ".ipynb", ".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh", ".f90", ".sh", ".rs", ".go", ".java",
                 ".js", ".ts", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".md", ".rst", ".html", ".tex")
"""Source and configuration files: they may name a profiler's columns (a reader's own code
does), but they are never its export; the loose text rules of the profiler kinds skip them."""


def is_code(name: str) -> bool:
    return name.lower().endswith(CODE_SUFFIXES)


TIME_FACTORS = {
    "ns": 1.0, "nsec": 1.0, "nsecond": 1.0, "nanosecond": 1.0,
    "us": 1e3, "usec": 1e3, "usecond": 1e3, "µs": 1e3, "μs": 1e3, "microsecond": 1e3,
    "ms": 1e6, "msec": 1e6, "msecond": 1e6, "millisecond": 1e6,
    "s": 1e9, "sec": 1e9, "second": 1e9, "seconds": 1e9,
}
"""Multiply a value in this unit to get nanoseconds."""

BYTE_FACTORS_SI = {
    "b": 1.0, "byte": 1.0, "bytes": 1.0,
    "kb": 1e3, "kbyte": 1e3, "mb": 1e6, "mbyte": 1e6, "gb": 1e9, "gbyte": 1e9, "tb": 1e12, "tbyte": 1e12,
    "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3, "tib": 1024.0**4,
}
"""Multiply a value in this unit to get bytes (nsys and ncu use decimal prefixes)."""

_UNIT_RE = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
_NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def split_unit(header: str) -> tuple[str, str]:
    """`'Start (ns)'` -> `('start', 'ns')`, `'Start(sec)'` -> `('start', 'sec')`, `'Name'` -> `('name', '')`."""
    text = header.strip().strip('"').strip()
    match = _UNIT_RE.match(text)
    if match:
        return match.group(1).strip().lower(), match.group(2).strip()
    return text.lower(), ""


def number(text: object) -> float | None:
    """A finite float from a profiler cell (`'3,481,709'`, `' 1.5 '`, `'n/a'` -> None)."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        value = float(text)
        return value if math.isfinite(value) else None
    cell = str(text).strip().strip('"').replace(",", "").replace("\u202f", "").replace(" ", "")
    if not cell or not _NUMBER_RE.match(cell):
        return None
    value = float(cell)
    return value if math.isfinite(value) else None


_SUFFIXED_RE = re.compile(r"^([+-]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµμ%/]+)$")


def number_and_unit(text: object) -> tuple[float | None, str]:
    """A number and the unit written after it in the same cell (nvprof text and hand-made
    summaries): `'353.084s'` -> (353.084, 's'), `'83.30%'` -> (83.3, '%'), `'1.6GB/s'` ->
    (1.6, 'GB/s'); a bare number has unit ''; anything else is (None, '')."""
    value = number(text)
    if value is not None:
        return value, ""
    match = _SUFFIXED_RE.match(str(text).strip().strip('"').strip()) if text is not None else None
    if not match:
        return None, ""
    return number(match.group(1)), match.group(2)


def csv_rows(text: str) -> list[tuple[int, list[str]]]:
    """(1-based line number, fields) for every non-blank line; a line the csv module rejects
    becomes one field holding the raw line, so callers skip it with a finding."""
    rows: list[tuple[int, list[str]]] = []
    for number_, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            fields = next(csv.reader(io.StringIO(line)))
        except (csv.Error, StopIteration):
            fields = [line]
        rows.append((number_, fields))
    return rows


def time_factor(unit: str, default: float = 1.0) -> float | None:
    """ns per `unit`; `default` when no unit is given, None when the unit is unknown."""
    if not unit:
        return default
    return TIME_FACTORS.get(unit.strip().lower())


def byte_factor(unit: str, table: dict[str, float] | None = None, default: float = 1.0) -> float | None:
    if not unit:
        return default
    return (table or BYTE_FACTORS_SI).get(unit.strip().lower())


_DIRECTIONS = {
    "host-to-device": "HtoD", "device-to-host": "DtoH", "device-to-device": "DtoD",
    "host-to-host": "HtoH", "peer-to-peer": "PtoP", "htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD",
    "htoh": "HtoH", "ptop": "PtoP", "array-to-device": "AtoD", "device-to-array": "DtoA",
}


def classify_name(name: str) -> tuple[str, str | None]:
    """(`op`, `direction`) from a trace row name: `[CUDA memcpy Host-to-Device]` -> ('memcpy', 'HtoD')."""
    low = name.strip().lower()
    if low.startswith("[cuda memcpy") or low.startswith("[memcpy"):
        match = re.search(r"memcpy\s+([^\]]+)", name, re.IGNORECASE)
        raw = match.group(1).strip() if match else ""
        return "memcpy", _DIRECTIONS.get(raw.lower(), raw or None)
    if low.startswith("[cuda memset") or low.startswith("[memset"):
        return "memset", None
    return "kernel", None


def load_text(path: str | os.PathLike[str], label: str | None = None) -> tuple[str | None, str, list[Finding]]:
    """Text of a CSV result, or None and one error finding (empty, binary, unreadable...)."""
    label = label if label is not None else display_name(path)
    data, findings = read_bytes(Path(path), label)
    if data is None:
        return None, label, findings
    if data.startswith(SQLITE_MAGIC):
        return None, label, [Finding("error", "binary", "is an SQLite database, not a CSV report", label)]
    text, more = decode(data, label)
    return text, label, findings + more


def skipped_preamble(rows: Sequence[tuple[int, list[str]]], header_index: int, label: str) -> list[Finding]:
    if header_index <= 0:
        return []
    return [Finding("info", "preamble", f"skipped {header_index} line(s) before the CSV header (tool messages)", label, rows[0][0], header_index)]


def bad_rows_finding(bad: list[int], expected: int, label: str, what: str = "rows") -> list[Finding]:
    if not bad:
        return []
    return [Finding("warning", "malformed", f"skipped {len(bad)} {what} whose field count differs from the {expected}-column header (first at line {bad[0]})", label, bad[0], len(bad))]


def not_numeric_finding(counts: dict[str, list[int]], label: str) -> list[Finding]:
    out = []
    for column, lines in counts.items():
        if lines:
            out.append(Finding("warning", "not-numeric", f"{len(lines)} value(s) in column `{column}` are not numbers; left unknown (first at line {lines[0]})", label, lines[0], len(lines)))
    return out


def no_rows(result: KernelRead, label: str) -> KernelRead:
    """`result`, with a warning when a header was found but no data row under it was read."""
    if len(result.table) or any(f.severity != "info" for f in result.findings) or "nvtx" in result.meta:
        return result
    finding = Finding("warning", "no-rows", "the report has a header but no data rows", label)
    return KernelRead(result.table, result.findings + [finding], result.unavailable, result.meta)


def failed_read(label: str, findings: list[Finding], unavailable: Iterable[str] = (), source: str = "nsys") -> KernelRead:
    return KernelRead(empty(source), findings, tuple(unavailable), {})


def read_csv_export(path: str | os.PathLike[str], label: str | None, parse_csv: Any, source: str) -> KernelRead:
    """The shared shell of the CSV readers (ncu, nvprof): load the text, parse, keep the load's
    findings (encoding...) in front of the parser's. Never raises on bad content."""
    text, label, findings = load_text(path, label)
    if text is None:
        return failed_read(label, findings, source=source)
    result = parse_csv(text, label)
    return KernelRead(result.table, findings + result.findings, result.unavailable, result.meta)
