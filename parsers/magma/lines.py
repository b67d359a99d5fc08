"""Provides `scan()`: one regular expression pass over a MAGMA output file that finds its runs of
data rows and the few other lines that say something, and reads those in file order.

A data row starts with a whole number followed by a number or `---`; consecutive rows are one
match, so the rows cost the expression's C loop only. The other lines that matter (usage and
command lines, options and headers, which give each run of rows its block; Flux eventlog,
Start/End time, asserts, errors) are read here in Python. Banner chatter every process prints
(`% CUDA runtime`, dates, `%====`) is never a match; banners and devices are counted by their
own expressions over the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gpuscope.metrics.magma.run import RunInfo
from gpuscope.parsers.magma import layout as fmt


MARKERS = (b"MAGMA ", b"Gflop/s", b"GFlop/s", b"START OF JOBSPEC", b"Assert failed")
"""`magma` reads a file met in a folder it was given when its text holds one of these (the
banner, the table header, a Flux trailer, or the assertions of a run that printed nothing
else): `mentions_magma`. Recognition among all kinds asks for more (`match`), so that a
README that mentions MAGMA stays a README."""


def mentions_magma(data: bytes) -> bool:
    """One of MARKERS anywhere in `data` (a whole file: no more than a substring search)."""
    return any(m in data for m in MARKERS)

SEPARATORS = bytes(range(0x2A)).replace(b"\n", b"")
"""Row separators: blanks, control bytes and `!"#$%&'()` (`(` and `)` part `94.60 (   0.26)`)."""
BLANKS = bytes.maketrans(SEPARATORS, b" " * len(SEPARATORS))
"""Every separator becomes a blank, so `94.60 (   0.26)` is two fields for the CSV parser."""
SEP = b"[" + re.escape(SEPARATORS) + b"]"
_ROW = SEP + rb"*\d+" + SEP + rb"+(?:[-+]?[\d.nNiI]|--)[^\n]*"
_CHATTER = rb"% (?:MAGMA |device|Compil|CUDA r|HIP ru|If run|relati|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )|%=|% {7}"
LINE = re.compile(rb"\n(?:(?P<rows>" + _ROW + rb"(?:\n" + _ROW + rb")*)|(?!" + _CHATTER + rb")(?P<text>[^\n]*\S[^\n]*))")
"""Each match starts at the newline before its line(s): a run of data rows, or one other line."""
BANNER = b"\n% MAGMA "
DEVICES = re.compile(rb"\n% device (\d+):")
DEVICE0 = re.compile(rb"\n% device 0:[^\n]*")

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


@dataclass
class _State:
    """While a file's lines are read: the tester and options the next header belongs to."""

    test: str = ""
    options: dict[str, str] = field(default_factory=dict)
    options_key: tuple = ()
    in_trailer: bool = False
    in_log: bool = False
    flux_exit: int | None = None
    blocks: dict[tuple, int] = field(default_factory=dict)
    block: int = -1
    same: dict[bytes, int] = field(default_factory=dict)
    """Lines that change nothing in the present state (a header: the block it counts a process for)."""


def scan(big: bytes, lo: int, hi: int, file: int, run: RunInfo, blocks: list[Block], meaning: dict[bytes, tuple[str, Any]]) -> list[tuple[int, int, int, int, int]]:
    """The runs of data rows of the file big[lo+1:hi+1] (big[lo] is the newline before it; it
    ends with one): (start, end, first line number, lines, block) each; the file's blocks are
    appended to `blocks`, what its other lines say goes to `run`. `meaning` caches what a
    usage, options or header line means, for all files (every process prints the same)."""
    _banners_and_devices(big, lo, hi, run)
    state = _State()
    found: list[tuple[int, int, int, int, int]] = []
    line, at = 0, lo
    for match in LINE.finditer(big, lo, hi):
        start = match.start() + 1
        end = match.end("rows")
        if end >= 0:
            line, at = line + big.count(b"\n", at, start), start
            lines = big.count(b"\n", start, end) + 1
            if state.block < 0:  # rows above the file's first header: counted, not read
                run.orphan_rows += lines
            else:
                found.append((start, end, line, lines, state.block))
            continue
        raw = match.group("text")
        same = state.same.get(raw)
        if same is not None:
            if same >= 0:
                blocks[same].processes += 1
            continue
        kind, value = meaning.get(raw) or meaning.setdefault(raw, _meaning(raw))
        line, at = line + big.count(b"\n", at, start), start  # line numbers are counted where one is needed
        if kind == "header":
            test = state.test or "unknown"  # no usage or command line named the tester
            key = (test, state.options_key, value.header)
            block = state.blocks.get(key)
            if block is None:
                block = state.blocks[key] = len(blocks)
                blocks.append(Block(test, dict(state.options), value, file))
                if test not in run.tests:
                    run.tests.append(test)
            blocks[block].processes += 1
            if state.block != block:  # rows below belong to this block from here on
                state.block, state.same = block, {}
            state.same[raw] = block
        elif kind == "test":
            test, asked = value
            if asked:  # a command line: where its sizes start (never skipped as seen: each starts a run)
                run.commands.append((line, test, asked))
            if test != state.test:
                state.test, state.options, state.options_key, state.same = test, {}, (), {}
            if not asked:
                state.same[raw] = -1
        elif kind == "options":
            if not value.items() <= state.options.items():
                state.options.update(value)
                state.options_key = tuple(sorted(state.options.items()))
                state.same = {}
            state.same[raw] = -1
        else:
            _read_line(raw.decode("utf-8", "replace").strip(), line, run, state)
    if run.exit_code is None and state.flux_exit is not None:
        run.exit_code = state.flux_exit
    return found


def _banners_and_devices(big: bytes, lo: int, hi: int, run: RunInfo) -> None:
    """Processes (`% MAGMA` banners) and visible devices: every process prints them, so they
    are counted by expressions; only the first banner and device 0 line are read."""
    banners = big.count(BANNER, lo, hi)
    if banners:
        run.banners += banners
        run.last_banner_line = max(run.last_banner_line, big.count(b"\n", lo, big.rfind(BANNER, lo, hi) + 1))
        first = big.find(BANNER, lo, hi) + 1
        found = fmt.BANNER.match(big[first : big.index(b"\n", first)].decode("utf-8", "replace"))
        run.version = run.version or (found.group(1) if found else "")
    devices = DEVICES.findall(big, lo, hi)
    if devices:
        run.visible_devices = max(run.visible_devices, max(int(d) for d in set(devices)) + 1)
        zero = DEVICE0.search(big, lo, hi)
        if zero is not None and (device := fmt.DEVICE.match(zero.group()[1:].decode("utf-8", "replace"))):
            run.device, run.clock_mhz = device.group(2).strip(), float(device.group(3))


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
    if _header_like(text) and not text.startswith("{"):  # a column header, but not one the layout table knows
        run.unknown_headers.append((line_no, text))
        return
    if state.in_log and text.startswith("{"):
        if FLUX_EVENTS.search(text):  # most events change nothing: their JSON is not decoded
            _flux_event(run, text)
        return
    if text.startswith("START OF"):
        state.in_trailer, state.in_log = True, text.startswith("START OF EVENTLOG")
        return
    if text.startswith("{"):
        if state.in_trailer:
            _jobspec(run, text)
        return
    if (banner := fmt.BANNER.match(text)) is not None:  # MAGMA 1.x: no `%`, so not counted with the others
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


def _json(raw: str) -> dict:
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _flux_event(run: RunInfo, raw: str) -> None:
    event = _json(raw)
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
    resources = _json(raw).get("resources")
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
