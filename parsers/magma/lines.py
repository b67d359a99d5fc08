"""Provides `scan()`: one regular expression pass over each MAGMA output file that finds its runs of
data rows and reads the few other lines that say something, in file order.

A data row starts with a whole number followed by a number or `---`; consecutive rows are one
match, so rows cost the expression's C loop only. Usage and command lines, options and headers
give each run of rows its block; every process prints them again, so what a line means is
looked up once; banners and device lines too (another expression would test every line
again). Chatter (`% CUDA runtime`, dates, `%====`) is never a match. What the job around the
tester printed (Flux trailers, Slurm variables) goes to `JobLog`. Line numbers come from one
numpy pass over the newlines, looked up only where a line number is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.metrics.magma.run import RunInfo, block_labels
from gpuscope.parsers.joblog import JobLog
from gpuscope.parsers.magma import layout as fmt

SEPARATORS = bytes(range(0x2A)).replace(b"\n", b"")
"""Row separators: blanks, control bytes and `!"#$%&'()` (`(` and `)` part `94.60 (   0.26)`)."""
BLANKS = bytes.maketrans(SEPARATORS, b" " * len(SEPARATORS))
"""Every separator becomes a blank, so `94.60 (   0.26)` is two fields for the CSV parser."""
SEP = b"[" + re.escape(SEPARATORS) + b"]"
_ROW = SEP + rb"*\d+" + SEP + rb"+(?:--|[-+]?[\d.nNiI])[^\n]*"  # no possessive quantifiers: Python 3.10's re lacks them
_CHATTER = rb"% (?:Compil|CUDA r|HIP ru|If run|relati|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) )|% device(?! \d+:)|%=|% {7}"
LINE = re.compile(rb"\n(?:(" + _ROW + rb"(?:\n" + _ROW + rb")*)|(?!" + _CHATTER + rb")([ \t\r\f\v]*\S[^\n]*))")
"""Each match starts at the newline before its line(s): group 1 a run of data rows, or group 2 one other line."""
BANNER = re.compile(rb"% MAGMA |MAGMA \d")
"""A process's first line (MAGMA 1.x prints no `%`)."""
DEVICE = re.compile(rb"(?:% )?device (\d+):")
"""A device the process sees (`% device 1: ...`)."""
BANNER_SEEN, NOTHING = -2, -1
"""`same` codes (see `scan`): a banner (counted, where it is noted), a line that changes nothing."""

ERROR = re.compile(r"(?:error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|\w+ returned error|Can not allocate|failed at )")
OPTION_LINE = re.compile(r"^%?\s*(?:using:\s*)?(?:\w+\s*=\s*\S|ngpu\s+\d|version\s+\d)")
KNOWN_OTHER = re.compile(r"^(?:Compiled (?:with|for) |summary$|routines with failures|flux-job:|singularity in matrix|M != N|WARNING: MAGMA|"
                         r"device \d+ has only|=+$|\*+$|\[enter to continue|Loading |CUDA runtime |Usage:|"
                         r"\d+ tests? (?:in \d+ commands? passed|failed)|\d+ errors? detected|\*\* \d+ tests? failed|all \d+ tests? in)")  # run_tests.py
HEADER_LIKE = re.compile(r"lop/s|ime \(")
"""A column header names Gflop/s, or (eigen and singular value testers) times only."""


@dataclass
class Block:
    """The rows of one file under one tester, options and header."""

    test: str
    options: dict[str, str]
    layout: fmt.Layout
    file: int
    label: str = ""
    """The test as the tables name it (`run.block_labels`)."""
    processes: int = 0
    """Headers printed: one per process."""


def scan(big: bytes, ends: list[int], runs: list[RunInfo]) -> tuple[list[Block], np.ndarray]:
    """The blocks of all files, and their runs of data rows: a row (file, start, end, first line
    number, lines, block) each; what the other lines say goes to the file's `run`. `big` is a
    newline and the files' texts, file f's ending at ends[f]. `meaning` caches what a line means,
    for all files; `same`, the lines that change nothing in the present state (a header: the
    block it counts a process for; BANNER_SEEN; NOTHING)."""
    newlines = np.flatnonzero(np.frombuffer(big, np.uint8) == 10)
    blocks: list[Block] = []
    found: list[int] = []  # file, start, end, block of each run of rows, flat
    meaning: dict[bytes, tuple[str, Any]] = {}
    last_banners: list[int] = []  # per file, where its last banner is (-1: none)
    for file, (run, lo, hi) in enumerate(zip(runs, [0, *ends], ends)):
        first_newline = int(newlines.searchsorted(lo))  # a line's number: the file's newlines before it
        job, device_0_read, last_banner = JobLog(), False, -1
        test, options, options_key, block = "", {}, (), -1
        mine: dict[tuple, int] = {}
        same: dict[bytes, int] = {}
        for match in LINE.finditer(big, lo, hi):
            raw = match[2]
            if raw is None:
                start, end = match.span(1)
                if block < 0:  # rows above the file's first header: counted, not read
                    run.orphan_rows += big.count(b"\n", start, end) + 1
                else:
                    found += (file, start, end, block)
                continue
            seen = same.get(raw)
            if seen is not None:
                if seen >= 0:
                    blocks[seen].processes += 1
                elif seen == BANNER_SEEN:
                    run.banners, last_banner = run.banners + 1, match.start()
                continue
            kind, value = meaning.get(raw) or meaning.setdefault(raw, _meaning(raw))
            if kind == "header":
                key = (test or "unknown", options_key, value.header)  # "unknown": no usage or command line named it
                if key not in mine:
                    mine[key] = len(blocks)
                    blocks.append(Block(key[0], options, value, file))
                    if key[0] not in run.tests:
                        run.tests.append(key[0])
                if block != mine[key]:  # rows below belong to this block from here on
                    block, same = mine[key], {}
                blocks[block].processes += 1
                same[raw] = block
            elif kind == "test":
                name, asked = value
                if name != test:
                    test, options, options_key, same = name, {}, (), {}
                if asked:  # a command line: where its sizes start (never `same`: each starts a run)
                    run.commands.append((int(newlines.searchsorted(match.start() + 1)) - first_newline, name, asked))
                else:
                    same[raw] = NOTHING
            elif kind == "options":
                if not value.items() <= options.items():
                    options = {**options, **value}
                    options_key, same = tuple(sorted(options.items())), {}
                same[raw] = NOTHING
            elif kind == "banner":  # only the first one is read
                if not run.banners:
                    run.version = value
                run.banners, last_banner = run.banners + 1, match.start()
                same[raw] = BANNER_SEEN
            elif kind == "device":  # only the first device 0 line is read
                number, device = value
                if number == 0 and not device_0_read:
                    device_0_read = True
                    if device is not None:
                        run.device, run.clock_mhz = device
                run.visible_devices = max(run.visible_devices, number + 1)
                same[raw] = NOTHING
            else:
                text = raw.decode("utf-8", "replace").strip()
                said = _other(text, run, job)
                if said is not None:
                    said.append((int(newlines.searchsorted(match.start() + 1)) - first_newline, text))
        last_banners.append(last_banner)
        run.start, run.end, run.exit_code, run.cancelled, run.run_nodes, run.hosts = job.start, job.end, job.exit_code, job.cancelled, job.nodes, job.hosts
    at = np.array(found, np.int64).reshape(-1, 4)
    file_of, start, end = at[:, 0], at[:, 1], at[:, 2]
    first_line = newlines.searchsorted(start) - newlines.searchsorted(np.array([0, *ends], np.int64)[file_of])
    lines = newlines.searchsorted(end) - newlines.searchsorted(start) + 1
    last_banner = np.array(last_banners or [-1], np.int64)[file_of]
    row_lines = np.bincount(file_of, lines, len(runs))
    before = np.bincount(file_of, np.where(start < last_banner, lines, 0), len(runs))  # a run of rows holds no banner
    for run, n, n_before in zip(runs, row_lines.astype(np.int64).tolist(), before.astype(np.int64).tolist()):
        run.row_lines, run.rows_before_last_banner = n, n_before
    for b, label in zip(blocks, block_labels([(b.test, b.options) for b in blocks])):
        b.label = label
        runs[b.file].processes[label] = runs[b.file].processes.get(label, 0) + b.processes
    return blocks, np.column_stack([file_of, start, end, first_line, lines, at[:, 3]])


def _meaning(raw: bytes) -> tuple[str, Any]:
    """What a banner, device, usage, options or header line means, whatever file it is in;
    ("other", None) for a line that must be read in its file's context."""
    if BANNER.match(raw):
        found = fmt.BANNER.match(raw.decode("utf-8", "replace"))
        return "banner", found.group(1) if found else ""
    if (number := DEVICE.match(raw)) is not None:
        device = fmt.DEVICE.match(raw.decode("utf-8", "replace"))
        return "device", (int(number.group(1)), (device.group(2).strip(), float(device.group(3))) if device else None)
    text = raw.decode("utf-8", "replace").strip()
    if HEADER_LIKE.search(text) and (layout := fmt.parse_header(text)) is not None:
        return "header", layout
    if "testing_" in text and not text.startswith("{") and not ERROR.match(text) and (test := fmt.tester_from(text)) is not None:
        return "test", (test, () if "Usage:" in text else fmt.asked_sizes(text))
    if OPTION_LINE.match(text) and (text.startswith(("%", "using:")) or ":" not in text):  # MAGMA 1.x prints options without `%`
        return "options", fmt.options_from(text)
    return "other", None


def _other(text: str, run: RunInfo, job: JobLog) -> list[tuple[int, str]] | None:
    """What a line that is no row, usage, options, known header, banner or device line says:
    the list of `run` it goes to with its line number, if any."""
    if HEADER_LIKE.search(text) and not text.startswith("{"):  # a column header, but not one the layout table knows
        return run.unknown_headers
    if text.startswith("%") or job.read(text):
        return None
    if text.startswith("Assert failed"):
        return run.asserts
    if ERROR.match(text):
        return run.errors
    if not job.in_trailer and not KNOWN_OTHER.match(text):
        return run.unknown
    return None
