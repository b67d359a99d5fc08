"""Provides plain logs: error, warning and success lines counted and located, an offset index of
line starts, and the tail.

    got = plain_log.read("analysis.log")
    got.meta["errors"], got.meta["error_lines"][:5], got.meta["tail"][-1]

`LINE_CLASSES` is the one place that says which lines are errors, warnings and successes (the
log view highlights with it). A log is read in chunks of `CHUNK` bytes, each cut at a line end:
the line starts of each chunk come from numpy, and each class's words are found with bytes.find over
the chunk, mapped to line numbers with a binary search, so a long log costs no Python loop per
line. `line_index` yields the offsets chunk by chunk, so a viewer can show the first screen at
once and seek anywhere while the rest is indexed. Memory stays bounded: at most `MAX_BYTES` are
scanned (a larger log says so), and at most `MAX_NUMBERS` line numbers are kept per class.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Iterator

import numpy as np

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.base import FileRead, Head
from gpuscope.parsers.files import MAX_BYTES, MAX_LINES, MB, _human, describe_lines, display_name, head_bytes, open_regular, suffix

KIND = "log"
TITLE = "Plain log"
VIEW = "log"
BOUNDED = False
SUFFIXES = (".log", ".out", ".err", ".txt")


def match(name: str, head: Head) -> str | None:
    found = suffix(name)
    return f"`{found}` name: plain log" if found in SUFFIXES else None


def describe(head: Head, size: int) -> str:
    """Lines, and when the whole log is in the head its error / warning / success lines (a longer
    log is counted when it is read: recognition never reads past the head)."""
    data = head_bytes(head)
    lines = describe_lines(data, size)
    if not data or len(data) < size:
        return lines
    said = [f"{n} {name}{'s' if n != 1 else ''}" for name, n in count_classes(data).items() if n]
    return " · ".join([lines, *said])


CHUNK = 4 * MB
MAX_NUMBERS = 10_000
"""Line numbers kept per class (the count goes on)."""
TAIL_BYTES = 64 * 1024
TAIL_LINES = 200
MAX_LINE_SHOWN = 500
"""Characters of a flagged line kept in the table."""

LINE_CLASSES: tuple[tuple[str, tuple[bytes, ...]], ...] = (
    # (class, words): a line holding one of the words (as a whole word) is of the class; the
    # first class that matches wins. Plain words, not one regex: bytes.find runs at memory
    # speed, where an alternation with word boundaries costs ~0.1 s per MB.
    ("error", (b"ERROR", b"Error:", b"error:", b"FATAL", b"Fatal error", b"Traceback (most recent call last)",
               b"Segmentation fault", b"CANCELLED AT", b"Out Of Memory", b"oom-kill", b"oom_kill", b"CUDA error")),
    ("warning", (b"WARNING", b"Warning:", b"warning:", b"WARN")),
    ("success", (b"COMPLETED SUCCESSFULLY", b"TRAINING COMPLETE", b"SUCCESS", b"SUCCESSFUL", b"SUCCESSFULLY", b"ALL TESTS PASSED")),
)
CLASSES = tuple(name for name, _ in LINE_CLASSES)
_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _hits(data: bytes, word: bytes) -> list[int]:
    """Where `word` occurs in `data` as a whole word (no letter, digit or _ glued to either
    end that is itself a letter)."""
    out, at, n = [], data.find(word), len(word)
    check_end = word[-1] in _WORD
    while at >= 0:
        before = data[at - 1] if at else 32
        after = data[at + n] if at + n < len(data) else 32
        if before not in _WORD and not (check_end and after in _WORD):
            out.append(at)
        at = data.find(word, at + n)
    return out


def classify(line: str | bytes) -> str | None:
    """'error', 'warning', 'success' or None for one line."""
    data = line.encode("utf-8", "replace") if isinstance(line, str) else line
    return next((name for name, words in LINE_CLASSES if any(_hits(data, w) for w in words)), None)


def line_rows(starts: np.ndarray, data: bytes, offset: int = 0) -> dict[str, np.ndarray]:
    """For each class, the indexes (into `starts`) of its lines in `data`; a line has one class."""
    taken = np.zeros(len(starts), bool)
    out = {}
    for name, words in LINE_CLASSES:
        at = np.array([h for w in words for h in _hits(data, w)], np.int64) + offset
        rows = np.unique(np.searchsorted(starts, at, side="right") - 1)
        rows = rows[~taken[rows]]
        taken[rows] = True
        out[name] = rows
    return out


def count_classes(data: bytes) -> dict[str, int]:
    """How many error, warning and success lines `data` (whole lines of text) holds."""
    return {name: len(rows) for name, rows in line_rows(line_starts(0, data), data).items()}


def read_chunks(handle: BinaryIO, limit: int, chunk: int = CHUNK) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) pieces of the file, each ending at a line end (except the last), up to `limit` bytes."""
    offset, carry = 0, b""
    while offset + len(carry) < limit:
        data = handle.read(min(chunk, limit - offset - len(carry)))
        if not data:
            break
        data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        yield offset, data[:cut]
        offset += cut
        carry = data[cut:]
    if carry:
        yield offset, carry


def line_starts(offset: int, data: bytes) -> np.ndarray:
    """Offsets of the lines that start in `data` (which starts a line)."""
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
    starts = np.concatenate(([0], ends + 1))
    if starts[-1] >= len(data):
        starts = starts[:-1]
    return starts.astype(np.int64) + offset


def line_index(path: str | Path, limit: int = MAX_BYTES, chunk: int = CHUNK) -> Iterator[np.ndarray]:
    """The byte offsets of line starts, one array per chunk, for a viewer that seeks. Yields
    nothing for a file that cannot be opened (`read` says why)."""
    handle, _, _ = open_regular(path, display_name(path))
    if handle is None:
        return
    with handle:
        for offset, data in read_chunks(handle, limit, chunk):
            yield line_starts(offset, data)


def _tail(handle: BinaryIO, size: int) -> list[str]:
    start = max(0, size - TAIL_BYTES)
    handle.seek(start)
    data = handle.read(TAIL_BYTES)
    if start > 0:  # the first piece is part of a line
        data = data[data.find(b"\n") + 1:]
    return [clean(line) for line in data.decode("utf-8", "replace").splitlines()[-TAIL_LINES:]]


def read(path: str | Path, limit: int = MAX_BYTES) -> FileRead:
    """Counts, line numbers and a table of the flagged lines (line, class, text), the offsets of
    line starts and the tail. An unreadable or binary file is one finding."""

    label = display_name(path)
    handle, size, findings = open_regular(path, label)
    if handle is None:
        return FileRead(None, findings, {})
    numbers: dict[str, list[np.ndarray]] = {name: [] for name in CLASSES}
    counts = dict.fromkeys(CLASSES, 0)
    offsets: list[np.ndarray] = []
    flagged: list[tuple[int, str, str]] = []
    lines = 0
    with handle:
        try:
            for offset, data in read_chunks(handle, limit):
                if offset == 0 and b"\x00" in data[:8192]:
                    return FileRead(None, [Finding("error", "binary", "binary file, not a text log", label)], {"bytes": size})
                starts = line_starts(offset, data)
                if lines + len(starts) <= MAX_LINES:
                    offsets.append(starts)
                for name, rows in line_rows(starts, data, offset).items():
                    counts[name] += len(rows)
                    kept = sum(len(a) for a in numbers[name])
                    if kept < MAX_NUMBERS:
                        numbers[name].append(rows[:MAX_NUMBERS - kept] + lines + 1)
                    for row in rows[:max(0, MAX_NUMBERS - len(flagged))]:
                        begin = int(starts[row]) - offset
                        end = data.find(b"\n", begin)
                        text = data[begin:end if end >= 0 else len(data)][:MAX_LINE_SHOWN * 4]
                        flagged.append((lines + int(row) + 1, name, clean(text.decode("utf-8", "replace"))[:MAX_LINE_SHOWN]))
                lines += len(starts)
            tail = _tail(handle, size)
        except OSError as exc:
            return FileRead(None, [Finding("error", "unreadable", f"cannot read: {exc.strerror or exc}", label)], {})
    if size > limit:
        findings.append(Finding("warning", "partial", f"{_human(size)}: counted in the first {_human(limit)} only (GPUSCOPE_MAX_FILE_MB raises it); the tail is the file's end", label))
    if lines > MAX_LINES:
        findings.append(Finding("info", "partial", f"line offsets kept for the first {MAX_LINES:,} lines", label))
    flagged.sort()
    import pandas as pd  # the findings table only: following and viewing a log never load pandas

    table = pd.DataFrame({"line": pd.array([f[0] for f in flagged], dtype="Int64"),
                          "severity": pd.array([f[1] for f in flagged], dtype="string"),
                          "text": pd.array([f[2] for f in flagged], dtype="string")})
    meta = {
        "bytes": size, "lines": lines,
        "errors": counts["error"], "warnings": counts["warning"], "successes": counts["success"],
        **{f"{name}_lines": (np.concatenate(numbers[name]).tolist() if numbers[name] else []) for name in CLASSES},
        "offsets": np.concatenate(offsets) if offsets else np.zeros(0, np.int64),
        "tail": tail,
    }
    return FileRead(table, findings, meta)
