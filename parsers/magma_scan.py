"""Provides `scan()`: one pass over a MAGMA output file without a Python loop per line.

Lines are classified with numpy (first non-blank character: digit = candidate data row,
`%` = banner/header, other = trailer or stray output), data rows are cut out as one byte
string for a single vectorised tokeniser later, and the few metadata lines (banners, column
headers, Flux trailer, Start/End time) are found with `bytes.find`. This keeps a 37 MB tree
well under a second; a per-line regex loop is the baseline it is measured against.
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
FLUX_EXIT = re.compile(rb"flux-job: task\(s\) exited with exit code (\d+)")
CANCEL = re.compile(rb"job\.exception type=cancel")
EPOCH = re.compile(rb"^(Start|End) time:\s*(\d+(?:\.\d+)?)\s*$", re.M)
KNOWN_OTHER = re.compile(
    r"^(?:START OF (?:JOBSPEC|EVENTLOG)|Compiled (?:with|for) |\{.*|Start time:|End time:|flux-job:|Assert failed:|"
    r"[\d.]+s: job\.exception|error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|"
    r"magma_\w+ returned error|lapackf77_\w+ returned error|Can not allocate|singularity in matrix|"
    r"M != N|WARNING: MAGMA|device \d+ has only|=+$|\*+$|\[enter to continue)"
)


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
    event_lines: tuple[int, ...] = ()
    """Lines such as Flux's `8.411s: job.exception ...` that start with a digit but are not rows."""


def _line_index(buf: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive, at the newline) offset of every line."""
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [size]))
    if starts[-1] >= size:  # the file ends with a newline: no last, empty line
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


def _first_chars(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """First non-blank byte of each line (0 for a blank line)."""
    nonblank = np.flatnonzero((buf != 32) & (buf != 9) & (buf != 13) & (buf != 10))
    if nonblank.size == 0:
        return np.zeros(starts.size, np.uint8)
    at = np.searchsorted(nonblank, starts)
    pos = nonblank[np.minimum(at, nonblank.size - 1)]
    blank = (at >= nonblank.size) | (pos >= ends)
    return np.where(blank, 0, buf[pos]).astype(np.uint8)


def _mask_bytes(size: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Boolean mask of the bytes of the given lines, newline included."""
    delta = np.zeros(size + 2, np.int32)
    delta[starts] += 1  # offsets are distinct, so plain fancy-index updates are exact
    delta[np.minimum(ends + 1, size + 1)] -= 1
    return np.cumsum(delta[:size]) > 0


def _headers(data: bytes) -> list[tuple[int, HeaderSpec]]:
    """Every `%` line naming `Gflop/s`, with its offset (a few per process)."""
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


def _test_name(data: bytes, spec: HeaderSpec) -> tuple[str, int]:
    """Tester name from `% Usage: .../testing_dgemm_vbatched` and how many processes ran it."""
    names = [m.group(1) for m in USAGE.finditer(data)]
    if names:
        base = names[0].rsplit(b"/", 1)[-1].decode("utf-8", "replace")
        test = base[len("testing_"):] if base.startswith("testing_") else base
        return test, max(1, names.count(names[0]))
    guess = "gemm_vbatched" if "batch_count" in spec.sizes else "unknown"
    return guess, 0


def _trailer(scan: FileScan, data: bytes) -> None:
    """Flux eventlog (wall time, exit codes, signals) and the job script's Start/End time lines."""
    for kind, value in ((m.group(1), float(m.group(2))) for m in EPOCH.finditer(data)):
        if kind == b"Start" and scan.start is None:
            scan.start = value
        elif kind == b"End":
            scan.end = value
    log = data.find(b"START OF EVENTLOG")
    if log >= 0:
        for raw in data[log:].splitlines()[1:]:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
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
    flux = FLUX_EXIT.search(data)
    if flux and scan.exit_code is None:
        scan.exit_code = int(flux.group(1))
    pos, events = 0, []
    while (hit := data.find(b"s: job.exception", pos)) >= 0:
        events.append(data.count(b"\n", 0, hit) + 1)
        scan.cancelled = scan.cancelled or CANCEL.match(data, hit + 3) is not None
        pos = hit + 1
    scan.event_lines = tuple(events)


def _other_lines(scan: FileScan, data: bytes, lines: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """Sort the few non-`%`, non-data lines into asserts, errors, known trailer lines, unknown."""
    in_trailer = False
    for i in lines.tolist():
        text = data[starts[i]:ends[i]].decode("utf-8", "replace").strip()
        line_no = i + 1
        if text.startswith("START OF"):
            in_trailer = True
        if text.startswith("Assert failed"):
            scan.asserts.append((line_no, text))
        elif re.match(r"(?:error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|\w+ returned error|Can not allocate)", text):
            scan.errors.append((line_no, text))
        elif not in_trailer and not KNOWN_OTHER.match(text):
            scan.unknown.append((line_no, text))


def scan(data: bytes) -> FileScan:
    """Classify every line of a MAGMA output file and collect its metadata."""
    out = FileScan()
    buf = np.frombuffer(data, np.uint8)
    starts, ends = _line_index(buf, len(data))
    first = _first_chars(buf, starts, ends)
    digit = (first >= 48) & (first <= 57)
    other = (first != 0) & ~digit & (first != 37)

    out.banners = data.count(b"% MAGMA ")
    version = VERSION.search(data)
    out.version = version.group(1).decode() if version else ""
    devices = DEVICE.findall(data)
    if devices:
        names = [name for idx, name, _ in devices if idx == b"0"] or [devices[0][1]]
        out.device = names[0].decode("utf-8", "replace")
        out.visible_devices = round(len(devices) / max(1, out.banners)) if out.banners else len(devices)
    _trailer(out, data)
    _other_lines(out, data, np.flatnonzero(other), starts, ends)

    rows = np.flatnonzero(digit)
    headers = _headers(data)
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
    for spec in kinds:
        test, processes = _test_name(data, spec)
        out.blocks.append(Block(spec, test, processes or max(1, out.banners)))
    counts = np.bincount(out.row_block, minlength=len(out.blocks))
    for block, count in zip(out.blocks, counts.tolist()):
        block.rows = count
    out.row_lines = rows + 1
    out.row_bytes = buf[_mask_bytes(len(data), starts[rows], ends[rows])].tobytes()
    if not data.endswith(b"\n") and rows[-1] == starts.size - 1:
        out.last_line_cut = True
    return out
