"""Provides the recognition rules of the families whose readers live in subfolders (MAGMA,
run logs, recordings) until each moves its rules into its own kind module: pure functions over
a file's name and head, that read nothing. The other kinds' rules are in their kind modules.
"""

from __future__ import annotations

import re

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.base import Head
from gpuscope.parsers.csv_table import match as match_csv  # noqa: F401 - runlogs' own sniffing still calls it here
from gpuscope.parsers.files import first_line as _first_line
from gpuscope.parsers.files import head_bytes as _bytes
from gpuscope.parsers.files import head_text as _text
from gpuscope.parsers.files import line_at as _line_at
from gpuscope.parsers.files import line_of as _line_of
from gpuscope.parsers.files import quote as _quote


# ============================================================== rules: recording
ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"


def match_recording(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not data.startswith(ARROW_STREAM_MAGIC):
        return None
    from gpuscope.parsers.recording import read as recording
    return "Arrow IPC stream with gpuscope's schema version: a recording" if recording.looks_like_recording(data) else None


# ============================================================== rules: MAGMA
MAGMA_MARKERS = (b"MAGMA ", b"Gflop/s", b"GFlop/s", b"START OF JOBSPEC", b"Assert failed")
"""`magma` reads a file met in a folder it was given when its text holds one of these (the
banner, the table header, a Flux trailer, or the assertions of a run that printed nothing
else): `mentions_magma`. Recognition among all kinds asks for more (`match_magma`), so that a
README that mentions MAGMA stays a README."""
_MAGMA_LINES = (
    (re.compile(rb"^% MAGMA \d", re.MULTILINE), "banner"),
    (re.compile(rb"^%.*G[Ff]lop/s", re.MULTILINE), "table header"),
    (re.compile(rb"^Assert failed: ", re.MULTILINE), "assertion of a MAGMA tester"),
)
_MAGMA_TESTER = re.compile(rb"testing_\w+")


def mentions_magma(data: bytes) -> bool:
    """One of MAGMA_MARKERS anywhere in `data` (a whole file: no more than a substring search)."""
    return any(m in data for m in MAGMA_MARKERS)


def match_magma(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not mentions_magma(data):  # substring searches first: most files are not MAGMA output
        return None
    for pattern, what in _MAGMA_LINES:
        found = pattern.search(data)
        if found is not None:
            line = _line_at(data[found.start():found.start() + 200].decode("utf-8", "replace"), 0)
            return f"{_quote(line)} {what} on line {_line_of(data, found.start())}"
    if b"START OF JOBSPEC" in data and _MAGMA_TESTER.search(data):
        return f"Flux jobspec trailer running {_MAGMA_TESTER.search(data).group().decode()}: MAGMA tester output"  # type: ignore[union-attr]
    return None


def describe_magma(head: Head, size: int) -> str:
    found = _MAGMA_TESTER.search(_bytes(head))
    return f"MAGMA {found.group().decode()}" if found else "MAGMA output"


# ============================================================== rules: run logs
def match_mlperf(name: str, head: Head) -> str | None:
    text = _text(head)
    at = text.find(fmt.MLLOG_TAG)
    return None if at < 0 else f"`:::MLLOG` JSON lines (first on line {_line_of(text, at)}): MLPerf log"


def match_reframe(name: str, head: Head) -> str | None:
    text = _text(head)
    if "job_completion_time" in _first_line(text):
        return "`job_completion_time` header: ReFrame perflog"
    at = next((i for i, ln in enumerate(text.split("\n", 20)[:20]) if "|reframe " in ln), None)
    return None if at is None else f"`|reframe ` field on line {at + 1}: ReFrame perflog"


def sacct_delimiter(header: str) -> str | None:
    """The field separator of a sacct header line naming JobID, or None."""
    for delim in ("|", "\t", ","):
        if delim in header and "JobID" in [h.strip() for h in header.split(delim)]:
            return delim
    return None


def match_sacct(name: str, head: Head) -> str | None:
    first = _first_line(_text(head))
    delim = sacct_delimiter(first)
    if delim is None or not first.lstrip().startswith("JobID") and delim != "|":
        return None
    if not first.lstrip().startswith("JobID") and "State" not in first and "Elapsed" not in first:
        return None
    return f"`{'|' if delim == '|' else 'tab' if delim == chr(9) else ','}`-separated header with JobID: sacct"


_SEED_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (fmt.SLURM_ECHO, "Slurm variable echo"),
    (fmt.JOB_ID_LINE, "`Job ID:` line"),
    *((p, "seed 002 training summary") for p in fmt.SEED002_MARKERS),
    (fmt.SEED002_TABLE_TITLE, "seed 002 results table"),
    *((p, "seed 004 training line") for p in fmt.SEED004_MARKERS),
    *((p, "resource line") for p, _kind in fmt.LOG_RESOURCE_LINES),
)
_SEED_SCAN = re.compile("|".join("(?:" + re.sub(r"\(\?P<\w+>", "(?:", p.pattern) + ")" for p, _ in _SEED_PATTERNS), re.MULTILINE)
"""All of them in one regex (their group names dropped: names may not repeat), so a head is
searched once, not line by line and pattern by pattern."""


def match_seed_log(name: str, head: Head) -> str | None:
    """A training / Slurm job log of the seeds' shape (002, 004): one of their lines in the head."""
    text = _text(head)
    found = _SEED_SCAN.search(text)
    if found is None:
        return None
    at = found.start() + (len(found.group()) - len(found.group().lstrip()))  # `^\s*` may span blank lines
    line = _line_at(text, at)
    what = next((w for p, w in _SEED_PATTERNS if p.match(line)), "training line")
    return f"{_quote(line)} {what} on line {_line_of(text, at)}: training log"


def describe_mlperf(head: Head, size: int) -> str:
    found = re.search(r'"key": *"submission_benchmark", *"value": *"([^"]{1,40})"', _text(head))
    return f"MLPerf {clean(found.group(1))}" if found else "MLPerf log"
