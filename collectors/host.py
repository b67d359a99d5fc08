"""Provides `HostCollector`: per-core CPU busy %, load average and memory of the node.

Reads /proc/stat, /proc/loadavg, /proc/meminfo and /proc/sys/kernel/hostname directly (one
read each, about 0.1 ms per refresh) under a root folder, so tests use fake trees. psutil
would give the same numbers (`cpu_percent(percpu=True)`, `getloadavg()`,
`virtual_memory()`, `swap_memory()`) but cannot be pointed at a fake root.

Nothing here raises for a missing or garbled file: the sample carries what could be read.
Because the `HostSample` / `MemoryUse` fields are plain numbers, "could not read" shows as
an empty `cpu_percent` with `cpu_count == 0`, a zero load, or `memory.total == 0` (no real node has no memory).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from gpuscope.collectors import procfs
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import HostSample, MemoryUse

_KIB = 1024
_MAX_CORES = 1 << 16
"""Above any real kernel's NR_CPUS: a garbled `cpu99999999` line must not make a huge tuple."""


class HostCollector:
    """Samples the node. Keep one instance: per-core % is a delta between its calls.

    Per-core % on the *first* call is the average since boot (the counters' previous value
    is taken as zero), a real measurement rather than a made-up 0 or 100; later calls give
    the busy share of each core since the previous call, like `mpstat -P ALL 1`. A core
    whose counters did not move (two calls within one clock tick) keeps its last value.
    """

    def __init__(self, root: str | os.PathLike[str] = "/", clock: Callable[[], float] = time.time) -> None:
        """`clock` stamps samples: wall time by default, so recordings and JSON carry real time."""
        self._proc = procfs.proc_dir(root)
        self._clock = clock
        self._previous: dict[int, tuple[int, int]] = {}
        """core id -> (busy ticks, total ticks) at the previous call."""
        self._percent: dict[int, float] = {}

    def sample(self) -> HostSample:
        """Read everything once and return a `HostSample`."""
        cores = self._cpu_percent()
        # Index = core id; an offline core (absent from /proc/stat) reads 0.
        width = max(cores) + 1 if cores else 0
        return HostSample(
            timestamp=self._clock(),
            hostname=self._hostname(),
            cpu_percent=tuple(cores.get(core, 0.0) for core in range(width)),
            load_avg=self._load_avg(),
            memory=self._memory(),
            cpu_count=len(cores),
            uptime=procfs.uptime(self._proc),
        )

    def _cpu_percent(self) -> dict[int, float]:
        """Busy % per online core from the `cpuN` lines of /proc/stat (like `mpstat`)."""
        counters: dict[int, tuple[int, int]] = {}
        for line in procfs.read_text(self._proc + "/stat").splitlines():
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            parsed = _core_ticks(line)
            if parsed is not None:
                counters[parsed[0]] = parsed[1:]
        result: dict[int, float] = {}
        for core, (busy, total) in counters.items():
            before_busy, before_total = self._previous.get(core, (0, 0))
            # Counters can step back (iowait is known to); treat that like "no change".
            d_total = total - before_total
            d_busy = min(max(busy - before_busy, 0), max(d_total, 0))
            if d_total > 0:
                result[core] = 100.0 * d_busy / d_total
            else:
                result[core] = self._percent.get(core, 0.0)
        self._previous = counters
        self._percent = result
        return result

    def _load_avg(self) -> tuple[float, float, float]:
        """1, 5 and 15 minute load from /proc/loadavg (like `os.getloadavg()`); zeros if unreadable."""
        try:
            one, five, fifteen = (float(v) for v in procfs.read_text(self._proc + "/loadavg").split()[:3])
        except ValueError:
            return (0.0, 0.0, 0.0)
        return (one, five, fifteen)

    def _memory(self) -> MemoryUse:
        """Memory like `free -b`: cache = Cached + SReclaimable, used = total - available."""
        info: dict[str, int] = {}
        for line in procfs.read_text(self._proc + "/meminfo").splitlines():
            key, _, rest = line.partition(":")
            words = rest.split()
            if words and words[0].isdecimal():
                info[key] = int(words[0]) * (_KIB if words[1:] == ["kB"] else 1)
        total = info.get("MemTotal", 0)
        cached = info.get("Cached", 0)
        buffers = info.get("Buffers", 0)
        if "MemAvailable" in info:
            available = info["MemAvailable"]
        else:  # kernels before 3.14: the estimate `free` used then
            available = info.get("MemFree", 0) + cached + buffers
        available = min(available, total)
        swap_total = info.get("SwapTotal", 0)
        return MemoryUse(
            total=total,
            available=available,
            used=max(total - available, 0),
            cached=cached + info.get("SReclaimable", 0),
            buffers=buffers,
            swap_total=swap_total,
            swap_used=max(swap_total - info.get("SwapFree", swap_total), 0),
        )

    def _hostname(self) -> str:
        """The kernel's host name (UTS namespace); the running machine's if the file is absent."""
        name = procfs.read_text(self._proc + "/sys/kernel/hostname").strip()
        return clean(name) if name else os.uname().nodename


def stat_ticks(fields: list[str]) -> tuple[int, int] | None:
    """(busy, total) ticks from a /proc/stat `cpu` or `cpuN` line split into fields.

    guest and guest_nice are already inside user and nice, so only the first eight count;
    idle + iowait is idle time (as in psutil and htop). Old kernels have fewer columns.
    """
    try:
        ticks = [int(v) for v in fields[1:9]]
    except ValueError:
        return None
    if len(ticks) < 4:
        return None
    total = sum(ticks)
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return total - idle, total


def _core_ticks(line: str) -> tuple[int, int, int] | None:
    """Parse `cpuN user nice system idle iowait irq softirq steal ...` to (N, busy, total)."""
    fields = line.split()
    try:
        core = int(fields[0][3:])
    except ValueError:
        return None
    ticks = stat_ticks(fields)
    if ticks is None or not 0 <= core < _MAX_CORES:
        return None
    return core, *ticks
