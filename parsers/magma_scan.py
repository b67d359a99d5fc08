"""Provides `scan_buffer()` / `scan_many()` / `scan()`: classify every line of MAGMA outputs
without a Python loop per line. The files of a batch lie one after another in one
`FileBuffer` (the reader reads them straight into it).

Lines are classified by their first bytes only (an integer then a blank = candidate data row,
`%` = banner/header, anything else = trailer or stray output) in one pass, by the C scanner
(_magma_tokens.c, an optional build) or, without it, by numpy (`_scan_lines_numpy`, the
specification). The pass gives small tables, not arrays over every line: the data rows (where
each lies in the buffer, for the tokeniser, which reads them there), per-file banner and
device counts, the `% Usage:` lines and the column headers (lines naming `Gflop/s`), and the
few other lines (Flux trailer, Start/End time, errors), which go to magma_trailer.py. Ranks
repeat the same banner, so each usage and header line is compared with the one before it and
only the distinct ones are parsed in Python. The bytes are scanned only a couple of times,
which is what makes this cheaper than a per-line regex loop, the baseline it is measured
against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gpuscope.parsers.magma_header import HeaderSpec, parse_header
from gpuscope.parsers.magma_trailer import other_lines

try:  # the C scanner and tokeniser: an optional build (no compiler: numpy alone, same result)
    from gpuscope.parsers import _magma_tokens
except ImportError:
    _magma_tokens = None

DEVICE = re.compile(rb"% device (\d+): (.+?), ([\d.]+) MHz clock")
VERSION = re.compile(rb"% MAGMA (\d+\.\d+\.\d+)")
USAGE = re.compile(rb"% Usage: (\S+)")
LEAD = 16
"""Bytes looked at per line: MAGMA indents rows by at most 11 blanks before the first integer."""
WINDOW = 192
"""Header and usage lines up to this long are compared with the previous one in numpy."""
PAD = b"\n" * WINDOW


@dataclass
class Block:
    """Data rows of one file under one column header (one tester)."""

    spec: HeaderSpec
    test: str
    processes: int
    rows: int = 0


_NO_LINES = np.empty(0, np.int64)
_NO_BLOCKS = np.empty(0, np.int32)
"""Shared empty defaults (a scan of a file with rows gets its own arrays): one file's scan
is made per file read, and making arrays costs more than the scan's other fields."""
_NO_LINES.flags.writeable = _NO_BLOCKS.flags.writeable = False


@dataclass
class FileScan:
    """What one pass over a file found; row values are tokenised later, all files at once."""

    row_bytes: bytes = b""
    row_lines: np.ndarray = field(default_factory=lambda: _NO_LINES)
    row_block: np.ndarray = field(default_factory=lambda: _NO_BLOCKS)
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


@dataclass
class RowText:
    """The data rows of a batch of files, where they lie: row i is `source[begin[i]:stop[i]]`
    (its newline included) and starts, at its first non-blank byte, at `first[i]`. `source` is
    the batch's buffer itself, not a copy of the rows (other lines lie between them): the
    reader keeps that buffer until it is done with the rows."""

    source: bytes | bytearray = b""
    begin: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    stop: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    first: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    file: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    """Index of each row's file in the batch."""
    line: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    """1-based line number of each row in its file."""
    block: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    """Index of each row's block in its file's `FileScan.blocks`."""

    @property
    def size(self) -> int:
        return int(self.first.size)

    def joined(self, rows: np.ndarray | None = None) -> tuple[bytes, np.ndarray]:
        """The text of all rows (or of the given rows, in that order) one after another, and
        where each row's first non-blank byte lies in it."""
        if rows is None:
            return join_rows(self.source, self.begin, self.stop, self.first)
        return join_rows(self.source, self.begin[rows], self.stop[rows], self.first[rows])


def join_rows(source: bytes | bytearray, begin: np.ndarray, stop: np.ndarray, first: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Rows `source[begin[i]:stop[i]]` one after another, and where each row's byte `first[i]`
    lies in the result. Rows that follow each other in `source` are copied as one slice."""
    if not begin.size:
        return b"", np.empty(0, np.int64)
    cut = np.flatnonzero(stop[:-1] != begin[1:]) + 1
    a, b = begin[np.concatenate(([0], cut))], stop[np.concatenate((cut - 1, [begin.size - 1]))]
    view = memoryview(source)  # slices of a view are not copied before the join copies them
    length = stop - begin
    return b"".join([view[x:y] for x, y in zip(a.tolist(), b.tolist())]), np.cumsum(length) - length + (first - begin)


CHUNK = 1 << 20
"""Bytes per step of a pass over the text. Steps this small keep the temporaries small
enough for the allocator to reuse (one step over a whole batch makes fresh arrays whose
every page faults, which costs more than the comparisons themselves); steps this large
keep the numpy calls few (each one hands the interpreter lock to the other reader thread)."""


def _line_index(buf: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start and end (exclusive, at the newline) offset of every line, and the offsets of all
    `/` bytes (the column headers are found through them)."""
    newlines, slashes = [], []
    for lo in range(0, size, CHUNK):
        part = buf[lo : min(lo + CHUNK, size)]
        newlines.append(np.flatnonzero(part == 10) + lo)
        slashes.append(np.flatnonzero(part == 47) + lo)
    nl = np.concatenate(newlines) if newlines else np.empty(0, np.int64)
    slash = np.concatenate(slashes) if slashes else np.empty(0, np.int64)
    starts = np.empty(nl.size + 1, np.int64)
    starts[0] = 0
    starts[1:] = nl + 1
    ends = np.empty(nl.size + 1, np.int64)
    ends[:-1] = nl
    ends[-1] = size
    if starts[-1] >= size:  # the file ends with a newline: no last, empty line
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends, slash


def _blank(b: np.ndarray) -> np.ndarray:
    """Blank, tab or carriage return (9 | 4 and 13 | 4 are the only bytes that give 13)."""
    return (b == 32) | ((b | 4) == 13)


def _classify(padded: np.ndarray, size: int, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line: first non-blank column, is-candidate-row, first non-blank byte (0 = blank line).

    Most lines are decided by their first byte (`%` banners); lines that start with a blank
    or a digit get a look at their first `LEAD` bytes (`padded` holds at least `LEAD` bytes
    after the last line, so every window is in bounds; a line's newline ends it). A candidate
    row starts with an integer followed by a blank, which rules out Flux's
    `8.411s: job.exception` cheaply.
    """
    n = starts.size
    first_col = np.zeros(n, np.int64)
    first_byte = np.zeros(n, np.uint8)
    candidate = np.zeros(n, bool)
    if n == 0 or size == 0:
        return first_col, candidate, first_byte
    width = ends - starts
    c0 = padded[starts]
    c0[width <= 0] = 0
    first_byte[:] = c0
    look = np.flatnonzero(_blank(c0) | ((c0 - 48) < 10))  # indented lines and digit lines need a closer look
    if not look.size:
        return first_col, candidate, first_byte
    at = starts[look]
    step = padded.strides[0]
    lead = as_strided(padded, shape=(padded.size - LEAD + 1, LEAD), strides=(step, step), writeable=False)[at]
    rows = np.arange(look.size)
    # The first byte that is not a blank: a character of the line, or the newline that ends it.
    col = (~_blank(lead)).argmax(axis=1)
    byte = lead[rows, col]
    any_nonblank = ~_blank(byte) & (byte != 10)
    col[~any_nonblank] = LEAD
    byte[~any_nonblank] = 0
    # Where the leading integer stops: the first byte after it that is not a digit (the
    # newline at the latest), or the window's end. Only blanks come before it, so that is
    # the first digit followed by a non-digit.
    digit = (lead - 48) < 10
    last_digit = digit[:, :-1] & ~digit[:, 1:]
    stop = last_digit.argmax(axis=1)
    stop = np.where(last_digit[rows, stop], stop + 1, LEAD)
    stop_byte = lead[rows, np.minimum(stop, LEAD - 1)]
    ends_ok = _blank(stop_byte) | (stop_byte == 10) | (stop == LEAD) | (stop >= width[look])
    first_col[look] = col
    first_byte[look] = byte
    candidate[look] = ((byte - 48) < 10) & ends_ok & any_nonblank
    # More than LEAD blanks is not MAGMA's layout: classify such a line by its text.
    for i in look[~any_nonblank & (width[look] > LEAD)].tolist():
        text = bytes(padded[starts[i]:ends[i]])
        stripped = text.lstrip()
        first_col[i] = len(text) - len(stripped)
        first_byte[i] = stripped[0] if stripped else 0
    return first_col, candidate, first_byte


def _heads(padded: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 16 bytes from each offset as two little-endian 64-bit words (bytes 0-7, 8-15),
    to test several prefixes on one gather (`padded` has spare bytes after the text, so no
    window runs out of it)."""
    step = padded.strides[0]
    words = as_strided(padded, shape=(padded.size - 15, 16), strides=(step, step), writeable=False)[at].view("<u8")
    return words[:, 0], words[:, 1]


def _starts_with(heads: tuple[np.ndarray, np.ndarray], prefix: bytes) -> np.ndarray:
    """Which `_heads` begin with `prefix` (at most 16 bytes), a word at a time."""
    want = np.frombuffer(prefix.ljust(16, b"\0"), "<u8").tolist()
    mask = np.frombuffer(b"\xff" * len(prefix) + b"\0" * (16 - len(prefix)), "<u8").tolist()
    found = (heads[0] & np.uint64(mask[0])) == np.uint64(want[0])
    if mask[1]:
        found &= (heads[1] & np.uint64(mask[1])) == np.uint64(want[1])
    return found


def _windows(padded: np.ndarray, at: np.ndarray) -> np.ndarray:
    """`WINDOW` bytes from each offset (`padded` ends with `WINDOW` spare bytes)."""
    view = as_strided(padded, shape=(padded.size - WINDOW + 1, WINDOW), strides=(padded.strides[0], padded.strides[0]), writeable=False)
    return view[at]


def _distinct(padded: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For byte ranges [a, b): the index of the first range of each run of equal ranges,
    i.e. i where range i differs from range i-1, else that of range i-1."""
    n = a.size
    same = np.zeros(n, bool)
    if n > 1:
        length = b - a
        maybe = np.flatnonzero((length[1:] == length[:-1]) & (length[1:] <= WINDOW)) + 1
        if maybe.size:
            # Compare 8 bytes at a time; equal when the first differing byte lies past the end.
            little = np.dtype("<u8")  # byte i of a word is bits 8i..8i+7, on any machine
            diff = _windows(padded, a[maybe]).view(little) ^ _windows(padded, a[maybe - 1]).view(little)
            word = (diff != 0).argmax(axis=1)
            first = diff[np.arange(maybe.size), word].astype(np.uint64)
            low = first & (~first + np.uint64(1))  # lowest set bit: the first byte that differs
            byte = word * 8 + (np.frexp(low.astype(np.float64))[1].astype(np.int64) - 1) // 8  # exact for powers of 2
            same[maybe] = (first == 0) | (byte >= length[maybe])
    first_of_run = np.where(same, 0, np.arange(n))
    return np.maximum.accumulate(first_of_run) if n else first_of_run


@dataclass
class LineScan:
    """What one pass over the lines of a batch's files found, in line order. Positions are
    byte offsets in the batch buffer and line indices in the batch; tables are (columns,
    entries) int64 arrays, one row per named column."""

    lines: int
    """Lines in the batch."""
    files: np.ndarray
    """Per file (columns): FILE_COLUMNS."""
    rows: np.ndarray
    """Candidate data rows (a line that starts with an integer then a blank): ROW_COLUMNS."""
    other: np.ndarray
    """Lines that are neither blank, nor rows, nor start with `%`: OTHER_COLUMNS."""
    usage: np.ndarray
    """`% Usage:` lines: RUN_COLUMNS, `start` at the `%`."""
    header: np.ndarray
    """Column headers (a line whose first non-blank byte is `%` and that names `Gflop/s`):
    RUN_COLUMNS, `start` at the line's start."""


FILE_COLUMNS = ("first_line", "banners", "devices", "first_banner", "first_zero", "first_device")
"""Per file: its first line's index, its `% MAGMA` banner and `% device` lines, and the
offsets of its first banner, `% device 0:` and `% device` line (-1: none)."""
ROW_COLUMNS = ("line", "begin", "first", "stop", "file")
"""line index, line start, first non-blank byte, just past the newline, file index."""
OTHER_COLUMNS = ("line", "start", "end", "file")
RUN_COLUMNS = ("line", "start", "end", "file", "run")
"""`run`: the index of the first of a run of equal lines (this one's, when it differs from
the one before it: only distinct lines are parsed)."""


def _table(*columns: np.ndarray) -> np.ndarray:
    return np.vstack(columns).astype(np.int64, copy=False)


def _scan_lines(big: bytes | bytearray, padded: np.ndarray, size: int, file_start: np.ndarray) -> LineScan:
    """The batch's lines, classified: by the C scanner in one pass when it was built
    (_magma_tokens.c), else by numpy (`_scan_lines_numpy`, the specification: tests compare
    the two)."""
    if _magma_tokens is None:
        return _scan_lines_numpy(big, padded, size, file_start)
    lines = _magma_tokens.count_lines(big, size)
    n = file_start.size
    files = np.empty((len(FILE_COLUMNS), n), np.int64)
    rows, other = np.empty((len(ROW_COLUMNS), lines), np.int64), np.empty((len(OTHER_COLUMNS), lines), np.int64)
    usage, header = np.empty((len(RUN_COLUMNS), lines), np.int64), np.empty((len(RUN_COLUMNS), lines), np.int64)
    found = _magma_tokens.scan_lines(big, size, file_start, lines, files, rows, other, usage, header)
    n_rows, n_other, n_usage, n_header = found
    return LineScan(lines, files, rows[:, :n_rows], other[:, :n_other], usage[:, :n_usage], header[:, :n_header])


def _scan_lines_numpy(big: bytes | bytearray, padded: np.ndarray, size: int, file_start: np.ndarray) -> LineScan:
    """`_scan_lines` with numpy: a line index and classes for every line, then the lines of
    each kind picked out of them."""
    n = file_start.size
    starts, ends, slash = _line_index(padded[:size], size)
    first_col, candidate, first_byte = _classify(padded, size, starts, ends)
    line_file = np.searchsorted(file_start, starts, side="right") - 1
    first_line = np.searchsorted(starts, file_start)  # index of each file's first line

    pct = np.flatnonzero(first_byte == 37)
    pct_at = starts[pct] + first_col[pct]
    pct_file = line_file[pct]
    # Banner, device and usage lines by their prefix, all tested on one gather of each `%`
    # line's first 16 bytes.
    heads = _heads(padded, pct_at)
    is_banner = _starts_with(heads, b"% MAGMA ")
    is_device = _starts_with(heads, b"% device ")
    is_usage = _starts_with(heads, b"% Usage: ")
    zero = _starts_with(heads, b"% device 0: ")
    files = _table(first_line, np.bincount(pct_file[is_banner], minlength=n), np.bincount(pct_file[is_device], minlength=n),
                   _first_per_file(pct_file[is_banner], pct_at[is_banner], n), _first_per_file(pct_file[zero], pct_at[zero], n),
                   _first_per_file(pct_file[is_device], pct_at[is_device], n))
    row = np.flatnonzero(candidate)
    rows = _table(row, starts[row], starts[row] + first_col[row], ends[row] + 1, line_file[row])
    odd = np.flatnonzero((first_byte != 0) & ~candidate & (first_byte != 37))
    other = _table(odd, starts[odd], ends[odd], line_file[odd])
    usage_line = pct[is_usage]
    usage_at, usage_end = pct_at[is_usage], ends[usage_line]
    usage = _table(usage_line, usage_at, usage_end, line_file[usage_line], _distinct(padded, usage_at, usage_end))
    head = _header_lines(big, padded, size, slash, starts, ends, first_byte)
    header = _table(head, starts[head], ends[head], line_file[head], _distinct(padded, starts[head], ends[head]))
    return LineScan(int(starts.size), files, rows, other, usage, header)


def _header_lines(big: bytes | bytearray, padded: np.ndarray, size: int, slash: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                  first_byte: np.ndarray) -> np.ndarray:
    """Every line whose first non-blank byte is `%` and that names `Gflop/s` (the column
    headers, one per process), from the offsets of all `/` bytes."""
    slash = slash[(slash >= 5) & (slash + 1 < size)]
    slash = slash[padded[slash - 5] == ord("G")]  # most `/` are in paths: one byte rules them out
    if slash.size:  # then all 7 bytes of `Gflop/s`, from 5 before the `/`
        slash = slash[_starts_with(_heads(padded, slash - 5), b"Gflop/s")]
    if not slash.size:
        return np.empty(0, np.int64)
    lines = np.searchsorted(starts, slash, side="right") - 1
    lines = lines[np.concatenate(([True], lines[1:] != lines[:-1]))]  # sorted: drop repeats
    pct = first_byte[lines] == 37
    if not pct.all():  # `%` after whitespace other than blanks, tabs and CR: decide on the text
        for j in np.flatnonzero(~pct).tolist():
            pct[j] = big[starts[lines[j]] : ends[lines[j]]].lstrip().startswith(b"%")
        lines = lines[pct]
    return lines


def _first_of_runs(run: np.ndarray) -> np.ndarray:
    """The entries that start a run of equal lines (the ones to parse)."""
    return np.flatnonzero(run == np.arange(run.size))


def _headers(big: bytes | bytearray, header: np.ndarray, cache: dict[bytes, HeaderSpec | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[HeaderSpec]]:
    """The column headers that parse (line index, file, number of its kind) and the kinds
    (distinct specs); equal lines are parsed once."""
    line, start, end, file, run = header
    kinds: dict[HeaderSpec, int] = {}
    kind_of = np.full(run.size, -1, np.int64)
    for j in _first_of_runs(run).tolist():
        text = bytes(big[start[j] : end[j]])  # bytes: `big` may be a reused bytearray
        if text not in cache:
            cache[text] = parse_header(text.decode("utf-8", "replace"))
        spec = cache[text]
        if spec is not None:
            kind_of[j] = kinds.setdefault(spec, len(kinds))
    kind_of = kind_of[run]
    keep = kind_of >= 0
    return line[keep], file[keep], kind_of[keep], list(kinds)


def _tests_at(big: bytes | bytearray, usage: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """The `% Usage:` lines (line index, file, number of their argv[0] basename) and the
    basenames; equal lines are parsed once."""
    line, at, _, file, run = usage
    names: dict[str, int] = {}
    name_of = np.full(run.size, -1, np.int64)
    for j in _first_of_runs(run).tolist():
        found = USAGE.match(big, int(at[j]))
        if found:
            base = found.group(1).rsplit(b"/", 1)[-1].decode("utf-8", "replace")
            name_of[j] = names.setdefault(base[len("testing_"):] if base.startswith("testing_") else base, len(names))
    name_of = name_of[run]
    keep = name_of >= 0
    return line[keep], file[keep], name_of[keep], list(names)


def _first_per_file(file_of: np.ndarray, offsets: np.ndarray, n_files: int) -> np.ndarray:
    """For each file, the first of the given (sorted) offsets that lies in it, or -1.
    `file_of` is sorted too (offsets come file after file)."""
    if not offsets.size:
        return np.full(n_files, -1, np.int64)
    first = np.searchsorted(file_of, np.arange(n_files))  # where each file's offsets would start
    found = file_of[np.minimum(first, file_of.size - 1)] == np.arange(n_files)
    return np.where(found, offsets[np.minimum(first, offsets.size - 1)], -1)


class FileBuffer:
    """Files one after another in one buffer, each ending with a newline (one is added where
    a file lacks it), then `PAD`: the layout `scan_buffer` reads.

    A reader writes each file's bytes at `end` (into `room(n)`, e.g. straight from the file
    with `os.readv`, which runs off the interpreter lock: no bytes object per file to make
    and then copy in again while holding it) and then `commit`s them; a file it rejects is
    simply not committed and the next one overwrites it. The same buffer is reused from
    batch to batch (`clear`): a fresh one of a few MB costs a page fault per 4 KB, more than
    the bytes cost to read. Bytes past `end` are stale and never read."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.end = 0
        self.starts: list[int] = []
        self.cut: list[bool] = []
        """Per file: it did not end with a newline (one was added after it)."""

    def clear(self, capacity: int = 0) -> None:
        """Forget the files (keeping the buffer) and make room for `capacity` bytes."""
        self.end = 0
        self.starts, self.cut = [], []
        self.room(capacity)

    def room(self, n: int) -> memoryview:
        """A view of the `n` bytes at `end`, where the next file goes; the buffer grows (keeping
        what is committed) when it has no room for them, a newline and `PAD`."""
        need = self.end + n + 1 + len(PAD)
        if len(self.buffer) < need:
            grown = bytearray(need * 5 // 4)  # some room to spare: batches vary in size
            grown[: self.end] = memoryview(self.buffer)[: self.end]
            self.buffer = grown
        return memoryview(self.buffer)[self.end : self.end + n]

    def commit(self, length: int) -> None:
        """The `length` bytes at `end` are the next file."""
        at = self.end + length
        cut = length == 0 or self.buffer[at - 1] != 10
        self.starts.append(self.end)
        self.cut.append(cut)
        if cut and length:
            self.buffer[at] = 10
            at += 1
        self.end = at

    def write(self, data: bytes) -> int:
        """Copy `data` to `end`, not yet committed; returns its length."""
        self.room(len(data))[:] = data
        return len(data)

    def append(self, data: bytes) -> None:
        """Copy a whole file in."""
        self.commit(self.write(data))


def scan_many(datas: list[bytes], cache: dict[bytes, HeaderSpec | None] | None = None,
              buffer: FileBuffer | None = None) -> tuple[list[FileScan], RowText]:
    """`scan_buffer` for files given as byte strings; `buffer`, when given, is cleared and
    reused to hold them."""
    files = FileBuffer() if buffer is None else buffer
    files.clear(sum(len(d) for d in datas) + len(datas))
    for data in datas:
        files.append(data)
    return scan_buffer(files, cache)


def scan_buffer(files: FileBuffer, cache: dict[bytes, HeaderSpec | None] | None = None) -> tuple[list[FileScan], RowText]:
    """Scan several files with one set of numpy passes; returns their scans and all their
    data rows (file after file) for one call of the tokeniser.

    Each scan's `row_lines` are 1-based line numbers in its own file and `row_block` its rows'
    blocks; `row_bytes` stays empty because the rows live in the shared `RowText`. `cache`
    keeps parsed header lines between calls.
    """
    n = len(files.starts)
    scans = [FileScan() for _ in range(n)]
    if not n:
        return scans, RowText()
    cache = {} if cache is None else cache
    size = files.end
    files.room(len(PAD))[:] = PAD  # windows that start near the end stay in bounds
    big = files.buffer
    found = _scan_lines(big, np.frombuffer(big, np.uint8), size, np.array(files.starts, np.int64))
    first_line = found.files[0]
    for scan, n_banners, n_devices, banner_at, zero_at, device_at in zip(scans, *found.files[1:].tolist()):
        scan.banners = n_banners
        if banner_at >= 0:
            version = VERSION.match(big, banner_at)
            scan.version = version.group(1).decode() if version else ""
        at = zero_at if zero_at >= 0 else device_at
        if at >= 0:
            device = DEVICE.match(big, at, size)
            if device:
                scan.device = device.group(2).decode("utf-8", "replace")
            scan.visible_devices = round(n_devices / n_banners) if n_banners else n_devices

    other_lines(scans, big, found.other, first_line)

    tests = _tests_at(big, found.usage)
    headers = _headers(big, found.header, cache)
    rows = _blocks(scans, found.rows, headers, tests, first_line, n)
    lines = rows.line  # line indices in the batch, turned into 1-based line numbers below
    rows.line = lines - first_line[rows.file] + 1
    row_bounds = np.searchsorted(rows.file, np.arange(n + 1))
    for f in np.flatnonzero(np.diff(row_bounds)).tolist():
        a, b = row_bounds[f], row_bounds[f + 1]
        scan = scans[f]
        scan.row_lines = rows.line[a:b]
        scan.row_block = rows.block[a:b]
        last_line = (first_line[f + 1] if f + 1 < n else found.lines) - 1
        if files.cut[f] and lines[b - 1] == last_line:
            scan.last_line_cut = True
    rows.source = big  # the tokeniser reads the rows where they lie
    return scans, rows


def _blocks(scans: list[FileScan], rows: np.ndarray, headers: tuple[np.ndarray, np.ndarray, np.ndarray, list[HeaderSpec]],
            tests: tuple[np.ndarray, np.ndarray, np.ndarray, list[str]], first_line: np.ndarray, n: int) -> RowText:
    """Assign rows (ROW_COLUMNS) to header kinds (blocks), for all files of a batch at once;
    fills each `scan.blocks` and `scan.orphan_rows`, returns the rows (line index, file,
    block, where they lie).

    A row belongs to the latest header above it; rows above the first header of their file
    (ranks drift in merged files) use the first one. A header's tester is named by the
    nearest `% Usage:` line above it in its file (run_tests.py output holds several
    testers); the number of such lines naming it is the number of processes that ran it.
    Positions are line indices: lines are in the order of their bytes.
    """
    header_line, header_file, header_kind, kinds = headers
    test_line, test_file, test_id, test_names = tests
    bounds = np.concatenate((first_line, [np.iinfo(np.int64).max]))
    header_bounds = np.searchsorted(header_line, bounds)
    row_line, begin, first, stop, row_file = rows  # ROW_COLUMNS
    orphan = (header_bounds[1:] == header_bounds[:-1])[row_file]  # rows of files without a header
    if orphan.any():
        for f, count in zip(*np.unique(row_file[orphan], return_counts=True)):
            scans[int(f)].orphan_rows = int(count)
        row_line, begin, first, stop, row_file = rows[:, ~orphan]
    out = RowText(begin=begin, stop=stop, first=first, line=row_line, file=row_file)
    if not row_line.size:
        return out
    # Header kinds per file, in order of first appearance; only files with rows get blocks.
    key = header_file * len(kinds) + header_kind
    with_rows = np.zeros(n, bool)
    with_rows[row_file] = True
    _, first_header = np.unique(key, return_index=True)
    first_header = np.sort(first_header)
    first_header = first_header[with_rows[header_file[first_header]]]
    block_of_key = np.full(n * len(kinds), -1, np.int64)
    block_of_key[key[first_header]] = np.arange(first_header.size)
    which = np.searchsorted(header_line, row_line, side="right") - 1
    which = np.maximum(which, header_bounds[row_file])
    out.block = block_of_key[key[which]]
    counts = np.bincount(out.block, minlength=first_header.size).tolist()
    # The tester of each block: the last usage line above its first header in the same file.
    block_file = header_file[first_header]
    test_bounds = np.searchsorted(test_line, bounds)
    above = np.searchsorted(test_line, header_line[first_header], side="left") - 1
    n_names = len(test_names)
    per_file_name = np.bincount(test_file * n_names + test_id, minlength=n * n_names).tolist() if n_names else []
    for b, (f, h, j) in enumerate(zip(block_file.tolist(), first_header.tolist(), above.tolist())):
        scan = scans[f]
        spec = kinds[int(header_kind[h])]
        lo, hi = int(test_bounds[f]), int(test_bounds[f + 1])
        name = int(test_id[j]) if j >= lo else (int(test_id[lo]) if hi > lo else -1)
        test = test_names[name] if name >= 0 else ("gemm_vbatched" if "batch_count" in spec.sizes else "unknown")
        processes = per_file_name[f * n_names + name] if name >= 0 else 0
        scan.blocks.append(Block(spec, test, processes or max(1, scan.banners), counts[b]))
    out.block -= np.searchsorted(block_file, np.arange(n))[row_file]  # numbered per file
    return out


def scan(data: bytes) -> FileScan:
    """One file (tests and notebooks); `row_bytes` holds its data rows."""
    scans, rows = scan_many([data])
    scans[0].row_bytes = rows.joined()[0]
    return scans[0]
