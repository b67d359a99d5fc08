"""Provides `scan()`: one pass over a MAGMA output file without a Python loop per line.

Lines are classified with numpy by their first bytes only (an integer then a blank = candidate
data row, `%` = banner/header, anything else = trailer or stray output). Data rows are cut out
as one byte string for a single vectorised tokeniser later; the few metadata lines (banner
counts by prefix, column headers, Flux trailer, Start/End time) are read from that
classification, so the file's bytes are scanned only a couple of times. This keeps a 37 MB
tree far below the cost of a per-line regex loop, the baseline it is measured against.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import numpy as np

from gpuscope.parsers.magma_header import HeaderSpec, parse_header

DEVICE = re.compile(rb"% device (\d+): (.+?), ([\d.]+) MHz clock")
VERSION = re.compile(rb"% MAGMA (\d+\.\d+\.\d+)")
USAGE = re.compile(rb"% Usage: (\S+)")
FLUX_EXIT = re.compile(r"flux-job: task\(s\) exited with exit code (\d+)")
EVENT = re.compile(r"[\d.]+s: job\.exception type=(\w+)")
EPOCH = re.compile(r"(Start|End) time:\s*(\d+(?:\.\d+)?)\s*$")
ERROR = re.compile(r"(?:error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|\w+ returned error|Can not allocate|failed at )")
KNOWN_OTHER = re.compile(
    r"^(?:Compiled (?:with|for) |(?:\S*/)?testing_\w+(?:\s|$)|summary$|routines with failures|START OF (?:JOBSPEC|EVENTLOG)|\{.*|flux-job:|"
    r"singularity in matrix|M != N|WARNING: MAGMA|device \d+ has only|=+$|\*+$|\[enter to continue)"
)
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
    """Per line: first non-blank offset, is-candidate-row, first byte (0 for blank lines).

    Looks only at the first `LEAD` bytes of each line. A candidate row starts with an integer
    followed by a blank, which rules out Flux's `8.411s: job.exception` lines cheaply.
    """
    if buf.size == 0:
        return starts, np.zeros(0, bool), np.zeros(0, np.uint8)
    width = np.minimum(ends - starts, LEAD)
    cols = np.arange(LEAD)
    inside = cols[None, :] < width[:, None]
    lead = buf[np.minimum(starts[:, None] + cols[None, :], buf.size - 1)]
    blank = BLANK[lead] | ~inside
    nonblank = ~blank
    first_col = np.where(nonblank.any(axis=1), nonblank.argmax(axis=1), LEAD)
    rows = np.arange(starts.size)
    first_byte = np.where(first_col < LEAD, lead[rows, np.minimum(first_col, LEAD - 1)], 0).astype(np.uint8)
    # A long indent (more than LEAD blanks) is not MAGMA's: classify that line by its text.
    long_indent = (first_col == LEAD) & (ends - starts > LEAD)
    if long_indent.any():
        for i in np.flatnonzero(long_indent).tolist():
            text = bytes(buf[starts[i]:ends[i]]).lstrip()
            first_byte[i] = text[0] if text else 0
    digit = DIGIT[lead] & inside
    # Candidate row: first non-blank is a digit, and the digit run ends in a blank or the line end.
    after = cols[None, :] > first_col[:, None]
    stop = np.where((~digit & after).any(axis=1), np.argmax(~digit & after, axis=1), LEAD)
    stop_byte = lead[rows, np.minimum(stop, LEAD - 1)]
    ends_ok = (stop >= width) | BLANK[stop_byte] | (stop == LEAD)  # a run past the window: let the tokeniser judge
    candidate = DIGIT[first_byte] & ends_ok & (first_col < LEAD)
    return first_col, candidate, first_byte


def _prefixed(buf: np.ndarray, starts: np.ndarray, prefix: bytes) -> np.ndarray:
    """Which of the given line starts begin with `prefix` (vectorised, no decoding)."""
    if starts.size == 0:
        return np.zeros(0, bool)
    want = np.frombuffer(prefix, np.uint8)
    at = np.minimum(starts[:, None] + np.arange(want.size)[None, :], buf.size - 1)
    return (buf[at] == want).all(axis=1)


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


def _join_lines(data: bytes, lines: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bytes:
    """The given lines, newline-terminated. Rows come in runs of consecutive lines, so this
    joins a few slices per file rather than one per row."""
    breaks = np.flatnonzero(np.diff(lines) != 1) + 1
    first = np.concatenate(([0], breaks))
    last = np.concatenate((breaks - 1, [lines.size - 1]))
    parts = [data[a : b + 1] for a, b in zip(starts[lines[first]].tolist(), ends[lines[last]].tolist())]
    joined = b"".join(parts)
    return joined if joined.endswith(b"\n") else joined + b"\n"


def _flux_event(scan: FileScan, raw: str) -> None:
    try:
        event = json.loads(raw)
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    name, ctx, stamp = event.get("name"), event.get("context") or {}, event.get("timestamp")
    if name == "shell.start" and isinstance(stamp, (int, float)):
        scan.start = float(stamp)
    elif name == "done" and isinstance(stamp, (int, float)):
        scan.end = float(stamp)
    elif name == "shell.task-exit" and isinstance(ctx, dict):
        code = ctx.get("exitcode")
        if isinstance(code, int):
            scan.exit_code = max(code, scan.exit_code or 0)
        if ctx.get("signaled") or code in (130, 137, 143):
            scan.cancelled = True
    elif name == "exception" and isinstance(ctx, dict) and ctx.get("type") == "cancel":
        scan.cancelled = True


def _other_lines(scan: FileScan, data: bytes, lines: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """Sort the few non-`%`, non-row lines: trailer (Flux eventlog, Start/End time), exit and
    cancel events, asserts, error messages, and lines nobody recognises."""
    in_log = in_trailer = False
    flux_exit = None
    for i in lines.tolist():
        text = data[starts[i] : ends[i]].decode("utf-8", "replace").strip()
        line_no = i + 1
        if text.startswith("START OF"):
            in_trailer = True
            in_log = text.startswith("START OF EVENTLOG")
            continue
        if in_log and text.startswith("{"):
            _flux_event(scan, text)
            continue
        if (epoch := EPOCH.match(text)) is not None:
            value = float(epoch.group(2))
            if epoch.group(1) == "Start":
                scan.start = value if scan.start is None else scan.start
            else:
                scan.end = value
        elif (event := EVENT.match(text)) is not None:
            scan.cancelled = scan.cancelled or event.group(1) == "cancel"
        elif (exited := FLUX_EXIT.match(text)) is not None:
            flux_exit = int(exited.group(1))
        elif text.startswith("Assert failed"):
            scan.asserts.append((line_no, text))
        elif ERROR.match(text):
            scan.errors.append((line_no, text))
        elif not in_trailer and not KNOWN_OTHER.match(text):
            scan.unknown.append((line_no, text))
    if scan.exit_code is None and flux_exit is not None:
        scan.exit_code = flux_exit


def _banner(scan: FileScan, data: bytes, buf: np.ndarray, pct: np.ndarray) -> None:
    """Process count, MAGMA version and device from the `%` lines, by prefix."""
    banners = pct[_prefixed(buf, pct, b"% MAGMA ")]
    devices = pct[_prefixed(buf, pct, b"% device ")]
    scan.banners = int(banners.size)
    if banners.size:
        version = VERSION.match(data, int(banners[0]))
        scan.version = version.group(1).decode() if version else ""
    if devices.size:
        zero = devices[_prefixed(buf, devices, b"% device 0: ")]
        device = DEVICE.match(data, int(zero[0] if zero.size else devices[0]))
        if device:
            scan.device = device.group(2).decode("utf-8", "replace")
        scan.visible_devices = round(devices.size / scan.banners) if scan.banners else int(devices.size)


def _tests(data: bytes, buf: np.ndarray, pct: np.ndarray) -> list[tuple[int, str]]:
    """(offset, argv[0] basename) of the `% Usage:` lines, one per process that started."""
    names = []
    for at in pct[_prefixed(buf, pct, b"% Usage: ")].tolist():
        usage = USAGE.match(data, at)
        if usage:
            base = usage.group(1).rsplit(b"/", 1)[-1].decode("utf-8", "replace")
            names.append((at, base[len("testing_"):] if base.startswith("testing_") else base))
    return names


def scan(data: bytes) -> FileScan:
    """Classify every line of a MAGMA output file and collect its metadata."""
    out = FileScan()
    buf = np.frombuffer(data, np.uint8)
    starts, ends = _line_index(buf, len(data))
    first_col, candidate, first_byte = _classify(buf, starts, ends)
    pct = (starts + first_col)[first_byte == 37]
    _banner(out, data, buf, pct)
    other = (first_byte != 0) & ~candidate & (first_byte != 37)
    _other_lines(out, data, np.flatnonzero(other), starts, ends)

    rows = np.flatnonzero(candidate)
    headers = _headers(data) if rows.size else []
    if rows.size and not headers:
        out.orphan_rows = int(rows.size)
        return out
    if rows.size == 0:
        return out
    # Each row belongs to the latest header above it; rows above the first header (ranks
    # drift in merged files) use the first one.
    kinds: dict[HeaderSpec, int] = {}
    header_kind = np.array([kinds.setdefault(spec, len(kinds)) for _, spec in headers], np.int32)
    header_at = np.array([offset for offset, _ in headers], np.int64)
    which = np.maximum(np.searchsorted(header_at, starts[rows], side="right") - 1, 0)
    out.row_block = header_kind[which]
    # A header's tester is named by the nearest `% Usage:` line above it (run_tests.py output
    # holds several testers); the number of such lines is the number of processes.
    tests = _tests(data, buf, pct)
    names = [name for _, name in tests]
    for spec in kinds:
        at = next(offset for offset, s in headers if s == spec)
        above = [name for offset, name in tests if offset < at]
        test = above[-1] if above else (names[0] if names else ("gemm_vbatched" if "batch_count" in spec.sizes else "unknown"))
        out.blocks.append(Block(spec, test, names.count(test) or max(1, out.banners)))
    counts = np.bincount(out.row_block, minlength=len(out.blocks))
    for block, count in zip(out.blocks, counts.tolist()):
        block.rows = count
    out.row_lines = rows + 1
    out.row_bytes = _join_lines(data, rows, starts, ends)
    if not data.endswith(b"\n") and rows[-1] == starts.size - 1:
        out.last_line_cut = True
    return out
