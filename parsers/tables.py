"""Provides generic tables: CSV / TSV, Parquet and JSON (records or columns) as one DataFrame.

For the files a result folder holds that no specialist reader knows: per-system summaries,
cross-system tables, JSON lists of run records. Cells stay as written (`143.9 ± 0.0` is text
here; metrics/cells reads it as a number where a view needs one). The same limits as every
reader apply (parsers/textfile: size, lines, binary, encoding), Parquet is refused over the
row limit before it is loaded, and what is skipped (bad CSV lines, JSON that is not a table)
is a finding, never an exception.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.parquet_read import read_budgeted
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.files import check_regular, display_name, read_text

DELIMITERS = (",", "\t", ";", "|")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def sniff_delimiter(first_line: str, suffix: str = "") -> str:
    """Tab for .tsv; else the delimiter the header line holds most of (comma when none)."""
    if suffix == ".tsv":
        return "\t"
    counts = {d: first_line.count(d) for d in DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def parse_csv(text: str, label: str, suffix: str = "") -> tuple[pd.DataFrame | None, list[Finding]]:
    """A delimited table; lines with the wrong number of fields are skipped and counted."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if not first:
        return None, [Finding("error", "empty", "file is empty", label)]
    sep = sniff_delimiter(first, suffix)
    findings: list[Finding] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = pd.read_csv(io.StringIO(text), sep=sep, on_bad_lines="warn", skip_blank_lines=True, dtype_backend="numpy_nullable")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeError, OverflowError) as exc:
            return None, [Finding("error", "bad-table", f"not a readable delimited table: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", label)]
    skipped = sum(str(w.message).count("Skipping line") for w in caught)
    if skipped:
        findings.append(Finding("warning", "bad-line", f"{skipped} line(s) with the wrong number of fields skipped", label, count=skipped))
    table.columns = [str(c).strip().lstrip("\ufeff") for c in table.columns]
    return table, findings


def _json_table(value: Any, label: str) -> tuple[pd.DataFrame | None, list[Finding]]:
    """Records (a list of objects), columns (an object of equal-length lists, or of objects
    keyed by row: pandas' `orient="columns"`), pandas' `orient="split"`, or one record."""
    if isinstance(value, list):
        records = [v for v in value if isinstance(v, dict)]
        if not value:
            return pd.DataFrame(), [Finding("info", "empty", "an empty JSON list", label)]
        if not records:
            if all(not isinstance(v, (list, dict)) for v in value):
                return pd.DataFrame({"value": value}), []
            return None, [Finding("warning", "not-a-table", "a JSON list of lists: not records gpuscope can tabulate", label)]
        findings = []
        if len(records) < len(value):
            findings.append(Finding("warning", "bad-record", f"{len(value) - len(records)} list item(s) are not objects; skipped", label, count=len(value) - len(records)))
        return pd.json_normalize(records, max_level=1), findings
    if isinstance(value, dict):
        lists = {k: v for k, v in value.items() if isinstance(v, list)}
        if lists and len(lists) == len(value) and len({len(v) for v in lists.values()}) == 1 \
                and all(not isinstance(x, (list, dict)) for v in lists.values() for x in v):
            return pd.DataFrame(lists), []
        if value and all(isinstance(v, dict) for v in value.values()) and len({tuple(v) for v in value.values()}) == 1 \
                and all(not isinstance(x, (list, dict)) for v in value.values() for x in v.values()):
            return pd.DataFrame({k: list(v.values()) for k, v in value.items()}), []  # {column: {row: value}}
        if set(value) >= {"columns", "data"} and isinstance(value["columns"], list) and isinstance(value["data"], list) \
                and all(isinstance(r, list) and len(r) == len(value["columns"]) for r in value["data"]):
            return pd.DataFrame(value["data"], columns=[str(c) for c in value["columns"]]), []  # orient="split"
        for key in ("records", "data", "results", "rows", "runs"):  # a common wrapper around records
            inner = value.get(key)
            if isinstance(inner, list) and inner and all(isinstance(v, dict) for v in inner):
                table, findings = _json_table(inner, label)
                return table, [Finding("info", "nested", f"records read from the `{key}` key", label), *findings]
        flat = pd.json_normalize(value, max_level=1)
        return pd.DataFrame({"key": list(flat.columns), "value": [str(v) for v in flat.iloc[0].tolist()]}), []
    return pd.DataFrame({"value": [value]}), []


def parse_json(text: str, label: str) -> tuple[pd.DataFrame | None, list[Finding]]:
    """JSON (or JSON lines, one object per line) as a table."""
    try:
        value: Any = json.loads(text)
    except RecursionError:
        return None, [Finding("error", "bad-json", "JSON nested too deeply", label)]
    except ValueError as exc:
        if "Extra data" not in str(exc):
            return None, [Finding("error", "bad-json", f"not valid JSON: {exc}", label)]
        value, bad = [], 0
        for line in text.splitlines():  # JSON lines
            if not line.strip():
                continue
            try:
                value.append(json.loads(line))
            except (ValueError, RecursionError):
                bad += 1
        if bad:
            table, findings = _json_table(value, label)
            return table, [Finding("warning", "bad-line", f"{bad} line(s) are not JSON; skipped", label, count=bad), *findings]
    return _json_table(value, label)


def read_parquet(path: Path, label: str) -> tuple[pd.DataFrame | None, list[Finding]]:
    """The rows of a Parquet file, up to the row limit and the budget for decoded data (a small
    file can decode to gigabytes: parsers/parquet_read); what is left unread is a finding."""
    import pyarrow as pa

    problem = check_regular(path, label)
    if problem is not None:
        return None, [problem]
    try:
        table, _, findings = read_budgeted(str(path), label)
        return (table.to_pandas() if table is not None else None), findings
    except MemoryError:  # pyarrow's ArrowMemoryError is one too
        return None, [Finding("error", "huge", "not enough memory to read it", label)]
    except (OSError, pa.ArrowException, ValueError) as exc:
        return None, [Finding("error", "bad-parquet", f"not a readable Parquet file: {str(exc)[:200]}", label)]


def read(path: str | Path) -> FileRead:
    """A CSV / TSV / JSON / Parquet file as a table, with findings and {"rows", "columns"}."""

    path = Path(path)
    label = display_name(path)
    suffix = _suffix(path)
    try:
        with open(path, "rb") as probe:  # a Parquet file is known by its magic, whatever its name
            magic = probe.read(4) if check_regular(path, label) is None else b""
    except OSError:
        magic = b""
    if magic == b"PAR1":
        table, findings = read_parquet(path, label)
    else:
        text, findings = read_text(path, label)
        if text is None:
            return FileRead(None, findings, {})
        if suffix in (".json", ".jsonl") or text.lstrip()[:1] in ("[", "{"):
            table, more = parse_json(text, label)
        else:
            table, more = parse_csv(text, label, suffix)
        findings = findings + more
    meta = {} if table is None else {"rows": len(table), "columns": len(table.columns)}
    return FileRead(table, findings, meta)
