"""Provides the one table of file kinds: how each is recognised, and which reader reads it.

    from gpuscope.parsers import registry
    seen = registry.recognise("results/magma-1-iter-1.out")   # kind, reason, one-line summary
    got = registry.read("results/summary.csv")                 # table, findings, metadata

`READERS` is the only place that knows how a kind of file looks: each entry's `match(name,
head)` says why a file is of its kind ("`% MAGMA 2.8.0` banner on line 1") or returns None.
The readers that recognise files themselves (`kernels`, `runlogs`, `magma`) call these same
rules, so a format is described once. Entries are tried in order, most specific first.

Recognition is cheap and bounded, because a browser runs it on every file of a tree: one
`stat` and at most `HEAD_BYTES` read (a gzip file's head is inflated from those bytes only),
never a full read. The summary is made from the stat and the head alone. Nothing here raises:
a file that cannot be recognised (permission denied, a FIFO, a symlink loop, binary garbage)
gets a `problem` finding that says why in plain words.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers import runlog_formats as fmt
from gpuscope.parsers.textfile import GZIP_MAGIC, MAX_BYTES, _human, display_name

HEAD_BYTES = 8192
"""Recognition reads at most this much of a file."""

Head = bytes | str
"""What a rule looks at: the head's bytes; `runlogs` and `magma`, which hold a whole file's
text or bytes already, pass that instead (a rule reads no further than it needs)."""


@dataclass(frozen=True)
class FileRead:
    """The one result type of every reader."""

    table: pd.DataFrame | None
    """A tidy table; None for kinds that are not tables (markdown, image, pdf)."""
    findings: list[Finding] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    """What else the reader learnt, e.g. {"rows": 12, "errors": 3, "pages": 4, "width": 640}."""


@dataclass(frozen=True)
class Reader:
    kind: str
    title: str
    screen: str
    """Which view opens it: magma, kernels, scaling, replay, table, markdown, log, image, pdf, text."""
    match: Callable[[str, Head], str | None]
    """(file name, head) -> why the file is of this kind, or None."""
    read: Callable[[Path], FileRead]
    describe: Callable[[Head, int], str] | None = None
    """(head, file size) -> the kind-specific part of the one-line summary."""
    bounded: bool = False
    """Read within row and decoded-size budgets (Parquet row groups, SQLite rows, Arrow batches,
    an image's pixels), never whole: a large file of this kind is no problem."""


@dataclass(frozen=True)
class Recognition:
    path: Path
    kind: str | None
    """None: not recognised, or a problem stops it from being read."""
    reason: str
    summary: str
    screen: str | None
    problem: Finding | None = None
    """Why the file cannot be read (or only in part); a huge file keeps its kind."""

    @property
    def name(self) -> str:
        """The file's name, safe to print (undecodable bytes and escape sequences removed)."""
        return clean(display_name(self.path.name or self.path))


# ============================================================== the head, decoded once
@functools.lru_cache(maxsize=4)
def _decoded(head: bytes) -> str:
    return head.decode("utf-8", "replace")


def _text(head: Head) -> str:
    """The head as text; decoded once however many rules look at it (the same bytes object)."""
    return head if isinstance(head, str) else _decoded(head)


def _bytes(head: Head) -> bytes:
    return head if isinstance(head, bytes) else head.encode("utf-8", "surrogateescape")


def _line_of(text: Head, at: int) -> int:
    return text.count("\n" if isinstance(text, str) else b"\n", 0, at) + 1


def _quote(line: str, width: int = 36) -> str:
    """A line of the file as a reason quotes it: cleaned, trimmed, in backticks."""
    line = clean(line.strip())
    return f"`{line[:width - 1]}…`" if len(line) > width else f"`{line}`"


def _line_at(text: str, at: int) -> str:
    end = text.find("\n", at)
    start = text.rfind("\n", 0, at) + 1
    return text[start:end if end >= 0 else len(text)]


def _suffix(name: str) -> str:
    """The lowercase extension, looking through `.gz` (`trace.json.gz` -> `.json`)."""
    name = name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _first_line(text: str) -> str:
    """The first line that is not blank, without its leading blanks (no split of the whole head)."""
    text = text.lstrip()
    end = text.find("\n")
    return text if end < 0 else text[:end]


# ============================================================== rules: binary magic
PARQUET_MAGIC = b"PAR1"
SQLITE_MAGIC = b"SQLite format 3\x00"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
GIF_MAGICS = (b"GIF87a", b"GIF89a")
PDF_MAGIC = b"%PDF-"
PYPROF_COLUMNS = (b"Sil(ns)", b"Kernel")
"""PyProf's Parquet export has these columns; they show in the head only when the whole file
(and so its footer, where Parquet keeps the schema) fits in it."""


def match_pyprof_parquet(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not data.startswith(PARQUET_MAGIC):
        return None
    whole = data.endswith(PARQUET_MAGIC) and len(data) > 8
    if all(c in data for c in PYPROF_COLUMNS):
        return "PAR1 magic and PyProf columns (Kernel, Sil(ns)): PyProf Parquet"
    if not whole and name.lower().endswith(".gzip"):
        # PyProf saves with to_parquet(compression="gzip") under a .gzip name; the schema is in
        # the footer, past the head, so the name is the clue.
        return "PAR1 magic under a .gzip name: PyProf's Parquet export"
    return None


def match_parquet(name: str, head: Head) -> str | None:
    return "PAR1 magic: Parquet" if _bytes(head).startswith(PARQUET_MAGIC) else None


def match_nsys_sqlite(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not data.startswith(SQLITE_MAGIC[:15]):
        return None
    tables = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_GPU", "NVTX_EVENTS") if t.encode() in data]
    return f"SQLite magic, {', '.join(tables)} tables: Nsight Systems export" if tables else "SQLite magic: read as an Nsight Systems export"


def match_image(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if data.startswith(PNG_MAGIC):
        return "PNG signature"
    if data.startswith(JPEG_MAGIC):
        return "JPEG SOI marker"
    if data[:6] in GIF_MAGICS:
        return "GIF signature"
    return None


def match_pdf(name: str, head: Head) -> str | None:
    data = _bytes(head)
    return f"`{data[:8].decode('ascii', 'replace').strip()}` header: PDF" if data.startswith(PDF_MAGIC) else None


ARROW_STREAM_MAGIC = b"\xff\xff\xff\xff"


def match_recording(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if not data.startswith(ARROW_STREAM_MAGIC):
        return None
    from gpuscope.parsers import recording  # pyarrow: imported only for a file that starts like a stream
    return "Arrow IPC stream with gpuscope's schema version: a recording" if recording.looks_like_recording(data) else None


# ============================================================== rules: names
def match_expected(name: str, head: Head) -> str | None:
    return "named expected.toml: expected result ranges" if name.lower() == "expected.toml" else None


def match_markdown(name: str, head: Head) -> str | None:
    return f"`{_suffix(name)}` name: Markdown" if _suffix(name) in (".md", ".markdown") else None


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


# ============================================================== rules: profiler exports
def match_torch_trace(name: str, head: Head) -> str | None:
    text = _text(head)
    if "traceEvents" in text:
        return "`traceEvents` key: PyTorch profiler trace"
    if text.lstrip().startswith("[{") and re.search(r'"ph"\s*:', text):  # Chrome trace events; plain records have no phase
        return "a JSON list of trace events (`ph` phases): PyTorch profiler trace"
    return None


CODE_SUFFIXES = (".py", ".pyi", ".ipynb", ".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh", ".f90", ".sh", ".rs", ".go", ".java",
                 ".js", ".ts", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".md", ".rst", ".html", ".tex")
"""Source and configuration files: they may name a profiler's columns (a reader's own code
does), but they are never its export; the loose text rules below skip them."""


def _is_code(name: str) -> bool:
    return name.lower().endswith(CODE_SUFFIXES)


def match_ncu(name: str, head: Head) -> str | None:
    if _is_code(name):
        return None
    text = _text(head)
    if "==PROF==" in text:
        return "`==PROF==` lines: Nsight Compute"
    if '"Kernel Name"' in text and ("Metric" in text or "__" in text):
        return "`Kernel Name` and metric columns: Nsight Compute CSV"
    return None


def match_nvprof(name: str, head: Head) -> str | None:
    if _is_code(name):
        return None
    text = _text(head)
    if "NVPROF" in text:
        return "`NVPROF` banner: nvprof"
    if "==" in text.split("\n", 1)[0] and "Profiling result" in text:
        return "`==PID== Profiling result`: nvprof"
    if '"Grid X"' in text:
        return "`Grid X` column: nvprof GPU trace CSV"
    if "GPU activities:" in text:
        return "`GPU activities:` summary: nvprof"
    if "Invocations" in text and "Metric Name" in text:
        return "`Invocations` and `Metric Name` columns: nvprof --metrics"
    if "Time(%)" in text and "Calls" in text and "Avg" in text:
        return "`Time(%)`, `Calls`, `Avg` columns: nvprof summary"
    return None


def match_pyprof_text(name: str, head: Head) -> str | None:
    if _is_code(name):
        return None
    text = _text(head)
    if "Sil(ns)" in text:
        return "`Sil(ns)` column: PyProf"
    if '"Kernel"' in text and '"Op"' in text:
        return "`Kernel` and `Op` columns: PyProf CSV"
    if "Kernel" in text and "FLOPs" in text:
        return "`Kernel` and `FLOPs` columns: PyProf"
    return None


def match_nsys_text(name: str, head: Head) -> str | None:
    if _is_code(name):
        return None
    text = _text(head)
    for clue in ("Instances", "(ns)", "(us)", "Start(sec)", "cuda_gpu"):
        if clue in text:
            return f"`{clue}` in the header: nsys stats CSV"
    return None


KERNEL_KINDS = {"pyprof": "pyprof", "nsys": "nsys", "torch-trace": "torch", "ncu": "ncu", "nvprof": "nvprof"}
"""Registry kind -> the name `kernels.read_any` knows the reader by."""


def kernel_kind(head: Head, name: str = "") -> str | None:
    """Which profiler reader takes a file, from its head: 'pyprof', 'nsys', 'ncu', 'nvprof',
    'torch', or None. The order is `kernels`' own: magic bytes, then header words."""
    data = _bytes(head)
    if data.startswith(PARQUET_MAGIC):
        return "pyprof"
    for rule, kind in ((match_nsys_sqlite, "nsys"), (match_torch_trace, "torch"), (match_ncu, "ncu"),
                       (match_nvprof, "nvprof"), (match_pyprof_text, "pyprof"), (match_nsys_text, "nsys")):
        if rule(name, head) is not None:
            return kind
    return None


# ============================================================== rules: generic
_ROWS_SAMPLE = 64


def match_csv(name: str, head: Head) -> str | None:
    suffix = _suffix(name)
    return f"`{suffix}` name: delimited table" if suffix in (".csv", ".tsv") else None


def match_json(name: str, head: Head) -> str | None:
    if _suffix(name) in (".json", ".jsonl"):
        return f"`{_suffix(name)}` name: JSON"
    start = _text(head).lstrip()[:1]
    return "starts with `[` or `{`: JSON" if start in ("[", "{") and _suffix(name) in ("", ".txt", ".out") else None


LOG_SUFFIXES = (".log", ".out", ".err", ".txt")


def match_log(name: str, head: Head) -> str | None:
    return f"`{_suffix(name)}` name: plain log" if _suffix(name) in LOG_SUFFIXES else None


def match_text(name: str, head: Head) -> str | None:
    data = _bytes(head)
    if b"\x00" in data:
        return None
    return "text (no known format)"


def _count(n: int, word: str, about: str = "") -> str:
    """`1 row`, `~12 rows`: the plural only where it belongs."""
    return f"{about}{n:,} {word}" + ("" if n == 1 and not about else "s")


def describe_rows(head: Head, size: int) -> str:
    """`N rows` when the whole file is in the head, else `~N rows` from the head's mean line length."""
    data = _bytes(head)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if not data:
        return "empty"
    if len(data) >= size:
        return _count(max(lines - 1, 0), "row")
    estimate = round(size / (len(data) / max(lines, 1)))
    return _count(max(estimate - 1, 0), "row", "~")


def describe_lines(head: Head, size: int) -> str:
    data = _bytes(head)
    if not data:
        return "empty"
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if len(data) >= size:
        return _count(lines, "line")
    return _count(round(size / (len(data) / max(lines, 1))), "line", "~")


def describe_log(head: Head, size: int) -> str:
    """Lines, and when the whole log is in the head its error / warning / success lines (a longer
    log is counted when it is read: recognition never reads past the head)."""
    data = _bytes(head)
    lines = describe_lines(data, size)
    if not data or len(data) < size:
        return lines
    from gpuscope.parsers import plain_log
    counts = plain_log.count_classes(data)
    said = [f"{n} {name}{'s' if n != 1 else ''}" for name, n in counts.items() if n]
    return " · ".join([lines, *said])


def describe_image(head: Head, size: int) -> str:
    from gpuscope.parsers import media
    found = media.image_size(_bytes(head))
    return f"{found[0]} {found[1]}x{found[2]}" if found else "image"


def describe_pdf(head: Head, size: int) -> str:
    """`PDF 1.4`, with the page count when the whole file is in the head."""
    data = _bytes(head)
    version = data[5:8].decode("ascii", "replace") if data[5:6].isdigit() else ""
    said = clean(f"PDF {version}".strip())
    if len(data) >= size:
        from gpuscope.parsers import media
        pages = media.pdf_pages(data)
        if pages:
            said += f" · {pages} page{'s' if pages != 1 else ''}"
    return said


def describe_mlperf(head: Head, size: int) -> str:
    found = re.search(r'"key": *"submission_benchmark", *"value": *"([^"]{1,40})"', _text(head))
    return f"MLPerf {clean(found.group(1))}" if found else "MLPerf log"


def _fixed(text: str) -> Callable[[Head, int], str]:
    return lambda head, size: text


# ============================================================== readers
def _read_magma(path: Path) -> FileRead:
    from gpuscope.parsers import magma
    rows, findings = magma.read(path, root=path.parent)
    return FileRead(rows, list(findings), {"rows": len(rows)})


def _read_kernels(path: Path) -> FileRead:
    from gpuscope.parsers import kernels
    got = kernels.read_any(path)
    meta: dict[str, Any] = {"rows": len(got.table)}
    if "kernel" in got.table:
        meta["kernels"] = int(got.table["kernel"].nunique())
    return FileRead(got.table, list(got.findings), meta)


def _read_runs(path: Path) -> FileRead:
    from gpuscope.parsers import runlogs
    got = runlogs.read_runs([path])
    return FileRead(got.runs, list(got.findings), {"runs": len(got.runs), "curves": got.curves})


def _read_recording(path: Path) -> FileRead:
    from gpuscope.parsers import recording
    got = recording.read(path, processes=False)  # the samples' host and GPU history; processes stay packed
    table = got.table.to_pandas() if got.table is not None else None
    return FileRead(table, list(got.findings), {"samples": got.samples, "version": got.version, "complete": got.complete})


def _read_table(path: Path) -> FileRead:
    from gpuscope.parsers import generic_tables
    return generic_tables.read(path)


def _read_log(path: Path) -> FileRead:
    from gpuscope.parsers import plain_log
    return plain_log.read(path)


def _read_image(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_image(path)


def _read_pdf(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_pdf(path)


def _read_markdown(path: Path) -> FileRead:
    from gpuscope.parsers.textfile import read_text
    text, findings = read_text(path)
    return FileRead(None, findings, {"text": text, "lines": text.count("\n") + 1} if text is not None else {})


def _read_expected(path: Path) -> FileRead:
    from gpuscope.parsers import expected
    checks, findings = expected.read(path)
    return FileRead(expected.to_frame(checks), list(findings), {"checks": len(checks)})


READERS: tuple[Reader, ...] = (
    # magic bytes first: they cannot be mistaken
    Reader("pyprof", "PyProf kernel table", "kernels", match_pyprof_parquet, _read_kernels, _fixed("PyProf Parquet"), bounded=True),
    Reader("parquet", "Parquet table", "table", match_parquet, _read_table, _fixed("Parquet"), bounded=True),
    Reader("nsys", "Nsight Systems export", "kernels", match_nsys_sqlite, _read_kernels, _fixed("nsys SQLite"), bounded=True),
    Reader("recording", "gpuscope recording", "replay", match_recording, _read_recording, _fixed(""), bounded=True),  # the kind says it; its samples need more than the head
    Reader("image", "Image", "image", match_image, _read_image, describe_image, bounded=True),
    Reader("pdf", "PDF document", "pdf", match_pdf, _read_pdf, describe_pdf, bounded=True),
    # then names that say what a file is
    Reader("expected", "Expected result ranges", "table", match_expected, _read_expected, _fixed("expected ranges")),
    Reader("markdown", "Markdown", "markdown", match_markdown, _read_markdown, describe_lines),
    # then the words each tool prints
    Reader("magma", "MAGMA tester output", "magma", match_magma, _read_magma, describe_magma),
    Reader("mlperf-log", "MLPerf log", "scaling", match_mlperf, _read_runs, describe_mlperf),
    Reader("reframe", "ReFrame perflog", "scaling", match_reframe, _read_runs, describe_lines),
    Reader("sacct", "sacct output", "scaling", match_sacct, _read_runs, describe_rows),
    Reader("torch-trace", "PyTorch profiler trace", "kernels", match_torch_trace, _read_kernels, _fixed("PyTorch trace")),
    Reader("ncu", "Nsight Compute export", "kernels", match_ncu, _read_kernels, describe_rows),
    Reader("nvprof", "nvprof export", "kernels", match_nvprof, _read_kernels, describe_rows),
    Reader("pyprof", "PyProf kernel table", "kernels", match_pyprof_text, _read_kernels, describe_rows),
    Reader("nsys", "nsys stats CSV", "kernels", match_nsys_text, _read_kernels, describe_rows),
    Reader("seed-log", "Training log", "scaling", match_seed_log, _read_runs, describe_lines),
    # generic kinds last
    Reader("csv", "Delimited table", "table", match_csv, _read_table, describe_rows),
    Reader("json", "JSON", "table", match_json, _read_table, describe_lines),
    Reader("log", "Plain log", "log", match_log, _read_log, describe_log),
    Reader("text", "Text", "text", match_text, _read_log, describe_log),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(r.kind for r in READERS))


def reader(kind: str) -> Reader | None:
    """The first entry of `kind` (its title, screen and reader)."""
    return next((r for r in READERS if r.kind == kind), None)


# ============================================================== recognition
def _problem(kind: str, message: str, label: str, severity: str = "error") -> Finding:
    return Finding(severity, kind, message, label)  # type: ignore[arg-type]


_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _os_problem(exc: OSError, label: str) -> Finding:
    if exc.errno == errno.ELOOP:
        return _problem("symlink-loop", "symbolic link loop: the link points (through others) back at itself", label)
    if exc.errno == errno.ENOENT:
        return _problem("missing", "no such file (a dangling symbolic link, or it was removed)", label)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _problem("unreadable", "permission denied", label)
    if exc.errno == errno.ENAMETOOLONG:
        return _problem("unreadable", "name too long to open", label)
    return _problem("unreadable", f"cannot read: {exc.strerror or exc}", label)


def _head(path: Path, label: str) -> tuple[bytes | None, int, bool, Finding | None]:
    """(head bytes, size, gzip?, problem): one stat, one open (non-blocking, so a FIFO swapped
    in never waits for a writer) and one read of at most HEAD_BYTES."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return None, 0, False, _os_problem(exc, label)
    if stat.S_ISDIR(info.st_mode):
        try:
            with os.scandir(path):
                pass
        except OSError as exc:
            return None, 0, False, _problem("unreadable", f"cannot list folder: {exc.strerror or exc}", label)
        return None, 0, False, _problem("folder", "a folder" + (" (symbolic link, not followed)" if os.path.islink(path) else ""), label, "info")
    if not stat.S_ISREG(info.st_mode):
        what = next((n for test, n in _NOT_REGULAR if test(info.st_mode)), "not a regular file")
        return None, 0, False, _problem("not-a-file", f"{what}, not a regular file: not opened", label, "warning")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        return None, info.st_size, False, _os_problem(exc, label)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, 0, False, _problem("not-a-file", "not a regular file: not opened", label, "warning")
        raw = os.read(fd, HEAD_BYTES)
    except OSError as exc:
        return None, info.st_size, False, _os_problem(exc, label)
    finally:
        os.close(fd)
    if raw[:2] == GZIP_MAGIC:
        try:  # inflate only the bytes already read: the head of the content, bounded
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, HEAD_BYTES), info.st_size, True, None
        except zlib.error:
            return raw, info.st_size, False, None
    return raw, info.st_size, False, None


_CONTROL_BYTES = bytes([*range(9), *range(14, 32), 127])


def _binary_garbage(head: bytes) -> bool:
    """NUL bytes, or mostly bytes that are neither text nor UTF-8: not a text result."""
    if b"\x00" in head:
        return True
    sample = head[:1024]
    bad = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return bad > len(sample) // 10


def recognise(path: str | os.PathLike[str]) -> Recognition:
    """What `path` is, why, and a one-line summary; reads at most HEAD_BYTES. Never raises."""
    path = Path(path)
    label = clean(display_name(path))
    try:
        head, size, gzipped, problem = _head(path, label)
    except Exception as exc:  # noqa: BLE001 - a browser shows every file; one surprise never stops it
        return Recognition(path, None, f"could not be recognised ({type(exc).__name__})", "", None,
                           _problem("reader-bug", f"could not be recognised ({type(exc).__name__}: {clean(exc)})", label))
    if head is None:
        assert problem is not None
        return Recognition(path, None, problem.message, _human(size) if size else "", None, problem)
    name = path.name
    try:
        for entry in READERS:
            reason = entry.match(name, head)
            if reason is None:
                continue
            return _recognised(path, entry, reason, head, size, gzipped, label)
    except Exception as exc:  # noqa: BLE001
        return Recognition(path, None, "could not be recognised", _human(size), None,
                           _problem("reader-bug", f"a recognition rule failed ({type(exc).__name__}: {clean(exc)}); please report this file", label))
    if _binary_garbage(head):
        return Recognition(path, None, "binary data of no known format", _human(size), None,
                           _problem("binary", "binary data of no format gpuscope reads (no known magic bytes)", label, "warning"))
    return Recognition(path, None, "no known format", _human(size), None, None)


def _recognised(path: Path, entry: Reader, reason: str, head: bytes, size: int, gzipped: bool, label: str) -> Recognition:
    if entry.kind in ("text", "log", "markdown", "csv", "json") and _binary_garbage(head):
        return Recognition(path, None, "binary data despite its name", _human(size), None,
                           _problem("binary", f"binary data (NUL or control bytes) in a file named like {entry.title.lower()}", label, "warning"))
    detail = ""
    if entry.describe is not None:
        try:
            detail = entry.describe(head, size if not gzipped else size * 8)
        except Exception:  # noqa: BLE001 - a summary is a nicety
            detail = ""
    summary = " · ".join(p for p in (_human(size) + (" gzip" if gzipped else ""), detail) if p)
    if gzipped:
        reason += " (gzip)"
    problem = None
    if size > MAX_BYTES and not entry.bounded:
        problem = _problem("huge", f"{_human(size)}: over the {_human(MAX_BYTES)} limit for a full read (GPUSCOPE_MAX_FILE_MB raises it); only its head and tail can be shown", label, "warning")
    return Recognition(path, entry.kind, reason, summary, entry.screen, problem)


def read(path: str | os.PathLike[str]) -> FileRead:
    """The file read by the reader of its kind. Never raises: what fails is a finding."""
    path = Path(path)
    seen = recognise(path)
    label = clean(display_name(path))
    if seen.kind is None:
        finding = seen.problem or Finding("error", "unknown-format", f"{seen.reason}: no reader for it", label)
        return FileRead(None, [finding], {})
    entry = reader_for(seen)
    try:
        got = entry.read(path)
    except MemoryError:
        return FileRead(None, [Finding("error", "huge", "not enough memory to read it", label)], {})
    except Exception as exc:  # noqa: BLE001 - one bad file never stops a browser
        return FileRead(None, [Finding("error", "reader-bug", f"could not be read ({type(exc).__name__}: {clean(exc)}); please report this file", label)], {})
    meta = {"kind": seen.kind, "reason": seen.reason, **got.meta}
    return FileRead(got.table, got.findings, meta)


def reader_for(seen: Recognition) -> Reader:
    """The entry that recognised a file (same kind and match); the first of its kind otherwise."""
    return next(r for r in READERS if r.kind == seen.kind)


# ============================================================== walking
def walk(root: str | os.PathLike[str]) -> Iterator[Path]:
    """Every file below `root`, sorted by name, a folder's files before its subfolders; hidden names (`.git`) skipped. A
    folder that cannot be listed and a link to a folder (not followed) are yielded themselves,
    so `recognise` names them; a symlink loop is yielded like a file and recognised as one."""
    root = Path(root)
    if not root.is_dir():
        yield root
        return
    pending: list[Path] = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            if folder != root:
                yield folder
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                subfolders.append(Path(entry.path))
            else:
                yield Path(entry.path)
        pending.extend(reversed(subfolders))
