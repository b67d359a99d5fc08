"""Provides `scan_many()` / `scan()`: classify every line of MAGMA outputs without a Python
loop per line.

Lines are classified with numpy by their first bytes only (an integer then a blank = candidate
data row, `%` = banner/header, anything else = trailer or stray output). Data rows are cut out
as one byte string for a single vectorised tokeniser later; banner counts come from prefix
checks and column headers from `bytes.find`; the few other lines (Flux trailer, Start/End
time, errors) go to magma_trailer.py. The bytes are scanned only a couple of times, which is
what makes this cheaper than a per-line regex loop, the baseline it is measured against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from gpuscope.parsers.magma_header import HeaderSpec, parse_header
from gpuscope.parsers.magma_trailer import other_lines

DEVICE = re.compile(rb"% device (\d+): (.+?), ([\d.]+) MHz clock")
VERSION = re.compile(rb"% MAGMA (\d+\.\d+\.\d+)")
USAGE = re.compile(rb"% Usage: (\S+)")
LEAD = 16
"""Bytes looked at per line: MAGMA indents rows by at most 11 blanks before the first integer."""
BLANK = np.zeros(256, bool)
BLANK[[9, 13, 32]] = True
DIGIT = np.zeros(256, bool)
DIGIT[48:58] = True


@dataclass
class Block:
    """Data rows of one file under one column header (one tester)."""

    spec: HeaderSpec
    test: str
    processes: int
    rows: int = 0


@dataclass
class FileScan:
    """What one pass over a file found; row values are tokenised later, all files at once."""

    row_bytes: bytes = b""
    row_lines: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    row_block: np.ndarray = field(default_factory=lambda: np.empty(0, np.int32))
    blocks: list[Block] = field(default_factory=list)
    banners: int = 0
    device: str = ""
    visible_devices: int = 0
    version: str = ""
    asserts: list[tuple[int, str]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)
    orphan_rows: int = 0
    start: float | None = None
    end: float | None = None
    exit_code: int | None = None
    cancelled: bool = False
    last_line_cut: bool = False


def _line_index(buf: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, at the newline) offset of every line."""
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [size]))
    if starts[-1] >= size:  # the file ends with a newline: no last, empty line
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


def _classify(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line: first non-blank column, is-candidate-row, first non-blank byte (0 = blank line).

    Most lines are decided by their first byte (`%` banners, digits); only lines that start
    with a blank get a look at their first `LEAD` bytes. A candidate row starts with an
    integer followed by a blank, which rules out Flux's `8.411s: job.exception` cheaply.
    """
    n = starts.size
    first_col = np.zeros(n, np.int64)
    first_byte = np.zeros(n, np.uint8)
    candidate = np.zeros(n, bool)
    if n == 0 or buf.size == 0:
        return first_col, candidate, first_byte
    width = ends - starts
    c0 = np.where(width > 0, buf[np.minimum(starts, buf.size - 1)], 0)
    first_byte[:] = c0
    look = np.flatnonzero(BLANK[c0] | DIGIT[c0])  # indented lines and digit lines need a closer look
    if look.size:
        cols = np.arange(LEAD)
        w = np.minimum(width[look], LEAD)
        inside = cols[None, :] < w[:, None]
        lead = buf[np.minimum(starts[look][:, None] + cols[None, :], buf.size - 1)]
        nonblank = ~BLANK[lead] & inside
        any_nonblank = nonblank.any(axis=1)
        col = np.where(any_nonblank, nonblank.argmax(axis=1), LEAD)
        rows = np.arange(look.size)
        byte = np.where(any_nonblank, lead[rows, np.minimum(col, LEAD - 1)], 0).astype(np.uint8)
        digit = DIGIT[lead] & inside
        after = cols[None, :] > col[:, None]
        non_digit_after = ~digit & after
        stop = np.where(non_digit_after.any(axis=1), non_digit_after.argmax(axis=1), LEAD)
        stop_byte = lead[rows, np.minimum(stop, LEAD - 1)]
        # the integer ends at a blank or the line end; a run past the window: the tokeniser judges
        ends_ok = (stop >= w) | BLANK[stop_byte] | (stop == LEAD)
        first_col[look] = col
        first_byte[look] = byte
        candidate[look] = DIGIT[byte] & ends_ok & any_nonblank
        # More than LEAD blanks is not MAGMA's layout: classify such a line by its text.
        for i in look[~any_nonblank & (width[look] > LEAD)].tolist():
            text = bytes(buf[starts[i]:ends[i]])
            stripped = text.lstrip()
            first_col[i] = len(text) - len(stripped)
            first_byte[i] = stripped[0] if stripped else 0
    return first_col, candidate, first_byte


def _prefixed(buf: np.ndarray, starts: np.ndarray, prefix: bytes) -> np.ndarray:
    """Which of the given line starts begin with `prefix` (vectorised, no decoding)."""
    if starts.size == 0:
        return np.zeros(0, bool)
    want = np.frombuffer(prefix, np.uint8)
    at = np.minimum(starts[:, None] + np.arange(want.size)[None, :], buf.size - 1)
    return (buf[at] == want).all(axis=1)


def _check(buf: np.ndarray, at: np.ndarray, maybe: np.ndarray, prefix: bytes) -> np.ndarray:
    """`maybe`, narrowed to the offsets that really start with `prefix`."""
    out = np.zeros(at.size, bool)
    out[maybe] = _prefixed(buf, at[maybe], prefix)
    return out


def _headers(data: bytes) -> list[tuple[int, HeaderSpec]]:
    """Every `%` line naming `Gflop/s`, with its offset (one per process)."""
    found, pos, cache = [], 0, {}
    while (hit := data.find(b"Gflop/s", pos)) >= 0:
        start = data.rfind(b"\n", 0, hit) + 1
        end = data.find(b"\n", hit)
        end = len(data) if end < 0 else end
        line = data[start:end]
        if line.lstrip().startswith(b"%"):
            if line not in cache:
                cache[line] = parse_header(line.decode("utf-8", "replace"))
            if cache[line] is not None:
                found.append((start, cache[line]))
        pos = end
    return found


def join_lines(data: bytes, lines: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """The given lines, newline-terminated. Rows come in runs of consecutive lines, so this
    joins a few slices per file rather than one per row."""
    breaks = np.flatnonzero(np.diff(lines) != 1) + 1
    first = np.concatenate(([0], breaks))
    last = np.concatenate((breaks - 1, [lines.size - 1]))
    parts = [data[a : b + 1] for a, b in zip(starts[lines[first]].tolist(), ends[lines[last]].tolist())]
    joined = b"".join(parts)
    return joined if joined.endswith(b"\n") else joined + b"\n"


def _first_per_file(file_of: np.ndarray, offsets: np.ndarray, n_files: int) -> list[int | None]:
    """For each file, the first of the given (sorted) offsets that lies in it, or None."""
    out: list[int | None] = [None] * n_files
    if offsets.size:
        files, first = np.unique(file_of, return_index=True)
        for f, i in zip(files.tolist(), first.tolist()):
            out[f] = int(offsets[i])
    return out


def scan_many(datas: list[bytes]) -> tuple[list[FileScan], bytes]:
    """Scan several files with one set of numpy passes; returns their scans and all their
    data rows (file after file, newline-terminated) for one call of the tokeniser.

    Each scan's `row_lines` are 1-based line numbers in its own file; `row_bytes` stays
    empty because the rows live in the shared byte string.
    """
    scans = [FileScan() for _ in datas]
    if not datas:
        return scans, b""
    big = b"".join(d if d.endswith(b"\n") or not d else d + b"\n" for d in datas)
    sizes = np.array([len(d) + (0 if d.endswith(b"\n") or not d else 1) for d in datas], np.int64)
    file_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    buf = np.frombuffer(big, np.uint8)
    starts, ends = _line_index(buf, len(big))
    line_file = np.searchsorted(file_start, starts, side="right") - 1
    first_line = np.searchsorted(starts, file_start)  # index of each file's first line
    first_col, candidate, first_byte = _classify(buf, starts, ends)
    n = len(datas)

    pct = np.flatnonzero(first_byte == 37)
    pct_at = (starts + first_col)[pct]
    pct_file = line_file[pct]
    # The byte after '% ' tells banner (M), device (d) and usage (U) lines apart cheaply;
    # only those few are then compared with their full prefix.
    third = buf[np.minimum(pct_at + 2, buf.size - 1)]
    is_banner = _check(buf, pct_at, third == ord("M"), b"% MAGMA ")
    is_device = _check(buf, pct_at, third == ord("d"), b"% device ")
    banners = np.bincount(pct_file[is_banner], minlength=n)
    devices = np.bincount(pct_file[is_device], minlength=n)
    first_banner = _first_per_file(pct_file[is_banner], pct_at[is_banner], n)
    zero = _check(buf, pct_at, is_device, b"% device 0: ")
    first_zero = _first_per_file(pct_file[zero], pct_at[zero], n)
    first_device = _first_per_file(pct_file[is_device], pct_at[is_device], n)
    for i, scan in enumerate(scans):
        scan.banners = int(banners[i])
        if first_banner[i] is not None:
            version = VERSION.match(big, first_banner[i])
            scan.version = version.group(1).decode() if version else ""
        at = first_zero[i] if first_zero[i] is not None else first_device[i]
        if at is not None:
            device = DEVICE.match(big, at)
            if device:
                scan.device = device.group(2).decode("utf-8", "replace")
            scan.visible_devices = round(int(devices[i]) / scan.banners) if scan.banners else int(devices[i])

    other = np.flatnonzero((first_byte != 0) & ~candidate & (first_byte != 37))
    other_bounds = np.searchsorted(line_file[other], np.arange(n + 1))
    for f in range(n):
        a, b = other_bounds[f], other_bounds[f + 1]
        if b > a:
            other_lines(scans[f], big, other[a:b], starts, ends, int(first_line[f]))

    usage = pct_at[_check(buf, pct_at, third == ord("U"), b"% Usage: ")]
    tests = _tests_at(big, usage)
    headers = _headers(big)
    rows = np.flatnonzero(candidate)
    keep = np.ones(rows.size, bool)
    # Lines are in file order, so each file's rows, headers and usage lines are one slice.
    row_bounds = np.searchsorted(line_file[rows], np.arange(n + 1))
    header_at = np.array([offset for offset, _ in headers], np.int64)
    header_bounds = np.searchsorted(header_at, np.concatenate((file_start, [len(big)])))
    test_at = np.array([offset for offset, _ in tests], np.int64)
    test_bounds = np.searchsorted(test_at, np.concatenate((file_start, [len(big)])))
    for f, scan in enumerate(scans):
        a, b = row_bounds[f], row_bounds[f + 1]
        if b == a:
            continue
        mine = rows[a:b]
        file_headers = headers[header_bounds[f]:header_bounds[f + 1]]
        if not file_headers:
            scan.orphan_rows = int(b - a)
            keep[a:b] = False
            continue
        blocks = _blocks(scan, file_headers, tests[test_bounds[f]:test_bounds[f + 1]], starts[mine])
        scan.row_lines = mine - first_line[f] + 1
        scan.row_block = blocks
        last_line = (first_line[f + 1] if f + 1 < n else starts.size) - 1
        if not datas[f].endswith(b"\n") and mine[-1] == last_line:
            scan.last_line_cut = True
    rows = rows[keep]
    return scans, join_lines(big, rows, starts, ends) if rows.size else b""


def _blocks(scan: FileScan, headers: list[tuple[int, HeaderSpec]], tests: list[tuple[int, str]], row_at: np.ndarray) -> np.ndarray:
    """Assign a file's rows to header kinds (blocks); fills `scan.blocks`, returns row codes.

    A row belongs to the latest header above it; rows above the first header (ranks drift
    in merged files) use the first one. A header's tester is named by the nearest `% Usage:`
    line above it (run_tests.py output holds several testers); the number of such lines is
    the number of processes that ran it.
    """
    kinds: dict[HeaderSpec, int] = {}
    header_kind = np.array([kinds.setdefault(spec, len(kinds)) for _, spec in headers], np.int32)
    header_at = np.array([offset for offset, _ in headers], np.int64)
    which = np.maximum(np.searchsorted(header_at, row_at, side="right") - 1, 0)
    codes = header_kind[which]
    names = [name for _, name in tests]
    for spec in kinds:
        at = next(offset for offset, s in headers if s == spec)
        above = [name for offset, name in tests if offset < at]
        test = above[-1] if above else (names[0] if names else ("gemm_vbatched" if "batch_count" in spec.sizes else "unknown"))
        scan.blocks.append(Block(spec, test, names.count(test) or max(1, scan.banners)))
    for block, count in zip(scan.blocks, np.bincount(codes, minlength=len(scan.blocks)).tolist()):
        block.rows = count
    return codes


def _tests_at(big: bytes, usage: np.ndarray) -> list[tuple[int, str]]:
    """(offset, argv[0] basename) of the `% Usage:` lines."""
    names = []
    for at in usage.tolist():
        found = USAGE.match(big, at)
        if found:
            base = found.group(1).rsplit(b"/", 1)[-1].decode("utf-8", "replace")
            names.append((at, base[len("testing_"):] if base.startswith("testing_") else base))
    return names


def scan(data: bytes) -> FileScan:
    """One file (tests and notebooks); `row_bytes` holds its data rows."""
    scans, rows = scan_many([data])
    scans[0].row_bytes = rows
    return scans[0]
