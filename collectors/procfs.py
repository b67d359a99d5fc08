"""Provides the one low-level procfs reader the host and process collectors share.

`read_bytes` is a bare `os.open` / `os.read` / `os.close`: for /proc files that is several
times cheaper than `open().read()` (no buffered file object, no fstat, no decoding), and the
process table reads two or three files per process per refresh. It raises `OSError` and lets
the caller decide what a vanished (`FileNotFoundError`, `ProcessLookupError`) or hidden
(`PermissionError`) file means. Collectors look it up as `procfs.read_bytes` at call time, so
tests can swap it (monkeypatch) to simulate a process that denies access or vanishes mid-scan.
Paths are always built from a root folder, so tests point collectors at a fake /proc tree.
"""

from __future__ import annotations

import os
import resource
import time

_CHUNK = 4096
"""One page: every per-process file the table reads (stat, most cmdlines) fits in one read."""


def proc_dir(root: str | os.PathLike[str]) -> str:
    """Return the proc folder under `root` ("/" gives "/proc") as a plain string for fast joins."""
    return os.path.join(os.fspath(root), "proc")


def read_bytes(path: str, limit: int = 1 << 20) -> bytes:
    """Return the contents of `path`, at most `limit` bytes.

    A read shorter than asked means end of file (true for regular files, and for procfs,
    whose seq_file and cmdline readers fill the buffer they are given), so small files cost
    exactly one `read` call; larger ones (/proc/stat on a many-core node) are read in pages.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        want = min(limit, _CHUNK)
        data = os.read(fd, want)
        if len(data) < want or len(data) >= limit:
            return data
        parts = [data]
        total = len(data)
        while total < limit:
            want = min(_CHUNK * 4, limit - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if len(chunk) < want:
                break
        return b"".join(parts)
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    """Return `path` decoded as UTF-8 (bad bytes replaced), or "" when it cannot be read.

    For host-wide files (stat, meminfo, loadavg, uptime) where "missing" only means "report
    what the other files give": never raises.
    """
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError:
        return ""


def stat_ppid(data: bytes) -> int | None:
    """The parent pid (field 4) of a `/proc/PID/stat` line, or None when garbled.

    comm (field 2) is free bytes ("a) (b", spaces, newlines, invalid UTF-8), so fields are
    counted from the LAST ')'."""
    fields = data.rpartition(b")")[2].split()
    if b")" not in data or len(fields) < 2 or not fields[1].isdigit() or len(fields[1]) > 18:
        return None
    return int(fields[1])


def status_uid(data: bytes) -> int | None:
    """The real uid (first number of the `Uid:` line) of a `/proc/PID/status`, or None."""
    for line in data.splitlines():
        if line.startswith(b"Uid:"):
            values = line[4:].split()
            return int(values[0]) if values and values[0].isdigit() and len(values[0]) <= 18 else None
    return None


def uptime(proc: str) -> float | None:
    """Seconds since boot, from `proc`/uptime, else wall time minus `btime` of `proc`/stat;
    None when neither can be read."""
    try:
        return float(read_text(proc + "/uptime").split()[0])
    except (IndexError, ValueError):
        pass
    for line in read_text(proc + "/stat").splitlines():
        if line.startswith("btime "):
            try:
                return time.time() - int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


class HeldFiles:
    """Files kept open between scans and read again from offset 0 (`os.pread`).

    A procfs file regenerates its content at each read from offset 0, so the process table
    keeps the file it reads of each process every second (`schedstat`, or `stat`) open
    instead of opening and closing it: with 370 processes that is 740 fewer system calls
    (path lookups) per refresh, about 0.9 ms of kernel time. Once the process has exited,
    even if its pid was reused, the held descriptor fails with ESRCH: it is closed and the
    path opened afresh, through `read_bytes`, as the first read of every file is (so tests
    that hook it see every new process). At most `limit` files are held, half the soft
    descriptor limit by default.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is None:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            limit = max(0, min(soft if soft != resource.RLIM_INFINITY else 1 << 16, 1 << 16) // 2 - 64)
        self.limit = limit
        self._fds: dict[str, int] = {}

    def read(self, path: str) -> bytes:
        """Contents of `path` (one page at most, as `stat` lines are); raises `OSError`."""
        fd = self._fds.get(path)
        if fd is not None:
            try:
                return os.pread(fd, _CHUNK, 0)
            except OSError:
                self.forget(path)
        data = read_bytes(path, _CHUNK)
        if len(self._fds) < self.limit:
            try:
                self._fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                pass  # gone since: read again next time, through read_bytes
        return data

    def keep_only(self, paths: set[str]) -> None:
        """Close the files not in `paths` (their processes have gone or left the scope)."""
        for path in [p for p in self._fds if p not in paths]:
            self.forget(path)

    def forget(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for path in list(self._fds):
            self.forget(path)

    def __del__(self) -> None:  # a dropped collector must not keep hundreds of descriptors
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()

    def __len__(self) -> int:
        return len(self._fds)
