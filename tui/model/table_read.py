"""Provides `read_head` and `read_all`: a table file as a frame, the first screen apart.

The table view shows the head at once and reads the rest in the background. The whole table
is what the registry reads (`parsers.registry.read`: CSV / TSV / JSON / Parquet through
`parsers.generic_tables`, `expected.toml` as its checks), so the rows the view shows are the
rows `gpuscope check` numbers when it marks a cell. The head is parsed by the same functions
from the first `HEAD_BYTES` of a delimited file cut at its last whole line, or from the first
batch of a Parquet file; JSON has no head (it is one document) and waits for the full read.
A delimited file over the size limit keeps its first `MAX_BYTES` of rows, a Parquet file over the
row limit or the budget for decoded data its first rows (a partial result, said in a finding)
instead of nothing. Problems are findings, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers import parquet_read, registry
from gpuscope.parsers import tables as generic_tables
from gpuscope.parsers import files as textfile

HEAD_BYTES = 64 * 1024
"""What the first screen is read from: a few hundred rows of a typical result CSV."""
HEAD_ROWS = 500
"""Parquet rows read for the first screen."""
PARQUET_MAGIC = b"PAR1"


@dataclass(frozen=True)
class TableRead:
    """Rows read from one file and how much of the file they are."""

    frame: pd.DataFrame
    complete: bool
    """Every row of the file is in `frame` (False for a head, or a file cut at a limit)."""
    total_rows: int | None = None
    """Rows in the whole file when known (Parquet says at once; text only once read)."""
    bytes_read: int = 0
    findings: tuple[Finding, ...] = field(default=())
    final: bool = True
    """No more rows will come (False for a head: the full read follows)."""


def _kind(path: Path, head: bytes) -> str:
    """'parquet', 'json' or 'delimited', as `generic_tables.read` decides."""
    if head[:4] == PARQUET_MAGIC:
        return "parquet"
    suffix = generic_tables._suffix(path)
    if suffix in (".json", ".jsonl") or head.lstrip()[:1] in (b"[", b"{"):
        return "json"
    return "delimited"


def read_head(path: Path) -> TableRead:
    """The first rows, from at most `HEAD_BYTES` (or one Parquet batch); an empty, incomplete
    read when the file has no head to show (JSON) or cannot be read (the full read says why)."""
    label = textfile.display_name(path)
    data, findings = textfile.head(path, label, HEAD_BYTES + 1)
    if data is not None and data[:4] == PARQUET_MAGIC:
        return _parquet_head(path)
    if data is None or not data.strip() or textfile.looks_binary(data):
        return TableRead(pd.DataFrame(), False, final=False)
    kind = _kind(path, data)
    if kind == "json" or len(data) <= HEAD_BYTES:
        return TableRead(pd.DataFrame(), False, bytes_read=len(data), final=False)  # a small file: read_all is as quick
    return _delimited(path, data[: data.rfind(b"\n", 0, HEAD_BYTES) + 1], label, complete=False, final=False)


def _delimited(path: Path, data: bytes, label: str, complete: bool, final: bool = True, note: list[Finding] | None = None) -> TableRead:
    text, findings = textfile.decode(data, label)
    frame, more = generic_tables.parse_csv(text, label, generic_tables._suffix(path))
    if frame is None:
        return TableRead(pd.DataFrame(), complete, 0, len(data), tuple(findings + more), final)
    return TableRead(frame, complete, len(frame) if complete else None, len(data), tuple((note or []) + findings + more), final)


def _parquet_head(path: Path) -> TableRead:
    """The first `HEAD_ROWS`, read as the full read does (within the budget for decoded data)."""
    import pyarrow as pa

    try:
        table, total, _ = parquet_read.read_budgeted(str(path), textfile.display_name(path), max_rows=HEAD_ROWS)
        if table is None:
            return TableRead(pd.DataFrame(), False, final=False)  # the full read says why
        frame = table.to_pandas()
    except (OSError, ValueError, pa.ArrowException, MemoryError):
        return TableRead(pd.DataFrame(), False, final=False)  # the full read says why
    return TableRead(frame, len(frame) >= total, total, final=len(frame) >= total)


def read_all(path: Path) -> TableRead:
    """Every row, as the registry reads the file; over the size limit, a delimited file's
    first `MAX_BYTES` of rows."""
    label = textfile.display_name(path)
    got = registry.read(path)
    findings = list(got.findings)
    if got.table is not None:  # a file over the limits may give its first rows: a "partial" finding counts the rest
        total = len(got.table) + sum(f.count or 0 for f in findings if f.kind == "partial")
        return TableRead(got.table, total == len(got.table), total, 0, tuple(findings))
    if any(f.kind == "huge" for f in findings):
        data, _ = textfile.head(path, label, textfile.MAX_BYTES)
        if data and not textfile.looks_binary(data[: textfile.SNIFF_BYTES]) and _kind(path, data) == "delimited":
            data = data[: data.rfind(b"\n") + 1]
            note = Finding("warning", "huge", f"only the rows in the first {textfile._human(len(data))} are read: the file is over the "
                           "size limit (GPUSCOPE_MAX_FILE_MB raises it)", label)
            return _delimited(path, data, label, complete=False, note=[note])
    return TableRead(pd.DataFrame(), True, 0, 0, tuple(findings))
