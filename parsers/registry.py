"""Provides the one table of file kinds: how each is recognised, and which reader reads it.

    from gpuscope.parsers import registry
    seen = registry.recognise("results/magma-1-iter-1.out")   # kind, reason, one-line summary
    got = registry.read("results/summary.csv")                 # table, findings, metadata

`READERS` is the only list of file kinds: each entry's `match(name, head)` (a rule of
parsers/rules) says why a file is of its kind ("`% MAGMA 2.8.0` banner on line 1") or returns
None. The readers that recognise files themselves (`kernels`, `runlogs`, `magma`) call those
same rules, so a format is described once; no reader imports this module. Entries are tried in
order, most specific first.

Recognition is cheap and bounded, because a browser runs it on every file of a tree: one
`stat` and at most `HEAD_BYTES` read (a gzip file's head is inflated from those bytes only),
never a full read. The summary is made from the stat and the head alone. Nothing here raises:
a file that cannot be recognised (permission denied, a FIFO, a symlink loop, binary garbage)
gets a `problem` finding that says why in plain words.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator


from gpuscope.metrics.findings import Finding
from gpuscope.metrics.safe_text import clean
from gpuscope.parsers.base import FileRead
from gpuscope.parsers.rules import (
    Head,
    _fixed,
    describe_image,
    describe_lines,
    describe_log,
    describe_magma,
    describe_mlperf,
    describe_pdf,
    describe_rows,
    match_csv,
    match_expected,
    match_image,
    match_json,
    match_log,
    match_magma,
    match_markdown,
    match_mlperf,
    match_ncu,
    match_nsys_sqlite,
    match_nsys_text,
    match_nvprof,
    match_parquet,
    match_pdf,
    match_pyprof_parquet,
    match_pyprof_text,
    match_recording,
    match_reframe,
    match_sacct,
    match_seed_log,
    match_text,
    match_torch_trace,
)
from gpuscope.parsers.files import GZIP_MAGIC, MAX_BYTES, _human, display_name

HEAD_BYTES = 8192
"""Recognition reads at most this much of a file."""

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


# ============================================================== readers
def _read_magma(path: Path) -> FileRead:
    from gpuscope.parsers.magma import read as magma
    rows, findings = magma.read(path, root=path.parent)
    return FileRead(rows, list(findings), {"rows": len(rows)})


def _read_kernels(path: Path) -> FileRead:
    from gpuscope.parsers.profilers import read_any as kernels
    got = kernels.read_any(path)
    meta: dict[str, Any] = {"rows": len(got.table)}
    if "kernel" in got.table:
        meta["kernels"] = int(got.table["kernel"].nunique())
    return FileRead(got.table, list(got.findings), meta)


def _read_runs(path: Path) -> FileRead:
    from gpuscope.parsers.runlogs import read as runlogs
    got = runlogs.read_runs([path])
    return FileRead(got.runs, list(got.findings), {"runs": len(got.runs), "curves": got.curves})


def _read_recording(path: Path) -> FileRead:
    from gpuscope.parsers.recording import read as recording
    got = recording.read(path, processes=False)  # the samples' host and GPU history; processes stay packed
    table = got.table.to_pandas() if got.table is not None else None
    return FileRead(table, list(got.findings), {"samples": got.samples, "version": got.version, "complete": got.complete})


def _read_table(path: Path) -> FileRead:
    from gpuscope.parsers import tables as generic_tables
    return generic_tables.read(path)


def _read_log(path: Path) -> FileRead:
    from gpuscope.parsers import logs as plain_log
    return plain_log.read(path)


def _read_image(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_image(path)


def _read_pdf(path: Path) -> FileRead:
    from gpuscope.parsers import media
    return media.read_pdf(path)


def _read_markdown(path: Path) -> FileRead:
    from gpuscope.parsers.files import read_text
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
