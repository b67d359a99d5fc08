"""Provides `read_lines()`: which lines of MAGMA outputs are data rows, and under which header.

numpy finds every line and picks out the data rows (the first non-blank byte a digit, the
first token a whole number); of the other lines, only those that can say something are read
in Python, one by one in file order: banners, devices, usage and command lines, options
before a header, headers, and the lines around the table (Flux eventlog, Start/End time,
asserts, errors). Banner chatter (`% CUDA runtime`, dates, `%====`) is never decoded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.findings import Finding
from gpuscope.parsers.magma import layout as fmt

FLUX_EXIT = re.compile(r"flux-job: task\(s\) exited with exit code (\d+)")
EVENT = re.compile(r"[\d.]+s: job\.exception type=(\w+)")
EPOCH = re.compile(r"(Start|End) time:\s*(\d+(?:\.\d+)?)\s*$")
ERROR = re.compile(r"(?:error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|\w+ returned error|Can not allocate|failed at )")
FLUX_EVENTS = re.compile(r'"(?:shell\.start|done|shell\.task-exit|exception)"|\\')
"""The Flux eventlog names `_flux_event` reads (a backslash may escape one: such a line is read)."""
NODES = re.compile(r"\bSLURM_(?:JOB_)?NNODES=(\d+)|\bSLURM_JOB_NUM_NODES=(\d+)")
HOST = re.compile(r"\bSLURMD_NODENAME=(\S+)|\bhost(?:name)?[:=]\s*(\S+)", re.IGNORECASE)
OPTION_LINE = re.compile(r"^%?\s*(?:using:\s*)?(?:\w+\s*=\s*\S|ngpu\s+\d|version\s+\d)")
KNOWN_OTHER = re.compile(
    r"^(?:Compiled (?:with|for) |summary$|routines with failures|flux-job:|singularity in matrix|M != N|WARNING: MAGMA|"
    r"device \d+ has only|=+$|\*+$|\[enter to continue|Loading |CUDA runtime |Usage:|"
    r"\d+ tests? (?:in \d+ commands? passed|failed)|\d+ errors? detected|\*\* \d+ tests? failed|all \d+ tests? in)"  # run_tests.py
)


def _first8(prefix: bytes) -> int:
    return int(np.frombuffer(prefix.ljust(8)[:8], "<u8")[0])


BANNER_LINE, DEVICE_LINE = _first8(b"% MAGMA "), _first8(b"% device")
CHATTER = tuple(_first8(p) for p in (b"% MAGMA ", b"% device", b"% Compil", b"% CUDA r", b"% HIP ru", b"%=======", b"% If run", b"% relati",
                                     b"%       ", b"%"))
"""`%` lines never read as text, by their first 8 bytes (`%` alone: an empty comment line)."""
DAYS = np.array([int(np.frombuffer(d.encode() + b"\0", "<u4")[0]) for d in ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")], np.uint64)
"""`% Mon Aug 26 20:04:30 2024`: the banner's date line."""


@dataclass
class Block:
    """The rows of one file under one tester, options and header."""

    test: str
    options: dict[str, str]
    layout: fmt.Layout
    file: int
    label: str = ""
    """The test as the tables name it: the tester, and options that differ between its runs."""
    processes: int = 0
    rows: int = 0


@dataclass
class RunInfo:
    """What one file says about its run, beside its rows."""

    label: str
    context: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    digest: str = ""
    banners: int = 0
    device: str = ""
    clock_mhz: float | None = None
    visible_devices: int = 0
    version: str = ""
    tests: list[str] = field(default_factory=list)
    asserts: list[tuple[int, str]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)
    orphan_rows: int = 0
    unparsed: list[int] = field(default_factory=list)
    unknown_headers: list[tuple[int, str]] = field(default_factory=list)
    start: float | None = None
    end: float | None = None
    exit_code: int | None = None
    cancelled: bool = False
    last_line_cut: bool = False
    run_nodes: int | None = None
    """Nodes the run itself names (Flux jobspec and taskmap, SLURM_NNODES), when it does."""
    hosts: set[str] = field(default_factory=set)
    last_banner_line: int = 0
    overlapped: bool = False
    """Processes ran at the same time: a process started before the others' tables were done."""
    processes: dict[str, int] = field(default_factory=dict)
    """Processes (headers printed) per test label."""
    commands: list[tuple[int, str, tuple[int, ...]]] = field(default_factory=list)
    """Echoed command lines that name sizes: (line, tester, the sizes asked, in run order)."""
    # Set by magma_trust: the evidence behind its flags.
    peaks: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    warm: dict[str, Any] | None = None
    untrusted: list[str] = field(default_factory=list)
    untrusted_env: str = ""


@dataclass
class Tokens:
    """The tokens of some lines, one after another."""

    first: np.ndarray
    """Each line's first token."""
    count: np.ndarray
    """Tokens in each line."""
    kind: np.ndarray
    """Per token: fmt.NUMBER, DASHES, OK, FAILED or WORD."""
    value: np.ndarray
    """Per token: its number, NaN for anything else."""
    decimals: np.ndarray
    """Per token: digits printed after its `.` (0 without one): how precise a time is."""


def _kinds() -> np.ndarray:
    """Token kind by (first byte, last byte): a number starts with a digit, a sign or `.` (or as
    nan and inf do) and ends with a digit or `.` (or as nan, inf and infinity do); `-` ... `-` is
    `---`; `o`...`k` and `f`...`d` may be the status words (their length is checked too)."""
    table = np.full((256, 256), fmt.WORD, np.int8)
    table[np.ix_(np.frombuffer(b"0123456789+-.nNiI", np.uint8), np.frombuffer(b"0123456789.nNfFyY", np.uint8))] = fmt.NUMBER
    table[ord("-"), ord("-")] = fmt.DASHES
    table[ord("o"), ord("k")] = fmt.OK
    table[ord("f"), ord("d")] = fmt.FAILED
    return table.reshape(-1)


KIND = _kinds()


def tokenize(big: bytes, start: np.ndarray, end: np.ndarray) -> Tokens:
    """Tokens of the lines big[start[i]:end[i]] (`end` is the line's newline)."""
    if not start.size:
        return Tokens(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0), np.zeros(0, np.int8))
    # Consecutive rows are copied as one slice: a run of rows ends where the next row does
    # not start right after this one's newline.
    cut = np.flatnonzero(start[1:] != end[:-1] + 1) + 1
    run_start = np.concatenate(([0], cut))
    run_end = np.concatenate((cut, [start.size])) - 1
    text = b"".join([b"\n"] + [big[a : b + 1] for a, b in zip(start[run_start].tolist(), end[run_end].tolist())])
    r = np.frombuffer(text, np.uint8)
    # Separators: blanks, control bytes and `!"#$%&'()` (every byte up to `)`): `(` and `)`
    # part `94.60 (   0.26)` and `33822.46 (1118.44)` alike; none belongs in a number or a word.
    sep = r <= 41
    # Token i is text[edges[2i]:edges[2i+1]]; the text starts and ends with a newline.
    edges = np.flatnonzero(sep[1:] != sep[:-1]) + 1
    tok_start = edges[0::2]
    newline = np.concatenate(([0], np.cumsum(end - start + 1)))
    bounds = np.searchsorted(tok_start, newline)
    first, count = bounds[:-1], np.diff(bounds)
    tok_end = edges[1::2]
    kind = KIND[(r[tok_start].astype(np.uint16) << 8) | r[tok_end - 1]]  # by the token's first and last byte
    words = np.flatnonzero((kind >= fmt.DASHES) & (kind <= fmt.FAILED))  # `---` has 2 dashes or more, `ok` 2 letters, `failed` 6
    length, wanted = tok_end[words] - tok_start[words], kind[words]
    kind[words[np.where(wanted == fmt.DASHES, length < 2, length != np.where(wanted == fmt.OK, 2, 6))]] = fmt.WORD
    value = _numbers(text, edges, kind)
    return Tokens(first, count, kind, value, _decimals(r, tok_start, tok_end))


def _decimals(r: np.ndarray, tok_start: np.ndarray, tok_end: np.ndarray) -> np.ndarray:
    """Per token, the digits after its first `.`: `0.00` has 2, `0.0087` 4, `12` none."""
    out = np.zeros(tok_start.size, np.int8)
    dots = np.flatnonzero(r == 46)
    if not dots.size or not tok_start.size:
        return out
    token = np.searchsorted(tok_start, dots, "right") - 1
    inside = (token >= 0) & (dots < tok_end[np.maximum(token, 0)])
    dots, token = dots[inside], token[inside]
    first = np.flatnonzero(np.diff(token, prepend=-1) != 0)  # a token's first `.` only
    out[token[first]] = np.minimum(tok_end[token[first]] - dots[first] - 1, 127)
    return out


CHUNK = 1 << 16


def _numbers(text: bytes, edges: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """The number of each NUMBER token (NaN for others), by an Arrow cast: the tokens and the
    gaps between them are the strings of one array (its offsets are `edges`); the gaps and
    the tokens that are no numbers are null, so only numbers are parsed. Where a cast fails
    (a token like `1.2.3`), that chunk of tokens is read by Python's float(), and what it
    does not read becomes a WORD."""
    n = kind.size
    valid = np.zeros(max(2 * n - 1, 0), bool)
    valid[0::2] = kind == fmt.NUMBER
    strings = pa.LargeStringArray.from_buffers(valid.size, pa.py_buffer(edges[: valid.size + 1]), pa.py_buffer(text),
                                               pa.py_buffer(np.packbits(valid, bitorder="little")))
    try:
        return pc.cast(strings, pa.float64()).to_numpy(zero_copy_only=False)[0::2]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values = np.full(n, np.nan)
    for first in range(0, n, CHUNK):
        last = min(n, first + CHUNK)
        try:
            part = pc.cast(strings.slice(2 * first, 2 * (last - first) - 1), pa.float64())
            values[first:last] = part.to_numpy(zero_copy_only=False)[0::2]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            for i in range(first, last):
                if kind[i] == fmt.NUMBER:
                    try:
                        values[i] = float(text[edges[2 * i] : edges[2 * i + 1]])
                    except ValueError:
                        kind[i] = fmt.WORD
    return values


@dataclass
class Lines:
    """The data rows of all files (arrays, one entry per row) and the blocks they belong to."""

    row_start: np.ndarray
    row_end: np.ndarray
    """Row i is big[row_start[i]:row_end[i]]; row_end is its newline."""
    row_file: np.ndarray
    row_line: np.ndarray
    """1-based line number in its file."""
    row_block: np.ndarray
    blocks: list[Block]
    runs: list[RunInfo]
    tokens: Tokens
    row_token: np.ndarray
    """Each row's first token in `tokens`."""
    row_count: np.ndarray
    """Tokens in each row."""
    impl_names: list[str] = field(default_factory=list)

    def groups(self) -> Iterator[tuple[fmt.Layout, np.ndarray]]:
        """Rows per header kind, in row order."""
        kinds: dict[str, int] = {}
        kind_of_block = np.array([kinds.setdefault(b.layout.header, len(kinds)) for b in self.blocks] or [0], np.int64)
        layouts = {b.layout.header: b.layout for b in self.blocks}
        kind = kind_of_block[self.row_block] if self.row_block.size else self.row_block
        for header, k in kinds.items():
            chosen = np.flatnonzero(kind == k) if len(kinds) > 1 else np.arange(kind.size)
            if chosen.size:
                yield layouts[header], chosen

    def reject(self, rows: np.ndarray) -> None:
        """Rows whose tokens do not fit their header: reported, not read."""
        for f, line in zip(self.row_file[rows].tolist(), self.row_line[rows].tolist()):
            self.runs[f].unparsed.append(line)

    def impl_code(self, impl: str) -> int:
        if impl not in self.impl_names:
            self.impl_names.append(impl)
        return self.impl_names.index(impl)


def read_lines(big: bytes, sizes: list[int], runs: list[RunInfo]) -> Lines:
    """Data rows and blocks of the files whose texts (each ending with a newline) lie one after
    another in `big`, `sizes[i]` bytes each."""
    u = np.frombuffer(big, np.uint8)
    ends = np.flatnonzero(u == 10)
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    file_first_line = np.searchsorted(ends, np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)) if sizes else np.zeros(0, np.int64)
    # Lines that start with a blank or a digit are tokenised: data rows are those whose first
    # token is a whole number; the others (`8.411s: job.exception ...`, MAGMA 1.x headers) are
    # read as text, and blank lines are skipped.
    first = u[starts] if u.size else np.zeros(0, np.uint8)
    candidate = np.flatnonzero(((first <= 32) | ((first >= 48) & (first <= 57))) & (starts < ends))
    tokens = tokenize(big, starts[candidate], ends[candidate])
    lead = tokens.first[:candidate.size]
    has = tokens.count > 0
    lead_kind = np.where(has, tokens.kind[np.minimum(lead, max(tokens.kind.size - 1, 0))], fmt.WORD) if tokens.kind.size else np.full(candidate.size, fmt.WORD)
    lead_value = np.where(has, tokens.value[np.minimum(lead, max(tokens.value.size - 1, 0))], np.nan) if tokens.value.size else np.full(candidate.size, np.nan)
    second = np.where(tokens.count > 1, tokens.kind[np.minimum(lead + 1, max(tokens.kind.size - 1, 0))], fmt.WORD) if tokens.kind.size else lead_kind
    with np.errstate(invalid="ignore"):  # a row: a whole number, then a number or `---` (`5 tests in 2 commands passed` is none)
        is_row = (lead_kind == fmt.NUMBER) & (lead_value >= 0) & (lead_value == np.floor(lead_value)) & (second <= fmt.DASHES)
    row = np.zeros(ends.size, bool)
    row[candidate[is_row]] = True
    percent = (first == 37)
    other = ~row & ~percent & (starts < ends)
    other[candidate[~has]] = False  # blank lines
    pct = np.flatnonzero(percent)
    gather = np.minimum(starts[pct, None] + np.arange(8), max(u.size - 1, 0))
    prefix = np.ascontiguousarray(u[gather]).view("<u8").reshape(-1) if pct.size else np.zeros(0, np.uint64)
    _banners_and_devices(big, u, pct, prefix, starts, ends, file_first_line, runs)
    # `%` lines read in Python: all but the banner chatter every process prints (and the
    # banners and devices, counted above); with every non-`%` line that is not a data row.
    day = np.isin(prefix >> np.uint64(16) & np.uint64(0xFFFFFF), DAYS) & (prefix >> np.uint64(40) & np.uint64(0xFF) == 32)
    events = np.sort(np.concatenate((pct[~np.isin(prefix, np.array(CHATTER, np.uint64)) & ~day], np.flatnonzero(other))))
    line_file = np.searchsorted(file_first_line, events, "right") - 1
    boundaries = _read_other_lines(big, events, line_file, starts, ends, file_first_line, runs)
    lines = _assign_rows(candidate[is_row], starts, ends, file_first_line, boundaries, runs, tokens, np.flatnonzero(is_row))
    return lines


def _banners_and_devices(big: bytes, u: np.ndarray, pct: np.ndarray, prefix: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                         file_first_line: np.ndarray, runs: list[RunInfo]) -> None:
    """Processes (`% MAGMA` banners) and visible devices per file, counted in numpy: every
    process prints them, so there are many; only each file's first is read as text."""
    n_files = len(runs)
    for code, name in ((BANNER_LINE, "banner"), (DEVICE_LINE, "device")):
        lines = pct[prefix == code]
        if not lines.size:
            continue
        file_of = np.searchsorted(file_first_line, lines, "right") - 1
        if name == "banner":
            counts = np.bincount(file_of, minlength=n_files)
            last = np.zeros(n_files, np.int64)
            np.maximum.at(last, file_of, lines - file_first_line[file_of] + 1)
            for run, count, at in zip(runs, counts.tolist(), last.tolist()):
                run.banners += count
                run.last_banner_line = max(run.last_banner_line, at)
            chosen = np.unique(file_of, return_index=True)[1]
        else:  # `% device N: ...`: the highest N, and the first device 0 line
            digits = u[np.minimum(starts[lines, None] + 9 + np.arange(3), u.size - 1)]
            isdigit = (digits >= 48) & (digits <= 57)
            index = np.where(isdigit[:, 0], digits[:, 0].astype(np.int64) - 48, -1)
            two = isdigit[:, 0] & isdigit[:, 1]
            index[two] = index[two] * 10 + digits[two, 1] - 48
            highest = np.full(n_files, -1, np.int64)
            np.maximum.at(highest, file_of, index)
            for run, top in zip(runs, highest.tolist()):
                run.visible_devices = max(run.visible_devices, top + 1)
            zero = index == 0
            chosen = np.flatnonzero(zero)[np.unique(file_of[zero], return_index=True)[1]]
        for i in chosen.tolist():
            run = runs[int(file_of[i])]
            text = big[starts[lines[i]] : ends[lines[i]]].decode("utf-8", "replace")
            if name == "banner" and (banner := fmt.BANNER.match(text)):
                run.version = run.version or banner.group(1)
            elif name == "device" and (device := fmt.DEVICE.match(text)):
                run.device, run.clock_mhz = device.group(2).strip(), float(device.group(3))


class _State:
    """Per file, while its lines are read: the tester and options the next header belongs to."""

    def __init__(self) -> None:
        self.test = ""
        self.options: dict[str, str] = {}
        self.in_trailer = False
        self.in_log = False
        self.flux_exit: int | None = None
        self.blocks: dict[tuple, int] = {}
        self.options_key: tuple = ()
        self.block = -1
        self.same: dict[bytes, int] = {}


def _read_other_lines(big: bytes, lines: np.ndarray, line_file: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                      file_first_line: np.ndarray, runs: list[RunInfo]) -> tuple[list[int], list[int], list[Block]]:
    """Read the chosen non-row lines in order; returns the header lines (global line index), the
    block each opens, and the blocks."""
    header_lines: list[int] = []
    header_blocks: list[int] = []
    blocks: list[Block] = []
    states = [_State() for _ in runs]
    # Every process prints the same usage, options and header lines: each distinct text is
    # understood once (`meaning`), and a file's `same` holds the lines that change nothing in
    # its present state (a header: the block it counts a process for), until the state changes.
    meaning: dict[bytes, tuple[str, Any]] = {}
    for i, f, a, b in zip(lines.tolist(), line_file.tolist(), starts[lines].tolist(), ends[lines].tolist()):
        raw = big[a:b]
        state = states[f]
        same = state.same.get(raw)
        if same is not None:
            if same >= 0:
                blocks[same].processes += 1
            continue
        known = meaning.get(raw)
        if known is None:
            known = meaning[raw] = _meaning(raw)
        kind, value = known
        run = runs[f]
        if kind == "header":
            test = state.test or "unknown"  # no usage or command line named the tester
            key = (test, state.options_key, value.header)
            block = state.blocks.get(key)
            if block is None:
                block = state.blocks[key] = len(blocks)
                blocks.append(Block(test, dict(state.options), value, f))
                if test not in run.tests:
                    run.tests.append(test)
            blocks[block].processes += 1
            if state.block != block:  # rows below belong to this block from here on
                header_lines.append(i)
                header_blocks.append(block)
                state.block, state.same = block, {}
            state.same[raw] = block
            continue
        if kind == "test":
            test, asked = value
            if asked:  # a command line: where its sizes start (never skipped as seen: each starts a run)
                run.commands.append((i - int(file_first_line[f]) + 1, test, asked))
            if test != state.test:
                state.test, state.options, state.options_key, state.same = test, {}, (), {}
            if not asked:
                state.same[raw] = -1
            continue
        if kind == "options":
            if not value.items() <= state.options.items():
                state.options.update(value)
                state.options_key = tuple(sorted(state.options.items()))
                state.same = {}
            state.same[raw] = -1
            continue
        text = raw.decode("utf-8", "replace").strip()
        line_no = i - int(file_first_line[f]) + 1
        _read_line(text, line_no, run, state)
    for run, state in zip(runs, states):
        if run.exit_code is None and state.flux_exit is not None:
            run.exit_code = state.flux_exit
    return header_lines, header_blocks, blocks


def _meaning(raw: bytes) -> tuple[str, Any]:
    """What a usage, options or header line means, whatever file it is in; ("other", None) for
    a line that must be read in its file's context."""
    text = raw.decode("utf-8", "replace").strip()
    if _header_like(text) and (layout := fmt.parse_header(text)) is not None:
        return "header", layout
    if "testing_" in text and not text.startswith("{") and not ERROR.match(text) and (test := fmt.tester_from(text)) is not None:
        return "test", (test, () if "Usage:" in text else fmt.asked_sizes(text))
    if OPTION_LINE.match(text) and (text.startswith(("%", "using:")) or ":" not in text):  # MAGMA 1.x prints options without `%`
        return "options", fmt.options_from(text)
    return "other", None


def _header_like(text: str) -> bool:
    """A column header names Gflop/s, or (eigen and singular value testers) times only."""
    return "lop/s" in text or "ime (" in text


def _read_line(text: str, line_no: int, run: RunInfo, state: _State) -> None:
    """What one non-row, non-header line says."""
    if _header_like(text) and not text.startswith("{"):  # a column header, but not one magma_layout knows
        run.unknown_headers.append((line_no, text))
        return
    if state.in_log and text.startswith("{"):
        if FLUX_EVENTS.search(text):  # most events change nothing: their JSON is not decoded
            _flux_event(run, text)
        return
    if text.startswith("START OF"):
        state.in_trailer = True
        state.in_log = text.startswith("START OF EVENTLOG")
        return
    if text.startswith("{"):
        if state.in_trailer:
            _jobspec(run, text)
        return
    if (banner := fmt.BANNER.match(text)) is not None:  # MAGMA 1.x: no `%`, so not counted in numpy
        run.banners += 1
        run.last_banner_line = line_no
        run.version = run.version or banner.group(1)
        return
    if (device := fmt.DEVICE.match(text)) is not None:
        index = int(device.group(1))
        run.visible_devices = max(run.visible_devices, index + 1)
        if index == 0 and not run.device:
            run.device, run.clock_mhz = device.group(2).strip(), float(device.group(3))
        return
    if text.startswith("%"):
        return
    for found in NODES.finditer(text):
        run.run_nodes = int(found.group(1) or found.group(2))
    for found in HOST.finditer(text):
        run.hosts.add(found.group(1) or found.group(2))
    if (epoch := EPOCH.match(text)) is not None:
        value = float(epoch.group(2))
        if epoch.group(1) == "Start":
            run.start = value if run.start is None else run.start
        else:
            run.end = value
    elif (event := EVENT.match(text)) is not None:
        run.cancelled = run.cancelled or event.group(1) == "cancel"
    elif (exited := FLUX_EXIT.match(text)) is not None:
        state.flux_exit = int(exited.group(1))
    elif text.startswith("Assert failed"):
        run.asserts.append((line_no, text))
    elif ERROR.match(text):
        run.errors.append((line_no, text))
    elif not state.in_trailer and not KNOWN_OTHER.match(text) and not NODES.search(text):
        run.unknown.append((line_no, text))


def _flux_event(run: RunInfo, raw: str) -> None:
    try:
        event = json.loads(raw)
    except ValueError:
        return
    if not isinstance(event, dict):
        return
    name, ctx, stamp = event.get("name"), event.get("context") or {}, event.get("timestamp")
    if not isinstance(ctx, dict):
        return
    if name == "shell.start" and isinstance(stamp, (int, float)):
        run.start = float(stamp)
        taskmap = ctx.get("taskmap")
        blocks = taskmap.get("map") if isinstance(taskmap, dict) else None
        if isinstance(blocks, list) and all(isinstance(b, list) and len(b) >= 2 and isinstance(b[1], int) for b in blocks):
            run.run_nodes = sum(b[1] for b in blocks)  # [first node, nodes, tasks per node, repeat]
    elif name == "done" and isinstance(stamp, (int, float)):
        run.end = float(stamp)
    elif name == "shell.task-exit":
        code = ctx.get("exitcode")
        if isinstance(code, int):
            run.exit_code = max(code, run.exit_code or 0)
        if ctx.get("signaled") or code in (130, 137, 143):
            run.cancelled = True
    elif name == "exception" and ctx.get("type") == "cancel":
        run.cancelled = True


def _jobspec(run: RunInfo, raw: str) -> None:
    """Nodes a Flux jobspec asks for (`resources: [{type: node, count: N}]`)."""
    try:
        spec = json.loads(raw)
    except ValueError:
        return
    resources = spec.get("resources") if isinstance(spec, dict) else None
    if isinstance(resources, list) and resources and isinstance(resources[0], dict) and resources[0].get("type") == "node":
        count = resources[0].get("count")
        if isinstance(count, int) and run.run_nodes is None:
            run.run_nodes = count


def label_blocks(blocks: list[Block], runs: list[RunInfo]) -> None:
    """A block's label is its tester, plus the options whose values differ between that
    tester's blocks in all files read (`dpotrf uplo=Lower`): such runs must not be pooled.
    Each file's processes are counted per label."""
    values: dict[str, dict[str, set[str]]] = {}
    count: dict[str, int] = {}
    having: dict[tuple[str, str], int] = {}
    for b in blocks:
        count[b.test] = count.get(b.test, 0) + 1
        for name, value in b.options.items():
            values.setdefault(b.test, {}).setdefault(name, set()).add(value)
            having[b.test, name] = having.get((b.test, name), 0) + 1
    for b in blocks:
        varying = sorted(name for name, seen in values.get(b.test, {}).items() if len(seen) > 1 or having[b.test, name] < count[b.test])
        b.label = " ".join([b.test] + [f"{name}={b.options.get(name, '?')}" for name in varying])
        runs[b.file].processes[b.label] = runs[b.file].processes.get(b.label, 0) + b.processes


def _assign_rows(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray, file_first_line: np.ndarray,
                 boundaries: tuple[list[int], list[int], list[Block]], runs: list[RunInfo], tokens: Tokens, row_of_candidate: np.ndarray) -> Lines:
    """Each row belongs to the latest header above it in its file; rows above their file's
    first header are counted, not read."""
    header_lines, header_blocks, blocks = boundaries
    row_file = np.searchsorted(file_first_line, rows, "right") - 1
    at = np.searchsorted(np.array(header_lines, np.int64), rows, "right") - 1
    block_file = np.array([b.file for b in blocks] + [-1], np.int64)
    header_block = np.array(header_blocks + [len(blocks)], np.int64)
    block = header_block[np.where(at >= 0, at, -1)]
    block = np.where(at >= 0, block, len(blocks))
    orphan = block_file[block] != row_file
    for f in row_file[orphan].tolist():
        runs[f].orphan_rows += 1
    keep = ~orphan
    rows, row_file, block, row_of_candidate = rows[keep], row_file[keep], block[keep], row_of_candidate[keep]
    for b, n in zip(*np.unique(block, return_counts=True)):
        blocks[int(b)].rows = int(n)
    line = (rows - file_first_line[row_file] + 1).astype(np.int64)
    per_file = np.bincount(row_file, minlength=len(runs))
    last_banner = np.array([r.last_banner_line for r in runs] or [0], np.int64)
    before = np.bincount(row_file[line < last_banner[row_file]], minlength=len(runs)) if rows.size else per_file
    for f, run in enumerate(runs):
        run.overlapped = run.banners > 1 and before[f] < 0.99 * per_file[f] * (run.banners - 1) / run.banners
    return Lines(starts[rows], ends[rows], row_file, line, block, blocks, runs, tokens,
                 tokens.first[row_of_candidate], tokens.count[row_of_candidate])
