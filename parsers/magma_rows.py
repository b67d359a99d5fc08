"""Provides the tokeniser and column mapping for MAGMA data rows, vectorised over all files.

The usual path: the C tokeniser (_magma_tokens.c, an optional build) reads a batch of rows in
one pass; without it, or for a batch it cannot vouch for, numpy finds where the tokens start and
end (blanks, newlines and parentheses separate them) and Arrow reads them as floats in one cast
over the text itself (`---` = NaN, `ok` and `failed` as codes). A tester whose rows all have the same number of
numeric tokens is then a plain float matrix (`numeric_rows`). Anything else (a stray word, a
row with another token count, tabs) sends that tester's rows to the general readers below,
which give the same frame: numpy's `loadtxt` for all-numeric rows, pandas' C reader, and a
plain Python split for what even that cannot take (a stray quote, a line of hundreds of
tokens).
"""

from __future__ import annotations

import csv
import io
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.lib.stride_tricks import as_strided
from pandas.api.types import is_numeric_dtype

from gpuscope.parsers.magma_header import HeaderSpec
from gpuscope.parsers.magma_scan import CHUNK, _magma_tokens, join_rows  # _magma_tokens: the C part, or None where it was not built

WIDTH = 16
"""Tokens per row: MAGMA rows have at most 13. A longer line makes the fast reader fail, and
that file alone is then read by the slow one (which keeps the first 16 tokens)."""
PARENS = bytes.maketrans(b"()", b"  ")
STATUS = ("ok", "failed")
SIZE_LIMIT = 2.0**53
"""Sizes are integers; a float at or past 2**53 cannot hold one exactly (nor fit the int64 columns)."""


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
OK, FAILED, NO_STATUS = 0, 1, 2
"""Codes of the `status` column (categories "ok", "failed", "")."""
SEPARATORS = b" \n()"
"""Bytes between tokens: blanks, newlines and parentheses. Any other byte (a tab, a carriage
return) stays inside its token, which then does not read as a number, so a row with a tab
(which `loadtxt` splits differently) goes to the general readers."""
NUMBER = r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)$"
"""What a float token looks like (to find the culprits when a cast fails)."""


@dataclass
class RowTokens:
    """The tokens of a batch of rows as floats: row i has `count[i]` of them, from
    `values[start[i]]` on; `bad[i]` marks a row with a token the numeric reader does not
    take (a word, a tab). `values` may be a strided view."""

    values: np.ndarray
    start: np.ndarray
    count: np.ndarray
    bad: np.ndarray

    @classmethod
    def empty(cls) -> "RowTokens":
        return cls(np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))


def _token_bounds(data: np.ndarray, skip: int) -> np.ndarray:
    """Where tokens start and end (exclusive) from byte `skip` on, interleaved:
    [start0, end0, start1, end1, ...], as Arrow's string offsets (32-bit below 2 GB)."""
    kind = np.int32 if data.size < 2**31 - 1 else np.int64
    parts = [np.array([skip], kind)] if skip < data.size and int(data[skip]) not in SEPARATORS else []  # a token starts at `skip`
    for lo in range(skip, data.size - 1, CHUNK):
        part = data[lo : lo + CHUNK + 1]  # one byte more: an edge right at the chunk's end
        between = (part == 32) | (part == 10) | ((part | 1) == 41)  # SEPARATORS; `(` | 1 is `)`
        edges = np.flatnonzero(between[1:] != between[:-1]).astype(kind)
        edges += lo + 1
        parts.append(edges)
    if data.size and int(data[-1]) not in SEPARATORS:  # the text does not end with a newline
        parts.append(np.array([data.size], kind))
    return np.concatenate(parts) if parts else np.empty(0, kind)


def _words(data: np.ndarray, starts: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which tokens are `---`, `ok` and `failed`: the words a data row holds besides numbers.
    Tokens that start with `-`, `o` or `f` are candidates (a third of them: `---` is
    common); only they are read further."""
    head = np.take(data, starts)
    maybe = np.flatnonzero((head == 45) | (head == 111) | (head == 102))
    head, length = head[maybe], length[maybe]

    def spelled(word: bytes) -> np.ndarray:
        found = maybe[(head == word[0]) & (length == len(word))]
        at = starts[found]
        keep = np.ones(found.size, bool)
        for i in range(1, len(word)):
            keep &= np.take(data, at + i) == word[i]
        return found[keep]

    return spelled(b"---"), spelled(b"ok"), spelled(b"failed")


def _strings(text: bytes, edges: np.ndarray, read: np.ndarray) -> pa.Array:
    """The tokens and the gaps between them as one Arrow string array without copying the
    text: slot 2j is token j, slot 2j+1 the gap after it; only the `read` slots are valid
    (not null), so a cast parses just those."""
    large = len(text) >= 2**31 - 1
    offsets = edges.astype(np.int64 if large else np.int32, copy=False)
    bitmap = np.packbits(read, bitorder="little")
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), read.size,
                                 [pa.py_buffer(bitmap), pa.py_buffer(offsets), pa.py_buffer(text)])


def _cast(strings: pa.Array) -> np.ndarray:
    """The valid slots as float64, as a writable numpy view of Arrow's result (no copy: its
    memory comes from Arrow's pool, which reuses it); null slots hold an unspecified number
    that the caller overwrites where it reads them."""
    result = strings.cast(pa.float64())
    data = result.buffers()[1]
    values = np.frombuffer(data, np.float64, count=len(result), offset=result.offset * 8) if data.is_mutable else None
    return values if values is not None and values.flags.writeable else result.to_numpy(zero_copy_only=False).copy()


def split_rows(text: bytes | bytearray, first: np.ndarray, stop: np.ndarray | None = None, begin: np.ndarray | None = None) -> RowTokens:
    """Tokens of newline-terminated rows; row i starts (at its first non-blank byte, a digit)
    at `first[i]` and ends at `stop[i]`, just past its newline (None: at the next row's first
    byte, the text's end for the last). With `stop`, other lines may lie between the rows:
    the reader's batch buffer is read as it is, without copying the rows out; `begin` (each
    row's line start, `first` when not given) lets the numpy path copy runs of rows at once.

    `---` is NaN, `ok` and `failed` are OK_CODE and FAILED_CODE, anything else that is not a
    number marks its row bad. The C tokeniser (_magma_tokens.c, built when a compiler is
    there) reads the usual rows in one pass; whatever it leaves to this module, and every
    batch when it was not built, is read by `split_rows_numpy`, with the same result."""
    n = first.size
    if n == 0:
        return RowTokens.empty()
    first = np.ascontiguousarray(first, np.int64)
    stop = np.append(first[1:], len(text)) if stop is None else np.ascontiguousarray(stop, np.int64)
    if _magma_tokens is not None:
        found = _split_rows_c(text, first, stop)
        if found is not None:
            return found
    if stop[-1] != len(text) or not np.array_equal(stop[:-1], first[1:]):  # other lines between or after the rows
        text, first = join_rows(text, first if begin is None else begin, stop, first)
    return split_rows_numpy(bytes(text), first)


def _split_rows_c(text: bytes | bytearray, first: np.ndarray, stop: np.ndarray) -> RowTokens | None:
    """`split_rows` by the C tokeniser, or None when it leaves the batch to numpy."""
    values = np.empty(max(int((stop - first).sum()), 0) // 2 + 1)  # a token and the separator after it: at least 2 bytes
    start, count = np.empty(first.size, np.int64), np.empty(first.size, np.int64)
    found = _magma_tokens.split_rows(text, first, stop, values, start, count)
    if found < 0:
        return None
    return RowTokens(values[:found], start, count, np.zeros(first.size, bool))


def split_rows_numpy(text: bytes, first: np.ndarray) -> RowTokens:
    """`split_rows` with numpy and Arrow: numpy finds where token bytes start and stop, and one
    Arrow cast over the text itself reads them as floats."""
    n = first.size
    if n == 0:
        return RowTokens.empty()
    data = np.frombuffer(text, np.uint8)
    edges = _token_bounds(data, int(first[0]))
    starts, ends = edges[0::2], edges[1::2]
    at = np.searchsorted(starts, first.astype(starts.dtype))  # each row's first token
    count = np.diff(np.append(at, starts.size))
    bad = np.zeros(n, bool)
    if at[-1] >= starts.size or not np.array_equal(starts[at], first):
        # Some row's first byte is not where a token starts (a tab before it): not the
        # layout this expects, let the general readers judge.
        bad[:] = True
        return RowTokens(np.full(starts.size, np.nan), at, count, bad)
    dash, ok, failed = _words(data, starts, ends - starts)
    read = np.zeros(edges.size - 1, bool)
    read[0::2] = True
    read[2 * dash] = read[2 * ok] = read[2 * failed] = False
    culprit = np.empty(0, np.int64)
    try:
        values = _cast(_strings(text, edges, read))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Some token is not a number: find the culprits, mark their rows, read the rest.
        plausible = pc.match_substring_regex(_strings(text, edges, read), NUMBER).fill_null(False).to_numpy(zero_copy_only=False)
        culprit = np.flatnonzero(read & ~plausible) // 2
        bad[np.searchsorted(at, culprit, side="right") - 1] = True
        read &= plausible
        try:
            values = _cast(_strings(text, edges, read))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad[:] = True
            return RowTokens(np.full(starts.size, np.nan), at, count, bad)
    tokens = values[0::2]  # slot 2j is token j; the gaps between are never read
    tokens[dash] = tokens[culprit] = np.nan
    tokens[ok] = OK_CODE
    tokens[failed] = FAILED_CODE
    return RowTokens(tokens, at, count, bad)


def numeric_rows(parts: list[tuple[RowTokens, np.ndarray]]) -> np.ndarray | None:
    """The chosen rows (`parts`: each batch's tokens and the row indices in it) as one float
    matrix, when they all have the same number of tokens and every token is a number,
    `---`, `ok` or `failed`; else None. The same matrix `read_numeric` reads from the text."""
    width = None
    for tokens, rows in parts:
        if not rows.size:
            continue
        every = rows.size == tokens.count.size  # all the batch's rows: no need to pick them
        count = tokens.count if every else tokens.count[rows]
        if (tokens.bad if every else tokens.bad[rows]).any() or count.min() != count.max() or (width is not None and count[0] != width):
            return None
        width = int(count[0])
    if width is None or width > WIDTH:
        return None
    out = [_matrix(tokens, rows, width) for tokens, rows in parts if rows.size]
    return out[0] if len(out) == 1 else np.concatenate(out)


def _matrix(tokens: RowTokens, rows: np.ndarray, width: int) -> np.ndarray:
    """The first `width` tokens of the chosen rows. By the C part, column after column (each
    column is then one contiguous array, as the tidy table wants it); else numpy gathers the
    rows."""
    values = tokens.values
    if _magma_tokens is not None and values.flags.c_contiguous and values.dtype == np.float64:
        out = np.empty((width, rows.size))
        _magma_tokens.gather(values, np.ascontiguousarray(tokens.start, np.int64), np.ascontiguousarray(rows, np.int64), width, out)
        return out.T
    view = as_strided(values, shape=(values.size - width + 1, width), strides=(values.strides[0], values.strides[0]), writeable=False)
    return view[tokens.start if rows.size == tokens.start.size else tokens.start[rows]]  # not np.take: slow on this view


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


def _numbers(frame: pd.DataFrame | np.ndarray, col: int) -> tuple[np.ndarray, np.ndarray]:
    """Column as float64 and a mask of tokens that were present but not numbers."""
    if isinstance(frame, np.ndarray):  # the numeric readers' matrix: numbers only
        if col >= frame.shape[1]:
            return np.full(frame.shape[0], np.nan), np.zeros(frame.shape[0], bool)
        return frame[:, col], np.zeros(frame.shape[0], bool)
    if col not in frame.columns:  # the numeric reader keeps only the columns the rows have
        return np.full(len(frame), np.nan), np.zeros(len(frame), bool)
    values = frame[col]
    if is_numeric_dtype(values.dtype):
        return values.to_numpy(np.float64, na_value=np.nan), np.zeros(len(values), bool)
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    junk = np.isnan(numbers) & values.notna().to_numpy(bool) & ~values.isin(["nan", "-nan", "NaN"]).to_numpy(bool)
    return numbers, junk


def map_columns(frame: pd.DataFrame | np.ndarray, spec: HeaderSpec) -> tuple[dict[str, np.ndarray | None], np.ndarray | None]:
    """Tidy columns for rows printed under `spec`, and a mask of rows that really are data rows.

    `frame` is a token frame (`tokenize`, `read_numeric`) or the numeric readers' matrix.
    `status` comes back as codes (OK, FAILED, NO_STATUS). A column the rows do not have is
    None (all NaN, or no status), and so is the mask when every row is a data row.
    """
    if isinstance(frame, pd.DataFrame) and all(is_numeric_dtype(t) for t in frame.dtypes) and list(frame.columns) == list(range(frame.shape[1])):
        frame = frame.to_numpy(np.float64, na_value=np.nan)  # all numeric: the same numbers, faster
    if isinstance(frame, np.ndarray):
        return _map_matrix(frame, spec)
    n = len(frame)
    out: dict[str, np.ndarray | None] = {}
    valid = np.ones(n, bool)
    for pos, name in enumerate(spec.sizes):
        values, junk = _numbers(frame, pos)
        with np.errstate(invalid="ignore"):  # sizes past 2**53 are not integers MAGMA prints
            valid &= ~junk & (values >= 0) & (values < SIZE_LIMIT) & (values == np.floor(values))
        out[name] = values
    for name in ("batch_count", "m", "n", "k"):
        out.setdefault(name, None)
    scale = 1000.0 if spec.seconds else 1.0
    for role, prefix in (("gpu", ""), ("cpu", "cpu_"), ("ref", "ref_")):
        index = spec.pair_index(role)
        if index is None:
            out[f"{prefix}gflops"] = out[f"{prefix}time_ms"] = None
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
    status = np.full(n, NO_STATUS, np.int8)
    for col in range(first, WIDTH):
        if col not in frame.columns:
            continue
        values = frame[col]
        open_ = status == NO_STATUS
        if not is_numeric_dtype(values.dtype):
            status[values.eq("ok").to_numpy(bool) & open_] = OK
            status[values.eq("failed").to_numpy(bool) & open_] = FAILED
        else:  # the numeric reader's codes
            numbers = values.to_numpy(np.float64)
            status[(numbers == OK_CODE) & open_] = OK
            status[(numbers == FAILED_CODE) & open_] = FAILED
    out["error"] = np.where((error == OK_CODE) | (error == FAILED_CODE), np.nan, error)
    out["status"] = status
    return out, valid


CODED = -7e6
"""Below every real value MAGMA prints and above both status codes: one comparison tells
whether a column holds a code at all."""


def _map_matrix(values: np.ndarray, spec: HeaderSpec) -> tuple[dict[str, np.ndarray | None], np.ndarray | None]:
    """`map_columns` for a matrix of numbers (no junk tokens): each check is first made on
    the whole block at once, and row by row only when that finds something."""
    n, width = values.shape

    def column(pos: int) -> np.ndarray | None:
        return values[:, pos] if pos < width else None

    out: dict[str, np.ndarray | None] = {"batch_count": None, "m": None, "n": None, "k": None}
    sizes_at = len(spec.sizes)
    for pos, name in enumerate(spec.sizes):
        out[name] = column(pos)
    valid: np.ndarray | None = None
    if sizes_at > width:
        valid = np.zeros(n, bool)  # a size column is missing: NaN, so no row is a data row
    elif n:
        sizes = values[:, :sizes_at]
        if not (sizes.flags.c_contiguous or sizes.flags.f_contiguous):
            sizes = np.ascontiguousarray(sizes)  # reductions over a strided slice are slow
        with np.errstate(invalid="ignore"):  # sizes past 2**53 are not integers MAGMA prints
            if not (sizes.min() >= 0 and sizes.max() < SIZE_LIMIT and (sizes == np.floor(sizes)).all()):
                valid = ((sizes >= 0) & (sizes < SIZE_LIMIT) & (sizes == np.floor(sizes))).all(axis=1)
    scale = 1000.0 if spec.seconds else 1.0
    for role, prefix in (("gpu", ""), ("cpu", "cpu_"), ("ref", "ref_")):
        index = spec.pair_index(role)
        col = None if index is None else sizes_at + 2 * index
        seconds = None if col is None else column(col + 1)
        out[f"{prefix}gflops"] = None if col is None else column(col)
        out[f"{prefix}time_ms"] = seconds if seconds is None or scale == 1.0 else seconds * scale
    first = spec.first_trailing
    error = column(first) if first < WIDTH else None
    if error is not None and (error < CODED).any():
        error = np.where((error == OK_CODE) | (error == FAILED_CODE), np.nan, error)
    out["error"] = error
    status = None
    tail = values[:, first : min(width, WIDTH)]
    if tail.size and (tail < CODED).any():
        status = np.full(n, NO_STATUS, np.int8)
        for col in range(tail.shape[1]):
            open_ = status == NO_STATUS
            status[(tail[:, col] == OK_CODE) & open_] = OK
            status[(tail[:, col] == FAILED_CODE) & open_] = FAILED
    out["status"] = status
    return out, valid
