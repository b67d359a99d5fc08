"""Provides `ProcessCollector`: the process table (pid, ppid, user, state, CPU %, RSS, threads,
elapsed, command), read from procfs directly.

Why not psutil here: the table reads every process every refresh, and psutil costs about
165 us per process for these fields against about 20 us for raw reads (research notes,
monitor-anchors 2.8); glances' self-cost complaints all come from its psutil process list.
Per process this reads `/proc/PID/schedstat` (kept open between scans), and `/proc/PID/stat`
(everything but uid and the command line) when the process has run since its stat was last
read; it stats the `/proc/PID` folder for its owner (cheaper than parsing `status`) and reads
`cmdline`, both only now and then (see `IDENTITY_REFRESH_S`).

Why schedstat first: most processes on a node sleep, and a sleeping process's stat cannot
change (CPU time, state, threads, last CPU all change only when it runs) except its RSS, which
reclaim can lower. schedstat is three numbers (run time in ns, wait time, time slices) that
change whenever the process runs, and the kernel makes it for a fraction of stat's cost (cold
caches, 370 processes: about 0.7 ms against 1.6 ms a scan). It counts the main thread only, so
a process with more than one thread has its stat read every scan; a sleeping one has it read
again every `IDLE_STAT_REFRESH_S` for its RSS. Kernels without schedstat, or with scheduler
statistics off (`0 0 0`), get stat every scan, as before.

Processes come and go during a scan: one that vanishes (`FileNotFoundError`,
`ProcessLookupError`) or hides its stat (`PermissionError`) is skipped; one that hides only
its command line is shown by its `comm` name. A garbled stat line skips that process.
"""

from __future__ import annotations

import os
import pwd
import time
from collections.abc import Callable, Iterable

from gpuscope.collectors import procfs
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import ProcessRow

_GONE = OSError
"""Vanished (ENOENT, ESRCH), hidden (EACCES) or any other per-process read error: skip it."""


IDENTITY_REFRESH_S = 5.0
"""Seconds before the owner and command line of a process that ran are read again."""
IDLE_IDENTITY_REFRESH_S = 60.0
"""The same for a process that has not run since (its stat line is unchanged)."""
LIST_REFRESH_S = 5.0
"""Seconds between listings of /proc while no pid has been handed out (see `_all_pids`)."""
IDLE_STAT_REFRESH_S = 10.0
"""Seconds before the stat of a process that has not run (same schedstat) is read again:
only its RSS can have changed meanwhile (reclaim, swap)."""


class ProcessCollector:
    """Samples the process table. Keep one instance: CPU % is a delta between its calls.

    CPU % is user + system time used since this collector last saw the process, over the
    wall time between the two scans (100 = one full core, like top and htop). It is None the
    first time a process is seen, and again if its pid was reused (start time changed).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = "/",
        clock: Callable[[], float] = time.monotonic,
        cmdline_limit: int = 4096,
    ) -> None:
        """`clock` times the interval between scans; `cmdline_limit` caps the bytes of a
        command line read (a row shows far less; a 100 kB Java class path stays cheap)."""
        self._proc = procfs.proc_dir(root)
        self._clock = clock
        self._cmdline_limit = cmdline_limit
        self.clock_ticks = os.sysconf("SC_CLK_TCK")
        """Units of the stat times (USER_HZ, 100 on Linux)."""
        self.page_size = os.sysconf("SC_PAGE_SIZE")
        """Units of the stat RSS."""
        self._held = procfs.HeldFiles()
        """Each process's schedstat (or stat, where that is read every scan), kept open between
        scans (see `procfs.HeldFiles`)."""
        self._schedstat = _schedstat_works(self._proc)
        """Whether processes here have a schedstat to compare (see the module's docstring)."""
        self._users: dict[int, str] = {}
        self._previous: dict[int, _Seen] = {}
        """pid -> what the previous scan read of it (stat bytes, parsed, ticks and clock)."""
        self._identity: dict[int, tuple[int, int, str, float, bytes]] = {}
        """pid -> (start time, uid, command, clock and stat bytes when read)."""
        self._listing: tuple[float, int | None, list[int]] = (float("-inf"), None, [])
        """(clock of the last listing of /proc, the last pid handed out then, the pids of the
        last scan of every process)."""

    def sample(self, pids: Iterable[int] | None = None) -> tuple[ProcessRow, ...]:
        """Read every process (or only `pids`, e.g. a job's) and return rows in pid order."""
        now = self._clock()
        wanted = self._all_pids(now) if pids is None else sorted(set(pids))
        previous = self._previous
        seen: dict[int, _Seen] = {}
        rows: list[ProcessRow] = []
        read = procfs.read_bytes  # looked up per scan: tests swap it
        held = self._held.read
        for pid in wanted:
            before = previous.get(pid)
            sched_path = before.sched_path if before is not None else f"{self._proc}/{pid}/schedstat"
            if before is not None and now < before.quiet_until:
                # A single-threaded process that was idle at the last scan: if its schedstat
                # has not changed either, it has not run since, and its row stays as it is
                # without its stat being read (most processes, every scan: kept lean).
                try:
                    sched: bytes | None = held(sched_path)
                except OSError:
                    sched = None  # gone, most likely: the full read says so
                if sched == before.sched:
                    before.clock = now  # a later CPU % covers only the time after this scan
                    seen[pid] = before
                    rows.append(before.row)
                    continue
            else:
                sched = self._sched(sched_path) if self._schedstat else None
            try:
                row = self._read(pid, read, now, before, sched, sched_path, seen)
            except _GONE:
                continue
            if row is not None:
                rows.append(row)
        # Only what this scan saw: dead pids do not pile up over a long session.
        if seen.keys() != previous.keys():  # a process went: close what was held for it
            self._held.keep_only({f"{self._proc}/{pid}/{name}" for pid in seen for name in ("schedstat", "stat")})
        self._previous = seen
        if pids is None:
            self._identity = {pid: v for pid, v in self._identity.items() if pid in seen}
            self._listing = (*self._listing[:2], list(seen))  # pid order, as listed
        return tuple(rows)

    def _all_pids(self, now: float) -> list[int]:
        """Every pid: the last scan's when no pid has been handed out since /proc was last
        listed (the kernel's last pid, in /proc/loadavg, is the same), else a new listing.

        Listing /proc walks every task in the kernel, about a fifth of a scan of 370 idle
        processes; on a node where nothing starts, the list can only shrink, and a process
        that exits fails its next read. The last pid is read before listing, so a process
        started during the listing changes it. /proc is listed every LIST_REFRESH_S anyway,
        in case the last pid is not this /proc's (another pid namespace's /proc)."""
        last = self._last_pid()
        listed_at, listed_last, listed = self._listing
        if last is not None and last == listed_last and now - listed_at < LIST_REFRESH_S:
            return listed
        pids = self._list_pids()
        self._listing = (now, last, pids)
        return pids

    def _last_pid(self) -> int | None:
        """The last pid handed out (the fifth field of /proc/loadavg); None if unreadable."""
        try:
            return int(procfs.read_bytes(self._proc + "/loadavg").split()[4])
        except (OSError, IndexError, ValueError):
            return None

    def close(self) -> None:
        """Close the files held open between scans."""
        self._held.close()

    def descendants(self, pid: int) -> set[int]:
        """All children, grandchildren ... of `pid` now (not `pid` itself), from ppid links.

        For `--pid PID` scope: `{pid} | descendants(pid)`. Reads only each stat (cheap).
        """
        children: dict[int, list[int]] = {}
        for child in self._list_pids():
            try:
                parent = _parse_stat(procfs.read_bytes(f"{self._proc}/{child}/stat"))
            except _GONE:
                continue
            if parent is not None:
                children.setdefault(parent[1], []).append(child)
        found: set[int] = set()
        stack = list(children.get(pid, ()))
        while stack:
            child = stack.pop()
            if child not in found and child != pid:
                found.add(child)
                stack.extend(children.get(child, ()))
        return found

    def user_name(self, uid: int) -> str:
        """Login name of `uid` (cached: pwd may ask LDAP/NSS); the number as text if unknown."""
        name = self._users.get(uid)
        if name is None:
            try:
                name = pwd.getpwuid(uid).pw_name
            except (KeyError, OverflowError):
                name = str(uid)
            self._users[uid] = name
        return name

    def _read(
        self,
        pid: int,
        read: Callable[..., bytes],
        now: float,
        before: _Seen | None,
        sched: bytes | None,
        sched_path: str,
        seen: dict[int, _Seen],
    ) -> ProcessRow | None:
        """Read the process's stat (and owner and command line when due) into its row;
        `before`: what the last scan knew of it, `sched`: its schedstat now (None: none to go
        by), read from `sched_path`."""
        base = f"{self._proc}/{pid}"
        # A process read every scan keeps its stat open; one that mostly sleeps has it opened
        # when it runs, so the held descriptors stay about one per process.
        data = (self._held.read if sched is None or (before is not None and before.parsed[4] > 1) else read)(base + "/stat")
        # Most processes sleep: their stat line is byte for byte what the last scan read, so
        # its parse is reused (a third of the per-process cost on a node of idle daemons).
        parsed = before.parsed if before is not None and before.stat == data else _parse_stat(data)
        if parsed is None:
            return None
        comm, ppid, state, ticks, threads, start, rss, cpu_id = parsed
        # Owner and command line change rarely: keep them for the same process (same pid and
        # start time) and re-read them every IDENTITY_REFRESH_S, so a 1 s refresh costs one
        # read per process instead of three (sshd/postgres retitles still show within seconds).
        # A process whose stat line has not changed since then has not run, so it cannot have
        # retitled itself: it waits IDLE_IDENTITY_REFRESH_S instead.
        known = self._identity.get(pid)
        if known is not None and known[0] == start and state != "Z" and now - known[3] < (
                IDLE_IDENTITY_REFRESH_S if known[4] == data else IDENTITY_REFRESH_S):
            uid, command = known[1], known[2]
        else:
            uid = os.stat(base).st_uid
            try:
                raw: bytes | None = read(base + "/cmdline", self._cmdline_limit)
            except PermissionError:
                raw = None
            command = _command(raw, comm, state)
            self._identity[pid] = (start, uid, command, now, data)

        cpu: float | None = None
        if before is not None and before.parsed[5] == start and now > before.clock:
            cpu = max(ticks - before.parsed[3], 0) * 100.0 / self.clock_ticks / (now - before.clock)
        # An idle process (same stat line, same identity, 0 % again) gets last scan's row back:
        # building 370 frozen rows a second was the largest Python cost of the scan.
        old = before.row if before is not None else None
        if old is not None and before.stat == data and cpu == 0.0 == old.cpu_percent and old.command == command and old.uid == uid:  # type: ignore[union-attr]
            row = old
        else:
            user = self._users.get(uid) or self.user_name(uid)
            # Positional: a frozen dataclass built from keywords costs a third more.
            row = ProcessRow(pid, ppid, user, uid, state, cpu, rss * self.page_size, threads, start / self.clock_ticks,
                             command, cpu_id, ticks / self.clock_ticks)
        # Its stat need not be read again while its schedstat stays the same, if it has one
        # thread (schedstat counts the main thread only) and was idle, until IDLE_STAT_REFRESH_S.
        quiet = sched is not None and threads == 1 and cpu == 0.0
        seen[pid] = _Seen(data, parsed, now, row, sched, sched_path, now + IDLE_STAT_REFRESH_S if quiet else _NEVER)
        return row

    def _sched(self, path: str) -> bytes | None:
        """The process's schedstat line (at `path`), or None when there is none to compare
        (then its stat is read): gone (the stat read will say so), or not run yet (`0 0 0`)."""
        try:
            data = self._held.read(path)
        except OSError:
            return None
        return None if data.startswith(b"0 0 ") else data

    def _list_pids(self) -> list[int]:
        try:
            names = os.listdir(self._proc)
        except OSError:
            return []
        return sorted(int(n) for n in names if n.isdigit() and n.isascii())


def _schedstat_works(proc: str) -> bool:
    """Whether this kernel keeps scheduler statistics: this process has run, so its schedstat
    is not `0 0 0` (what a kernel with them off shows for every process) and not missing (an
    old kernel, or a fake /proc in tests)."""
    try:
        return not procfs.read_bytes(proc + "/self/schedstat").startswith(b"0 0 ")
    except OSError:
        return False


_Stat = tuple[bytes, int, str, int, int, int, int, "int | None"]
_NEVER = float("-inf")


class _Seen:
    """What a scan knew of a process. Kept from scan to scan and updated in place by the
    scans that skip its stat (no new object per process per second)."""

    __slots__ = ("stat", "parsed", "clock", "row", "sched", "sched_path", "quiet_until")

    def __init__(self, stat: bytes, parsed: _Stat, clock: float, row: ProcessRow, sched: bytes | None,
                 sched_path: str, quiet_until: float) -> None:
        self.stat = stat
        self.parsed = parsed
        self.clock = clock
        """Clock of the last scan that saw the process (CPU % is over the time since)."""
        self.row = row
        self.sched = sched
        """Its schedstat when its stat was read; None: it has none to go by."""
        self.sched_path = sched_path
        self.quiet_until = quiet_until
        """Until this clock, an unchanged schedstat means the row stands (see `sample`)."""


def _parse_stat(data: bytes) -> _Stat | None:
    """Parse `/proc/PID/stat` to (comm, ppid, state, utime+stime, threads, start, rss pages, cpu).

    comm is free text ("a) (b", spaces, newlines), so fields are counted from the LAST ')'.
    Returns None for a garbled line. Field numbers are those of proc(5).
    """
    open_paren = data.find(b"(")
    close = data.rfind(b")")
    if open_paren < 0 or close < open_paren:
        return None
    f = data[close + 1 :].split()
    try:
        return (
            data[open_paren + 1 : close],
            int(f[1]),  # 4 ppid
            f[0].decode("ascii"),  # 3 state
            int(f[11]) + int(f[12]),  # 14 utime + 15 stime
            int(f[17]),  # 20 num_threads
            int(f[19]),  # 22 starttime (ticks after boot)
            int(f[21]),  # 24 rss (pages)
            int(f[36]) if len(f) > 36 else None,  # 39 processor (kernels >= 2.2.8)
        )
    except (IndexError, ValueError, UnicodeDecodeError):
        return None


def _command(raw: bytes | None, comm: bytes, state: str) -> str:
    """Display command: cmdline with NULs as spaces; `[comm]` for kernel threads and zombies
    (empty cmdline, as ps shows them); bare comm when the cmdline is not readable."""
    if raw:
        raw = raw.rstrip(b"\0")
    if raw:
        return clean(raw.replace(b"\0", b" ").decode("utf-8", "replace"))
    name = clean(comm.decode("utf-8", "replace"))
    if raw is None:
        return name
    return f"[{name}] <defunct>" if state == "Z" else f"[{name}]"
