"""Provides `read_head` and `read_all`: a table file (CSV, TSV, Parquet, JSON, JSON lines) as a frame.

The table view shows the head at once and reads the rest in the background, so the head is
read apart: the first `HEAD_BYTES` of a text table cut at the last whole line, the first batch
of a Parquet file. The full read stops at the limits of `parsers.textfile` (64 MB of text,
1,000,000 rows): past them the rows read so far are kept and a finding says so, never more
memory. Text cells are kept as written (`143.9 ± 0.0`, `007`), so the view shows the file's own
text; `tui.model.table_model` reads the numbers. Problems are findings, never exceptions.
"""

from __future__ import annotations

import io
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers import textfile

HEAD_BYTES = 64 * 1024
"""What the first screen is read from: a few hundred rows of a typical result CSV."""
HEAD_ROWS = 500
"""Parquet rows read for the first screen."""
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet",
            ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}
"""Format by file name (a `.gz` after it is looked through); anything else is read as CSV."""


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


def table_format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return SUFFIXES.get(suffixes[-1] if suffixes else "", "csv")


def _failed(findings: list[Finding], read: int = 0) -> TableRead:
    return TableRead(pd.DataFrame(), True, 0, read, tuple(findings))


def read_head(path: Path) -> TableRead:
    """The first rows, from at most `HEAD_BYTES` of text (or one Parquet batch)."""
    return _read(path, HEAD_BYTES, HEAD_ROWS)


def read_all(path: Path) -> TableRead:
    """Every row, up to the size and row limits of `parsers.textfile`."""
    return _read(path, textfile.MAX_BYTES, textfile.MAX_LINES)


def _read(path: Path, max_bytes: int, max_rows: int) -> TableRead:
    label = textfile.display_name(path)
    fmt = table_format(path)
    if fmt == "parquet":
        return _read_parquet(path, label, max_rows)
    data, findings = textfile.head(path, label, max_bytes + 1)
    if data is None:
        return _failed(findings)
    if not data.strip():
        return _failed([Finding("error", "empty", "file is empty", label)])
    if textfile.looks_binary(data[: textfile.SNIFF_BYTES]):
        return _failed([Finding("error", "binary", "binary file, not a table", label)], len(data))
    complete = len(data) <= max_bytes
    if not complete:
        data = data[: data.rfind(b"\n", 0, max_bytes) + 1]  # whole lines only
    if fmt == "json":
        return _read_json(data, complete, label, max_bytes)
    if fmt == "jsonl":
        return _read_jsonl(data, complete, label, max_rows)
    return _read_delimited(data, complete, label, "\t" if fmt == "tsv" else _delimiter(data), max_rows, max_bytes)


def _delimiter(data: bytes) -> str:
    """Comma unless the header line has more tabs or semicolons than commas."""
    first = data[: data.find(b"\n")] if b"\n" in data else data
    counts = {sep: first.count(sep.encode()) for sep in (",", "\t", ";")}
    return max(counts, key=lambda sep: (counts[sep], sep == ","))


def _cut_note(complete: bool, rows: int, label: str, max_bytes: int) -> list[Finding]:
    if complete or max_bytes < textfile.MAX_BYTES:
        return []
    return [Finding("warning", "huge", f"only the first {rows:,} rows are read: the file is over the "
                    f"{max_bytes // textfile.MB} MB limit (GPUSCOPE_MAX_FILE_MB raises it)", label)]


def _read_delimited(data: bytes, complete: bool, label: str, sep: str, max_rows: int, max_bytes: int) -> TableRead:
    findings: list[Finding] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False, on_bad_lines="warn",
                                encoding_errors="replace", nrows=max_rows + 1, skip_blank_lines=True)
        except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeError) as error:
            return _failed([Finding("error", "unreadable", f"not a readable table: {error}", label)], len(data))
    bad = sum(1 for w in caught if issubclass(w.category, pd.errors.ParserWarning))
    if bad:
        findings.append(Finding("warning", "ragged", "rows with more fields than the header were skipped", label, count=bad))
    if len(frame) > max_rows:
        frame, complete = frame.iloc[:max_rows], False
        if max_rows >= textfile.MAX_LINES:
            findings.append(textfile.too_many_lines(max_rows + 1, max_rows, label, "rows"))
    findings += _cut_note(complete, len(frame), label, max_bytes)
    frame.columns = _names(frame.columns)
    return TableRead(frame, complete, len(frame) if complete else None, len(data), tuple(findings))


def _names(columns: Any) -> list[str]:
    """Column names as unique strings (pandas allows `1` and two `a`)."""
    out: list[str] = []
    for name in map(str, columns):
        base, n = name, 1
        while name in out:
            n += 1
            name = f"{base} ({n})"
        out.append(name)
    return out


def _cell(value: Any) -> Any:
    """Nested JSON values (lists, objects) as their JSON text, so every cell is a scalar."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value


def _records(items: list[Any], label: str) -> pd.DataFrame:
    if all(isinstance(item, dict) for item in items):
        return pd.DataFrame.from_records([{str(k): _cell(v) for k, v in item.items()} for item in items])
    if not any(isinstance(item, (dict, list)) for item in items):
        return pd.DataFrame({"value": items})
    raise ValueError("a list mixing objects and other values")


def frame_from_json(value: Any, label: str) -> tuple[pd.DataFrame, list[Finding]]:
    """A JSON document as a table: a list of records, an object of equal-length columns, an
    object holding one such list, or a flat object (one row per key). Else a finding."""
    notes: list[Finding] = []
    if isinstance(value, dict):
        lists = {k: v for k, v in value.items() if isinstance(v, list)}
        if value and len(lists) == len(value) and len({len(v) for v in lists.values()}) == 1:
            return pd.DataFrame({str(k): [_cell(x) for x in v] for k, v in lists.items()}), notes
        records = [k for k, v in lists.items() if v and all(isinstance(x, dict) for x in v)]
        if len(records) == 1:
            notes.append(Finding("info", "nested", f"the table is the list under {records[0]!r}", label))
            return _records(value[records[0]], label), notes
        if value and not any(isinstance(v, (dict, list)) for v in value.values()):
            return pd.DataFrame({"key": [str(k) for k in value], "value": list(value.values())}), notes
    if isinstance(value, list):
        try:
            return _records(value, label), notes
        except ValueError as error:
            return pd.DataFrame(), [Finding("error", "schema", f"not a table: {error}", label)]
    shape = type(value).__name__ if not isinstance(value, dict) else "an object of nested values"
    return pd.DataFrame(), [Finding("error", "schema", f"not a table: the JSON holds {shape}, not records or columns", label)]


def _read_json(data: bytes, complete: bool, label: str, max_bytes: int) -> TableRead:
    if not complete:
        if max_bytes < textfile.MAX_BYTES:  # a head: JSON is read whole, by `read_all`
            return TableRead(pd.DataFrame(), False, None, 0)
        return _failed([Finding("error", "huge", f"JSON over the {max_bytes // textfile.MB} MB limit for a table "
                                "(GPUSCOPE_MAX_FILE_MB raises it; JSON lines can be read in part)", label)], len(data))
    text, findings = textfile.decode(data, label)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        return _failed(findings + [Finding("error", "unreadable", f"not valid JSON: {error}", label)], len(data))
    frame, more = frame_from_json(value, label)
    frame.columns = _names(frame.columns)
    return TableRead(frame, True, len(frame), len(data), tuple(findings + more))


def _read_jsonl(data: bytes, complete: bool, label: str, max_rows: int) -> TableRead:
    text, findings = textfile.decode(data, label)
    rows, bad = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if len(rows) >= max_rows:
            complete = False
            break
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            continue
        if isinstance(row, dict):
            rows.append({str(k): _cell(v) for k, v in row.items()})
        else:
            bad += 1
    if bad:
        findings.append(Finding("warning", "unreadable", "lines that are not JSON objects were skipped", label, count=bad))
    frame = pd.DataFrame.from_records(rows)
    frame.columns = _names(frame.columns)
    return TableRead(frame, complete, len(frame) if complete else None, len(data), tuple(findings))


def _read_parquet(path: Path, label: str, max_rows: int) -> TableRead:
    import pyarrow as pa
    import pyarrow.parquet as pq

    problem = textfile.check_regular(path, label)
    if problem is not None:
        return _failed([problem])
    try:
        parquet = pq.ParquetFile(path)
        total = parquet.metadata.num_rows
        batches, rows = [], 0
        for batch in parquet.iter_batches(batch_size=min(max_rows, 65536)):
            batches.append(batch.slice(0, max_rows - rows))
            rows += len(batches[-1])
            if rows >= max_rows:
                break
        table = pa.Table.from_batches(batches) if batches else parquet.schema_arrow.empty_table()
        frame = table.to_pandas()
    except (OSError, ValueError, pa.ArrowException) as error:
        return _failed([Finding("error", "unreadable", f"not a readable Parquet file: {error}", label)])
    frame = frame.map(_cell) if any(frame[c].dtype == object for c in frame.columns) else frame
    frame.columns = _names(frame.columns)
    complete = rows >= total
    findings = [] if complete or max_rows < textfile.MAX_LINES else [textfile.too_many_lines(total, max_rows, label, "rows")]
    return TableRead(frame, complete, total, 0, tuple(findings))
