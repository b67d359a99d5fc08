"""Provides where a job writes (`output_files`, `all_outputs`) and `OutputTails`, the last lines
of its StdOut and StdErr as they grow (no Textual).

Paths come from the job's `scontrol show job` record. Slurm prints StdOut and StdErr with the
job-wide fields filled in (%j, %u, %x) but the per-node and per-task ones left as typed (%N,
%t, %n, %s: one file per node or task). Here %N is this node for the watch's pane, and every
field left is matched against the files that exist (`all_outputs`, for the merged view), as
are `rank-N.log` files beside them (a launcher's per-rank logs).

Reading costs one `stat` per file per poll while nothing is written; then only the new bytes
are read (the first read takes the last `COUNT_BYTES`). Error and warning lines are counted
as `parsers.logs` classifies them, over what was read: `partial` says when a file's beginning
was not. Text is cleaned of escape sequences.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass
from typing import Callable

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import JobScope
from gpuscope.parsers import logs as plain_log
from gpuscope.parsers.files import display_name, open_regular
from gpuscope.parsers.log_merge import split_lines

KEEP_LINES = 200
"""Lines kept per file: the most a pane shows (a whole screen when it is the tab)."""
COUNT_BYTES = 8 * 1024 * 1024
"""The first read of a file: its last bytes, whose lines are counted (one read, in the poll thread)."""
READ_BYTES = 8 * 1024 * 1024
"""The most one poll reads of a file (a burst is taken over several polls)."""
RESOLVE_EVERY = 10
"""Reads between two listings of a folder for a file not there yet (a folder can be large)."""
_FIELD = re.compile(r"%(\d*)([%AajNnstux])")
RANK_LOG = re.compile(r"rank[-_.]?\d+\.(?:log|out|err|txt)", re.IGNORECASE)


def _regex(pattern: str, fields: dict[str, str]) -> re.Pattern[str]:
    """A file name pattern as a regular expression: known fields as their values, the others
    as what they can be (numbers, or a name for %N / %x / %u)."""
    out, at = [], 0
    for found in _FIELD.finditer(pattern):
        out.append(re.escape(pattern[at:found.start()]))
        pad, name = found.groups()
        if name == "%":
            out.append("%")
        elif name in fields:
            out.append(re.escape(fields[name].zfill(int(pad)) if pad else fields[name]))
        else:
            out.append(r"\d+" if name in "Aajnst" else r"[^/]+")
        at = found.end()
    out.append(re.escape(pattern[at:]))
    return re.compile("".join(out))


def matching(pattern: str, fields: dict[str, str], listdir: Callable[[str], list[str]] = os.listdir) -> list[str]:
    """Existing files the pattern names (its folder listed once), sorted with numbers in order;
    the pattern itself when it has no field left."""
    folder, name = os.path.split(pattern)
    if "%" not in name:
        return [pattern]
    regex = _regex(name, fields)
    try:
        names = [n for n in listdir(folder or ".") if regex.fullmatch(n)]
    except OSError:
        return []
    return [os.path.join(folder, n) for n in sorted(names, key=_natural)]


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


@dataclass(frozen=True)
class JobFiles:
    """A job's output paths as scontrol gives them (raw), and this node's name for %N."""

    stdout: str | None
    stderr: str | None
    job_id: str | None = None
    user: str | None = None
    work_dir: str | None = None
    host: str = ""

    def fields(self, node: bool) -> dict[str, str]:
        known = {"j": self.job_id, "u": self.user, "N": self.host if node else None}
        return {k: v for k, v in known.items() if v}


def output_files(job: JobFiles, listdir: Callable[[str], list[str]] = os.listdir) -> list[tuple[str, str]]:
    """(role, path) of this node's StdOut and StdErr ('out', 'err'), StdErr left out where it is
    StdOut (Slurm's default). A per-task pattern (%t) names the first task's file; a pattern
    whose file is not there yet names itself (the pane says it waits)."""
    out: list[tuple[str, str]] = []
    for role, pattern in (("out", job.stdout), ("err", job.stderr)):
        if not pattern:
            continue
        found = matching(pattern, job.fields(node=True), listdir)
        path = found[0] if found else pattern
        if all(path != p for _, p in out):
            out.append((role, path))
    return out


def all_outputs(job: JobFiles, listdir: Callable[[str], list[str]] = os.listdir) -> list[str]:
    """Every output file of the job that exists: StdOut and StdErr on every node and task,
    then `rank-N.log` files beside them or in the working directory."""
    found: list[str] = []
    folders: list[str] = []
    for pattern in (job.stdout, job.stderr):
        if pattern:
            found += matching(pattern, job.fields(node=False), listdir)
            folders.append(os.path.dirname(pattern) or ".")
    if job.work_dir:
        folders.append(job.work_dir)
    for folder in dict.fromkeys(os.path.normpath(f) for f in folders):
        try:
            names = sorted((n for n in listdir(folder) if RANK_LOG.fullmatch(n)), key=_natural)
        except OSError:
            continue
        found += [os.path.join(folder, n) for n in names]
    unique = list(dict.fromkeys(os.path.normpath(p) for p in found))
    return [p for p in unique if os.path.isfile(p)]


@dataclass(frozen=True)
class TailView:
    """What one file's pane shows: its last lines, counts, and why it shows none."""

    role: str
    """'out' or 'err'."""
    path: str
    label: str
    lines: tuple[str, ...]
    errors: int
    warnings: int
    partial: bool
    """The counts cover the last `COUNT_BYTES` and what came since, not the whole file."""
    problem: str | None


class Tail:
    """The last lines of one growing file, read by its new bytes only."""

    def __init__(self, role: str, path: str, keep: int = KEEP_LINES) -> None:
        self.role, self.path = role, path
        self.label = clean(display_name(os.path.basename(path) or path))
        self.lines: deque[str] = deque(maxlen=keep)
        self.offset = 0
        self.identity: tuple[int, int] | None = None
        self.carry = b""
        self.counts = {"error": 0, "warning": 0}
        self.partial = False
        """The first read started inside the file (its last `COUNT_BYTES`), maybe mid-line."""
        self._mid_line = False
        self.problem: str | None = None
        self.bytes_read = 0
        """Bytes read so far, for tests that a quiet file costs no read."""

    def _restart(self) -> None:
        self.lines.clear()
        self.offset, self.carry, self.partial, self._mid_line = 0, b"", False, False
        self.counts = {"error": 0, "warning": 0}

    def read(self) -> None:
        """Take what was written since the last read (nothing but a `stat` when nothing was)."""
        try:
            info = os.stat(self.path)
        except OSError as error:
            self.problem = "not written yet" if isinstance(error, FileNotFoundError) else f"cannot read: {error.strerror or error}"
            return
        identity = (info.st_dev, info.st_ino)
        if identity != self.identity or info.st_size < self.offset:  # replaced, or truncated and rewritten
            self._restart()
            self.identity = identity
            self.offset = max(0, info.st_size - COUNT_BYTES)
            self.partial = self._mid_line = self.offset > 0
        if info.st_size == self.offset and self.problem is None:
            return
        handle, _, findings = open_regular(self.path, self.label)
        if handle is None:
            self.problem = findings[0].message if findings else "cannot read"
            return
        with handle:
            try:
                handle.seek(self.offset)
                data = handle.read(min(READ_BYTES, info.st_size - self.offset))
            except OSError as error:
                self.problem = f"cannot read: {error.strerror or error}"
                return
        self.problem = None
        if self._mid_line:  # the first read starts inside the file: its first line is not whole
            cut = data.find(b"\n") + 1
            if not cut:  # no line end yet: the next read looks further
                self.offset += len(data)
                return
            self._mid_line = False
            self.offset, data = self.offset + cut, data[cut:]
        self.offset += len(data)
        self.bytes_read += len(data)
        data, self.carry = self.carry + data, b""
        end = data.rfind(b"\n") + 1
        whole, rest = data[:end], data[end:]
        self.carry = rest  # the line being written is shown once it ends
        lines = split_lines(whole)
        counts = plain_log.count_classes("\n".join(lines).encode())  # cleaned: `ESC[31mERROR` is an ERROR line
        for name in self.counts:
            self.counts[name] += counts[name]
        self.lines.extend(lines)

    def view(self) -> TailView:
        pending = split_lines(self.carry) if self.carry else []
        lines = tuple(self.lines) + tuple(pending)
        return TailView(self.role, self.path, self.label, lines, self.counts["error"], self.counts["warning"], self.partial, self.problem)


class OutputTails:
    """This node's StdOut and StdErr of a job, read on each poll (in the poll thread)."""

    def __init__(self, listdir: Callable[[str], list[str]] = os.listdir) -> None:
        self.listdir = listdir
        self.job: JobFiles | None = None
        self.tails: list[Tail] = []
        self._unresolved = 0

    def read(self, job: JobFiles | None) -> tuple[TailView, ...]:
        """Read the files of `job` (new paths: start over) and say what each shows now."""
        if job != self.job or (self._unresolved and self._unresolved % RESOLVE_EVERY == 0):
            paths = output_files(job, self.listdir) if job is not None else []
            if job != self.job or [p for _, p in paths] != [t.path for t in self.tails]:
                self.tails = [Tail(role, path) for role, path in paths]
            self.job = job
        for tail in self.tails:
            tail.read()
        waiting = any(t.problem == "not written yet" and "%" in t.path for t in self.tails)
        self._unresolved = self._unresolved + 1 if waiting else 0
        return tuple(t.view() for t in self.tails)



def job_files(scope: JobScope, host: str) -> JobFiles | None:
    """A job scope's output files (None for other scopes, or when scontrol named none)."""
    if scope.kind != "job" or not (scope.stdout or scope.stderr):
        return None
    return JobFiles(scope.stdout, scope.stderr, scope.job_id, scope.user, scope.work_dir, host)
