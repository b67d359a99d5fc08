"""Provides the rules that tell a file's kind from its name and its first bytes, and the
one-line summaries made from them: pure functions over a name and a head, that read nothing.

`registry` lists them with their readers; the readers that recognise files themselves
(`kernels`, `runlogs`, `magma`) call these same rules, so a format is described once, and
no reader needs the registry (which imports the readers).
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.runlogs import formats as fmt
from gpuscope.parsers.base import Head



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
    from gpuscope.parsers.recording import read as recording
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
    from gpuscope.parsers import logs as plain_log
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
