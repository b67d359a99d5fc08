"""Provides `other_lines()`: what the lines around a MAGMA table say about the run.

Everything in a MAGMA output that is neither a `%` banner/header line nor a data row: the Flux
eventlog (wall time, exit codes, signals), the job script's Start/End time lines, Flux's
cancel events, `Assert failed` and error messages, and lines nobody recognises (counted and
reported, never silently dropped). These are few, so they are read one by one.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from gpuscope.parsers.magma_scan import FileScan

FLUX_EXIT = re.compile(r"flux-job: task\(s\) exited with exit code (\d+)")
EVENT = re.compile(r"[\d.]+s: job\.exception type=(\w+)")
EPOCH = re.compile(r"(Start|End) time:\s*(\d+(?:\.\d+)?)\s*$")
ERROR = re.compile(r"(?:error:|Error:|CUDA runtime error|CUBLAS error|MAGMA error|\w+ returned error|Can not allocate|failed at )")
KNOWN_OTHER = re.compile(
    r"^(?:Compiled (?:with|for) |(?:\S*/)?testing_\w+(?:\s|$)|summary$|routines with failures|START OF (?:JOBSPEC|EVENTLOG)|\{.*|flux-job:|"
    r"singularity in matrix|M != N|WARNING: MAGMA|device \d+ has only|=+$|\*+$|\[enter to continue)"
)


EVENT_NAMES = ('"shell.start"', '"done"', '"shell.task-exit"', '"exception"', "\\")
"""The eventlog names `_flux_event` reads, as they appear in the JSON text (a backslash may
escape one of them: such a line is always parsed)."""
EVENT_BYTES = re.compile(b"|".join(re.escape(name.encode()) for name in EVENT_NAMES + ("\ufffd",)))  # U+FFFD: see the text
EVENT_TEXT = re.compile("|".join(re.escape(name) for name in EVENT_NAMES))
"""Whether a decoded eventlog line names one of EVENT_NAMES (one search instead of five)."""


def _flux_event(scan: "FileScan", raw: str) -> None:
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


def other_lines(scans: list["FileScan"], data: bytes | bytearray, other: np.ndarray, first_line: np.ndarray) -> None:
    """Sort the few non-`%`, non-row lines of a batch's files: trailer (Flux eventlog,
    Start/End time), exit and cancel events, asserts, error messages, and lines nobody
    recognises. `other` holds them file after file, a column each: line index, start, end
    (offsets in `data`) and file; `first_line` is each file's first line index."""
    scan: "FileScan | None" = None
    current = -1
    in_log = in_trailer = False
    flux_exit: int | None = None
    base = 0
    for i, a, b, f in zip(*(column.tolist() for column in other)):
        if f != current:  # a new file: its own trailer state
            if scan is not None:
                _exit_code(scan, flux_exit)
            scan, current, base = scans[f], f, int(first_line[f])
            in_log = in_trailer = False
            flux_exit = None
        raw = data[a:b]
        if raw.lstrip()[:1] == b"{" and (not in_log or EVENT_BYTES.search(raw) is None):
            continue  # JSON that changes nothing (the jobspec, most events): no need to decode or parse it
        text = raw.decode("utf-8", "replace").strip()
        line_no = i - base + 1
        if text.startswith("START OF"):
            in_trailer = True
            in_log = text.startswith("START OF EVENTLOG")
            continue
        if in_log and text.startswith("{"):
            if EVENT_TEXT.search(text):  # most events change nothing: skip their JSON
                _flux_event(scan, text)
            continue
        # Each pattern below starts with a known character: try only the ones that can match.
        head = text[:1]
        if head == "{":  # JSON outside the eventlog (the jobspec): known, nothing to record
            continue
        if head in "SE" and (epoch := EPOCH.match(text)) is not None:
            value = float(epoch.group(2))
            if epoch.group(1) == "Start":
                scan.start = value if scan.start is None else scan.start
            else:
                scan.end = value
        elif (head == "." or head.isdigit()) and (event := EVENT.match(text)) is not None:  # isdigit: all that `\d` takes
            scan.cancelled = scan.cancelled or event.group(1) == "cancel"
        elif head == "f" and (exited := FLUX_EXIT.match(text)) is not None:
            flux_exit = int(exited.group(1))
        elif text.startswith("Assert failed"):
            scan.asserts.append((line_no, text))
        elif ERROR.match(text):
            scan.errors.append((line_no, text))
        elif not in_trailer and not KNOWN_OTHER.match(text):
            scan.unknown.append((line_no, text))
    if scan is not None:
        _exit_code(scan, flux_exit)


def _exit_code(scan: "FileScan", flux_exit: int | None) -> None:
    """`flux-job: task(s) exited with exit code N` counts when the eventlog named none."""
    if scan.exit_code is None and flux_exit is not None:
        scan.exit_code = flux_exit
