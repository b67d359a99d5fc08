"""Provides the tokeniser and column mapping for MAGMA data rows, vectorised over all files.

All data rows of all files are tokenised by one call to pandas' C reader (after `(` and `)`
become spaces, `---` means "not computed"). When the fast reader and the line count disagree
(a stray quote, a line of hundreds of tokens) the rows are tokenised by a plain Python split
instead, which is slower but cannot be confused; both give the same frame.
"""

from __future__ import annotations

import csv
import io
import warnings

import numpy as np
import pandas as pd
from pandas.api.types import is_numeric_dtype

from gpuscope.parsers.magma_header import HeaderSpec

WIDTH = 16
"""Tokens per row: MAGMA rows have at most 13. A longer line makes the fast reader fail, and
that file alone is then read by the slow one (which keeps the first 16 tokens)."""
PARENS = bytes.maketrans(b"()", b"  ")
STATUS = ("ok", "failed")


def _read_fast(rows: bytes) -> pd.DataFrame:
    return pd.read_csv(
        io.BytesIO(rows.translate(PARENS)),
        sep=r"\s+",
        header=None,
        names=range(WIDTH),
        index_col=False,  # a longer line must fail, never shift columns into an index
        quoting=csv.QUOTE_NONE,
        na_values=["---"],
        engine="c",
        low_memory=False,
        encoding="utf-8",
        encoding_errors="replace",
    )


def _read_slow(rows: bytes) -> pd.DataFrame:
    text = rows.translate(PARENS).decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pad = [None] * WIDTH
    tokens = [(line.split()[:WIDTH] + pad)[:WIDTH] for line in lines]
    frame = pd.DataFrame(tokens, columns=range(WIDTH), dtype=object)
    for col in frame.columns:
        values = frame[col].replace({"---": None})
        numbers = pd.to_numeric(values, errors="coerce")
        bad = numbers.isna() & values.notna() & ~values.isin(["nan", "-nan", "NaN", "-NaN"])
        frame[col] = values if bad.any() else numbers
    return frame


OK_CODE, FAILED_CODE = -7777777.0, -8888888.0
"""Status words as numbers for the all-numeric reader (MAGMA never prints negative values)."""


def read_numeric(rows: bytes, expected: int) -> pd.DataFrame | None:
    """The fastest path: rows of one tester, all with the same number of tokens, read by numpy
    as floats ('---' = NaN, ok/failed as codes). None when that does not hold (a stray word, a
    row with another token count): the caller then uses `tokenize`."""
    text = rows.translate(PARENS).replace(b"---", b"nan").replace(b" ok", b" -7777777").replace(b" failed", b" -8888888")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an empty input warns; the row count check decides
            values = np.loadtxt(io.BytesIO(text), dtype=np.float64, ndmin=2, comments=None)
    except ValueError:
        return None
    if values.shape[0] != expected or values.shape[1] > WIDTH:
        return None
    return pd.DataFrame(values)


def _tokenize_one(rows: bytes, expected: int) -> pd.DataFrame | None:
    try:
        with warnings.catch_warnings():
            # pandas only warns when the first line is longer than WIDTH: treat it as a failure
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = _read_fast(rows)
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, UnicodeError, OverflowError):
        return None
    return frame if len(frame) == expected else None


def _split(rows: bytes, counts: list[int]) -> list[bytes]:
    """Cut newline-terminated rows into consecutive chunks of `counts` lines."""
    newlines = np.flatnonzero(np.frombuffer(rows, np.uint8) == 10)
    bounds = np.concatenate(([0], newlines[np.cumsum(counts)[:-1] - 1] + 1, [len(rows)])) if len(counts) > 1 else np.array([0, len(rows)])
    return [rows[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


def tokenize(rows: bytes, counts: list[int]) -> pd.DataFrame:
    """Row tokens as a frame of `WIDTH` columns, one row per line of `rows`.

    `rows` holds the rows of several files one after another, `counts[i]` lines each. All go
    through the fast reader at once; if that fails, each file's rows are tried alone and
    only the files the fast reader cannot take are split in Python.
    """
    expected = sum(counts)
    if expected == 0:
        return pd.DataFrame({i: pd.Series(dtype=float) for i in range(WIDTH)})
    frame = _tokenize_one(rows, expected)
    if frame is not None:
        return frame
    chunks = _split(rows, [c for c in counts if c])
    counts = [c for c in counts if c]
    parts = [_tokenize_one(c, n) for c, n in zip(chunks, counts)]
    parts = [p if p is not None else _read_slow(c) for p, c, n in zip(parts, chunks, counts) if n]
    return pd.concat(parts, ignore_index=True)


def _numbers(frame: pd.DataFrame, col: int) -> tuple[np.ndarray, np.ndarray]:
    """Column as float64 and a mask of tokens that were present but not numbers."""
    if col not in frame.columns:  # the numeric reader keeps only the columns the rows have
        return np.full(len(frame), np.nan), np.zeros(len(frame), bool)
    values = frame[col]
    if is_numeric_dtype(values.dtype):
        return values.to_numpy(np.float64, na_value=np.nan), np.zeros(len(values), bool)
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    junk = np.isnan(numbers) & values.notna().to_numpy(bool) & ~values.isin(["nan", "-nan", "NaN"]).to_numpy(bool)
    return numbers, junk


def map_columns(frame: pd.DataFrame, spec: HeaderSpec) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Tidy columns for rows printed under `spec`, and a mask of rows that really are data rows."""
    n = len(frame)
    out: dict[str, np.ndarray] = {}
    valid = np.ones(n, bool)
    for pos, name in enumerate(spec.sizes):
        values, junk = _numbers(frame, pos)
        valid &= ~junk & np.isfinite(values) & (values >= 0) & (values == np.floor(values))
        out[name] = values
    for name in ("batch_count", "m", "n", "k"):
        out.setdefault(name, np.full(n, np.nan))
    scale = 1000.0 if spec.seconds else 1.0
    for role, prefix in (("gpu", ""), ("cpu", "cpu_"), ("ref", "ref_")):
        index = spec.pair_index(role)
        if index is None:
            out[f"{prefix}gflops"] = np.full(n, np.nan)
            out[f"{prefix}time_ms"] = np.full(n, np.nan)
            continue
        col = len(spec.sizes) + 2 * index
        gflops, junk_g = _numbers(frame, col)
        seconds, junk_t = _numbers(frame, col + 1)
        if role == "gpu":
            valid &= ~junk_g & ~junk_t
        out[f"{prefix}gflops"] = gflops
        out[f"{prefix}time_ms"] = seconds * scale
    first = spec.first_trailing
    error = _numbers(frame, first)[0] if first < WIDTH else np.full(n, np.nan)
    status = np.full(n, "", dtype=object)
    for col in range(first, WIDTH):
        if col not in frame.columns:
            continue
        values = frame[col]
        if not is_numeric_dtype(values.dtype):
            hit = values.isin(STATUS).to_numpy(bool) & (status == "")
            status[hit] = values.to_numpy(object)[hit]
        else:  # the numeric reader's codes
            numbers = values.to_numpy(np.float64)
            status[(numbers == OK_CODE) & (status == "")] = "ok"
            status[(numbers == FAILED_CODE) & (status == "")] = "failed"
    out["error"] = np.where((error == OK_CODE) | (error == FAILED_CODE), np.nan, error)
    out["status"] = status
    return out, valid
