"""Provides `read()`: NVIDIA PyProf kernel tables (Parquet, `prof.py --csv`, `prof.py -w`) as the
canonical kernel table.

Formats (shared/research/profile-anchors.md §1):
* Parquet with PyProf's headers as column names (Idx, TId, Layer, Direction, Module, Op, Kernel,
  Params, Sil(ns), TC, Device, Stream, Grid, Block, FLOPs, Bytes). Such files are often named
  `.gzip`; they are recognised by the `PAR1` magic, never by the extension.
* `prof.py --csv`: any subset of its columns, every field double-quoted, no escaping; FLOPs and
  Bytes may print as floats (`"90816.0"`); NVTX or warning lines may come before the header.
* `prof.py -w WIDTH`: fixed-width columns; headers are cut to the column width (`Dev`, `Str`,
  `Direc`), strings are cut too (so kernel names may be truncated).
* Without `--csv`/`-w`, prof.py joins fields with single spaces; that is read like `-w` output.

Mapping: Kernel -> kernel, Sil(ns) -> duration_ns, FLOPs -> flops, Bytes -> bytes, Op -> op,
Direction -> direction, Device -> device, Stream -> stream. PyProf has no launch time, so
`start_ns` is always unavailable. Other PyProf columns are kept after the canonical ones
(idx, seq_id, alt_seq_id, tid, layer, trace, sub, module, params, tc, grid, block, ...).
PyProf's FLOPs/Bytes are analytic; 0 means "not modelled", not "no arithmetic" (§1.4).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.profilers.csv_common import is_code
from gpuscope.parsers.profilers.kernel_table import KernelRead, canonical, empty, file_read
from gpuscope.parsers.parquet_read import read_budgeted
from gpuscope.parsers.files import MAX_LINES, SNIFF_BYTES, decode, describe_rows, display_name, head_bytes, head_text, looks_binary, read_raw, too_many_lines

PARQUET_MAGIC = b"PAR1"

# PyProf header -> our column name. Order is prof.py's `Output.table` order.
HEADERS: dict[str, str] = {
    "Idx": "idx", "SeqId": "seq_id", "AltSeqId": "alt_seq_id", "callid": "callid",
    "input_callids": "input_callids", "unique_name": "unique_name", "TId": "tid", "Layer": "layer",
    "Trace": "trace", "Direction": "direction", "Sub": "sub", "Module": "module", "Op": "op",
    "Kernel": "kernel", "KernelLName": "kernel_long_name", "Params": "params", "Sil(ns)": "duration_ns",
    "TC": "tc", "Device": "device", "Stream": "stream", "Grid": "grid", "Block": "block",
    "FLOPs": "flops", "Bytes": "bytes",
}
# prof.py `-c` keys, accepted as column names too (some exports use them).
KEYS: dict[str, str] = {
    "idx": "Idx", "seq": "SeqId", "altseq": "AltSeqId", "tid": "TId", "layer": "Layer", "trace": "Trace",
    "dir": "Direction", "sub": "Sub", "mod": "Module", "op": "Op", "kernel": "Kernel",
    "kernel_lname": "KernelLName", "params": "Params", "sil": "Sil(ns)", "tc": "TC", "device": "Device",
    "stream": "Stream", "grid": "Grid", "block": "Block", "flops": "FLOPs", "bytes": "Bytes",
}
NEEDED = ("Kernel", "Sil(ns)", "FLOPs", "Bytes")
"""Columns the efficiency metrics need; a file without one gets a finding naming it."""
NUMERIC = ("idx", "tid", "sub", "duration_ns", "device", "stream", "flops", "bytes")
INTEGER_COLUMNS = ("idx", "tid", "sub", "device", "stream")
NULL_WORDS = frozenset({"", "-", "na", "n/a", "nan", "none", "null", "<na>"})
UNAVAILABLE = ("start_ns",)
EXPECTED = ('PyProf Parquet, `prof.py --csv` (quoted header such as "Kernel","Sil(ns)","FLOPs","Bytes") '
            "or `prof.py -w WIDTH` columnated text")


def _header_name(name: object) -> str | None:
    """The PyProf header a column name stands for (exact header, `-c` key, or case-insensitive)."""
    text = str(name).strip()
    if text in HEADERS:
        return text
    if text in KEYS:
        return KEYS[text]
    lower = text.lower()
    for header in HEADERS:
        if header.lower() == lower:
            return header
    return KEYS.get(lower)


def _prefix_header(token: str) -> str | None:
    """A `-w` header token (possibly cut to its column width) -> the PyProf header."""
    exact = _header_name(token)
    if exact is not None:
        return exact
    if len(token) < 2:
        return None
    for header in HEADERS:  # table order: Kernel before KernelLName
        if header.startswith(token):
            return header
    return None


def _missing_findings(headers: list[str], label: str, fmt: str) -> list[Finding]:
    out = []
    for name in NEEDED:
        if name not in headers:
            out.append(Finding("warning", "missing-column",
                               f"no '{name}' column in this {fmt} file (has: {', '.join(headers) or 'none'}); "
                               f"expected {EXPECTED}; '{HEADERS[name]}' is null, so efficiencies that need it cannot be computed",
                               label))
    return out


def _typed(frame: pd.DataFrame, label: str) -> tuple[pd.DataFrame, list[Finding]]:
    """Numeric columns converted; words like '-' and 'na' become null silently, other junk with a finding.
    Whole columns at a time in numpy: a profile can hold millions of launches."""
    findings: list[Finding] = []
    for column in NUMERIC:
        if column not in frame:
            continue
        raw = frame[column]
        if column in INTEGER_COLUMNS and raw.dtype == np.int64:  # Parquet's whole numbers, no nulls: kept exact
            huge = np.abs(raw.to_numpy()) > 2**62
            if huge.any():
                findings.append(Finding("warning", "bad-number",
                                        f"{int(huge.sum())} value(s) in column '{column}' are not whole numbers; read as null",
                                        label, count=int(huge.sum())))
            frame[column] = pd.arrays.IntegerArray(np.where(huge, 0, raw.to_numpy()), huge)
            continue
        if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
            numbers = raw.to_numpy(dtype=float, na_value=np.nan)  # Parquet's columns: already numbers
        else:
            numbers = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            junk = np.isnan(numbers) & raw.notna().to_numpy()
            if junk.any():  # only the values that are not numbers can be null words
                text = raw[junk].astype("string").str.strip().str.lower()
                junk[junk] = ~text.isin(NULL_WORDS).to_numpy(dtype=bool, na_value=False)
            if junk.any():
                example = str(raw[junk].iloc[0])[:40]
                findings.append(Finding("warning", "bad-number",
                                        f"{int(junk.sum())} value(s) in column '{column}' are not numbers (e.g. {example!r}); read as null",
                                        label, count=int(junk.sum())))
        null = ~np.isfinite(numbers)  # NaN and the infinities
        if column in INTEGER_COLUMNS:
            with np.errstate(invalid="ignore"):
                odd = ~null & ((numbers % 1 != 0) | (np.abs(numbers) > 2**62))
            if odd.any():
                findings.append(Finding("warning", "bad-number",
                                        f"{int(odd.sum())} value(s) in column '{column}' are not whole numbers; read as null",
                                        label, count=int(odd.sum())))
            null |= odd
            frame[column] = pd.arrays.IntegerArray(np.where(null, 0, np.round(numbers)).astype(np.int64), null)
            continue
        if column == "duration_ns":
            bad = ~null & (numbers <= 0)
            if bad.any():
                findings.append(Finding("warning", "zero-duration",
                                        f"{int(bad.sum())} kernel row(s) have a Sil(ns) of zero or less; efficiencies exclude them",
                                        label, count=int(bad.sum())))
        if column in ("flops", "bytes"):
            negative = ~null & (numbers < 0)
            if negative.any():
                findings.append(Finding("warning", "negative",
                                        f"{int(negative.sum())} row(s) have negative {column}; read as null",
                                        label, count=int(negative.sum())))
                null |= negative
        frame[column] = pd.arrays.FloatingArray(np.where(null, 0.0, numbers), null)
    for column in frame.columns:
        if column not in NUMERIC and column not in ("kernel", "op", "direction"):
            if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column].dtype):
                frame[column] = frame[column].astype(pd.StringDtype())
    return frame, findings


def _finish(frame: pd.DataFrame, headers: list[str], label: str, fmt: str, findings: list[Finding],
            meta: dict) -> KernelRead:
    frame, more = _typed(frame, label)
    findings = findings + _missing_findings(headers, label, fmt) + more
    if "device" in frame:
        frame["device"] = frame["device"].astype(pd.StringDtype())
    table = canonical(frame, label)
    if table.empty:
        findings.append(Finding("warning", "no-rows", f"{fmt} file has a header but no kernel rows", label))
    meta = {"format": fmt, "columns": headers, **meta}
    return KernelRead(table=table, findings=findings, unavailable=UNAVAILABLE, meta=meta)


def _error(label: str, kind: str, message: str) -> KernelRead:
    return KernelRead(table=empty(label), findings=[Finding("error", kind, message, label)],
                      unavailable=UNAVAILABLE, meta={})


# --- Parquet -----------------------------------------------------------------------------------

def _read_parquet(data: bytes, label: str, columns: Sequence[str] | None) -> KernelRead:
    if len(data) < 12 or data[-4:] != PARQUET_MAGIC:
        return _error(label, "corrupt", "Parquet file is truncated or corrupt (no PAR1 footer)")
    import pyarrow.parquet as pq  # Parquet only: text profiles never need it

    try:
        # the header from the footer alone: the findings name every column, read or not
        names = pq.read_schema(io.BytesIO(data)).names
        headers: list[str] = []
        rename: dict[str, str] = {}
        for column in names:
            header = _header_name(column)
            if header is not None and header not in headers:
                headers.append(header)
                rename[column] = HEADERS[header]
        wanted = None if columns is None else [c for c, ours in rename.items() if ours in columns]
        # up to the row limit and the budget for decoded data: a small file can decode to gigabytes
        table, total, findings = read_budgeted(io.BytesIO(data), label, columns=wanted)
        if table is None:
            return KernelRead(table=empty(label), findings=findings, unavailable=UNAVAILABLE, meta={})
        frame = table.to_pandas()
    except MemoryError:  # pyarrow's ArrowMemoryError is one too
        return _error(label, "huge", "not enough memory to read it")
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types on corrupt input
        return _error(label, "corrupt", f"Parquet file is corrupt or unreadable ({type(exc).__name__}: {str(exc)[:200]})")
    frame = frame.rename(columns=rename)
    frame = frame.loc[:, ~frame.columns.duplicated()]
    others = [c for c in names if c not in rename and c not in rename.values()]
    if others:
        findings.append(Finding("info", "extra-columns",
                                f"kept columns PyProf does not write: {', '.join(map(str, others))}", label))
    return _finish(frame, headers, label, "Parquet", findings, {"rows_in_file": total})


# --- text --------------------------------------------------------------------------------------

def _split_csv(line: str) -> list[str] | None:
    text = line.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        # prof.py wraps every field in quotes and never escapes, so '","' is the only separator.
        return text[1:-1].split('","')
    if "," not in text:
        return None
    try:
        return next(csv.reader([text]))
    except (csv.Error, StopIteration):
        return None


def _csv_header(line: str) -> list[str] | None:
    fields = _split_csv(line)
    if not fields:
        return None
    names = [_header_name(f) for f in fields]
    if any(n is None for n in names) or len(set(names)) != len(names):
        return None
    if len(names) == 1 and not line.strip().startswith('"'):
        return None
    return names  # type: ignore[return-value]


def _text_header(line: str) -> tuple[list[str], list[int]] | None:
    tokens = [(m.group(), m.start()) for m in re.finditer(r"\S+", line)]
    if len(tokens) < 2:
        return None
    names = [_prefix_header(t) for t, _ in tokens]
    if any(n is None for n in names) or len(set(names)) != len(names):
        return None
    return names, [start for _, start in tokens]  # type: ignore[return-value]


def _numeric_ok(values: list[str], headers: list[str]) -> bool:
    for value, header in zip(values, headers):
        if HEADERS[header] in NUMERIC and value.strip().lower() not in NULL_WORDS:
            try:
                float(value)
            except ValueError:
                return False
    return True


def _read_text(text: str, label: str, findings: list[Finding]) -> KernelRead:
    lines = text.splitlines()
    header: list[str] | None = None
    starts: list[int] = []
    fmt = ""
    at = 0
    for at, line in enumerate(lines):  # noqa: B007 (at is read after the loop: the header line)
        if not line.strip():
            continue
        header = _csv_header(line)
        if header is not None:
            fmt = "csv"
            break
        found = _text_header(line)
        if found is not None:
            header, starts = found
            fmt = "columnated"
            break
    if header is None:
        return KernelRead(table=empty(label), findings=findings + [Finding(
            "error", "no-header", f"no PyProf header line found in {len(lines)} line(s); expected {EXPECTED}", label)],
            unavailable=UNAVAILABLE, meta={})
    noise = sum(1 for line in lines[:at] if line.strip())
    if noise:
        findings.append(Finding("info", "preamble",
                                f"skipped {noise} line(s) before the PyProf header (NVTX or log output)", label, 1, count=noise))
    rows: list[list[str]] = []
    skipped: list[int] = []
    repeated = 0
    width = len(header)
    for number, line in enumerate(lines[at + 1:], start=at + 2):
        if not line.strip():
            continue
        if fmt == "csv":
            fields = _split_csv(line)
            if fields is not None and len(fields) == width and _csv_header(line) == header:
                repeated += 1
                continue
            if fields is None or len(fields) != width or not _numeric_ok(fields, header):
                skipped.append(number)
                continue
        else:
            if _text_header(line) is not None and _text_header(line)[0] == header:  # type: ignore[index]
                repeated += 1
                continue
            fields = line.split()
            if len(fields) != width or not _numeric_ok(fields, header):
                if len(line.rstrip()) <= starts[-1]:
                    skipped.append(number)
                    continue
                bounds = starts[1:] + [len(line)]
                fields = [line[a:b].strip() for a, b in zip(starts, bounds)]
                if not _numeric_ok(fields, header):
                    skipped.append(number)
                    continue
        rows.append(fields)
    if skipped:
        what = f"the header's {width} quoted field(s)" if fmt == "csv" else f"the header's {width} column(s)"
        findings.append(Finding("warning", "skipped-lines",
                                f"skipped {len(skipped)} line(s) after the header that do not have {what} "
                                f"with numbers where numbers belong (first at line {skipped[0]})",
                                label, skipped[0], count=len(skipped)))
    if repeated:
        findings.append(Finding("info", "repeated-header", f"skipped {repeated} repeated header line(s)", label, count=repeated))
    frame = pd.DataFrame(rows, columns=[HEADERS[h] for h in header], dtype=object)
    frame = frame.apply(lambda col: col.str.strip().replace("", None)) if len(frame) else frame
    meta: dict = {"header_line": at + 1}
    if fmt == "columnated" and "Kernel" in header:
        meta["kernel_width"] = _column_width(header, starts, "Kernel")
        findings.append(Finding("info", "truncated-names",
                                f"columnated (-w) output cuts kernel names to {meta['kernel_width']} characters; "
                                "kernels that share a prefix are merged when grouped by name", label))
    return _finish(frame, header, label, fmt, findings, meta)


def _column_width(header: list[str], starts: list[int], name: str) -> int | None:
    i = header.index(name)
    return starts[i + 1] - starts[i] - 1 if i + 1 < len(starts) else None


# --- the file kind -----------------------------------------------------------------------------

KIND = "pyprof"
TITLE = "PyProf kernel table"
VIEW = "kernels"
BOUNDED = True
"""The Parquet export is read within the decoded-data budget; `--csv` / `-w` text is read whole,
within the full-read limit (a larger one is a `huge` finding when it is read)."""
PYPROF_COLUMNS = (b"Sil(ns)", b"Kernel")
"""PyProf's Parquet export has these columns; they show in the head only when the whole file
(and so its footer, where Parquet keeps the schema) fits in it."""


def match_parquet(name: str, head: Head) -> str | None:
    data = head_bytes(head)
    if not data.startswith(PARQUET_MAGIC):
        return None
    whole = data.endswith(PARQUET_MAGIC) and len(data) > 8
    if all(c in data for c in PYPROF_COLUMNS):
        return "PAR1 magic and PyProf columns (Kernel, Sil(ns)): PyProf Parquet"
    if not whole and name.lower().endswith(".gzip"):
        # PyProf saves with to_parquet(compression="gzip") under a .gzip name; the schema is in
        # the footer, past the head, so the name is the clue.
        return "PAR1 magic under a .gzip name: PyProf's Parquet export"
    return None


def match_text(name: str, head: Head) -> str | None:
    if is_code(name):
        return None
    text = head_text(head)
    if "Sil(ns)" in text:
        return "`Sil(ns)` column: PyProf"
    if '"Kernel"' in text and '"Op"' in text:
        return "`Kernel` and `Op` columns: PyProf CSV"
    if "Kernel" in text and "FLOPs" in text:
        return "`Kernel` and `FLOPs` columns: PyProf"
    return None


def match(name: str, head: Head) -> str | None:
    if head_bytes(head).startswith(PARQUET_MAGIC):  # Parquet that is not PyProf's is the generic kind's
        return match_parquet(name, head)
    return match_text(name, head)


def describe(head: Head, size: int) -> str:
    return "PyProf Parquet" if head_bytes(head).startswith(PARQUET_MAGIC) else describe_rows(head, size)


def read(path: Path, columns: Sequence[str] | None = None) -> FileRead:
    return file_read(read_kernels(path, columns=columns))


def read_kernels(path: str | Path, label: str | None = None, columns: Sequence[str] | None = None) -> KernelRead:
    """PyProf kernel rows from `path` (Parquet, `--csv` or `-w` text) plus findings; never raises
    on bad content. `columns`: the canonical columns wanted (None: all); Parquet reads only
    those (the others are null), text is read whole."""
    label = label if label is not None else display_name(path)
    data, findings = read_raw(path, label)
    if data is None:
        return KernelRead(table=empty(label), findings=findings, unavailable=UNAVAILABLE, meta={})
    if data[:4] == PARQUET_MAGIC:
        return _read_parquet(data, label, columns)
    if not data or data.isspace():
        return _error(label, "empty", "file is empty")
    if looks_binary(data[:SNIFF_BYTES]):
        return _error(label, "binary", f"binary file that is not Parquet (no PAR1 magic); expected {EXPECTED}")
    lines = data.count(b"\n")
    if lines > MAX_LINES:
        return KernelRead(table=empty(label), findings=[too_many_lines(lines, MAX_LINES, label)], unavailable=UNAVAILABLE, meta={})
    text, findings = decode(data, label)
    try:
        return _read_text(text, label, list(findings))
    except MemoryError:
        return _error(label, "huge", "not enough memory to read it")
