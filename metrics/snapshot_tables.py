"""Provides one-shot views of a `Snapshot`: tables for `gpuscope watch --once --format text|csv|
markdown` and a JSON-safe dict for `--format json`.

Pure functions over one snapshot, so the print path needs no Textual. The helpers that decide
which processes belong to the scope and how many cores they keep busy live here too, so the
live screen and the one-shot output agree on those numbers.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable

from gpuscope.metrics.job import verdicts as judge_mod
from gpuscope.metrics.samples import ProcessRow, Snapshot, Verdict, elapsed
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.metrics.units import human_bytes

MIB = 1024 * 1024
GIB = 1024**3
TOP_PROCESSES = 20
"""Rows in the one-shot process table: the busiest, like `top -bn1 | head`."""
NOT_IN_PROC = "?"
"""`ProcessRow.state` of a GPU process NVML reports but /proc does not list (a container's or
another PID namespace's pid): its CPU, memory and command are unknown, never 0."""


def size_text(n: int | None) -> str:
    """Compact sizes for a 5-7 cell column: `512M`, `3.4G`, `36G`; unknown is `n/a`, never 0."""
    if n is None:
        return "n/a"
    if n >= 10 * GIB:
        return f"{n / GIB:.0f}G"
    return f"{n / GIB:.1f}G" if n >= GIB else f"{n / MIB:.0f}M"


def elapsed_text(seconds: float) -> str:
    """`ps -o etime` style: `mm:ss`, `h:mm:ss`, `d-hh:mm:ss`."""
    s = int(max(0, seconds))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    if days:
        return f"{days}-{hours:02}:{minutes:02}:{s:02}"
    return f"{hours}:{minutes:02}:{s:02}" if hours else f"{minutes}:{s:02}"


def htop_time(seconds: float) -> str:
    """CPU time as htop's TIME+ shows it: `m:ss.cc` under an hour, `hh:mm:ss` as `Hh:MM:SS`
    from then on, whole hours from 100 hours."""
    hundredths = int(round(max(0.0, seconds) * 100))
    total, cc = divmod(hundredths, 100)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours >= 100:
        return f"{hours}h"
    return f"{hours}h{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}.{cc:02}"


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


@dataclass(frozen=True, slots=True)
class ProcessColumn:
    """One column of the process table, for the screen and the export alike.

    The screen shows `text(row)` under `title` in `width` cells (`narrow` below 110 columns,
    0: not shown there); the export writes `value(row)` under `key` (snake_case, unit in the
    name: `mem_mib`, `cpu_time_s`) and `title`, so both have the same columns with the same
    meaning, and exported numbers are rounded to what the screen can show."""

    key: str
    title: str
    width: int
    narrow: int
    text: Callable[[ProcessRow], str]
    value: Callable[[ProcessRow], Any]
    fmt: str = ""
    sort: str | None = None
    """The `watch_model.SORTS` key a click on this header sorts by (None: not sortable)."""
    numeric: bool = False
    narrow_title: str = ""
    show: Callable[[Any], str] | None = None
    """How text and markdown exports show `value` (bytes as the screen's `512M`), where `fmt` cannot."""
    shorten: Callable[[str, int], str] | None = None
    """How a text export cuts a cell to fit its width (`metrics.table.Column.shorten`)."""

    def export_column(self) -> Column:
        return Column(self.key, self.title, self.fmt, missing="n/a" if self.numeric else "", show=self.show, shorten=self.shorten)


def _cut_end(text: str, width: int) -> str:
    """A command line cut at its end, as top and htop cut it: the program and its first
    arguments stay."""
    return text if len(text) <= width else text[:max(0, width - 1)] + "…"


def _unseen(p: ProcessRow) -> bool:
    return p.state == NOT_IN_PROC


PROCESS_COLUMNS: tuple[ProcessColumn, ...] = (
    ProcessColumn("pid", "PID", 8, 7, lambda p: str(p.pid), lambda p: p.pid, sort="pid", numeric=True),
    ProcessColumn("user", "USER", 9, 8, lambda p: p.user, lambda p: p.user),
    ProcessColumn("cpu_percent", "CPU%", 6, 5, lambda p: "n/a" if p.cpu_percent is None else f"{p.cpu_percent:.1f}",
                  lambda p: _round(p.cpu_percent, 1), ".1f", "cpu", True),
    ProcessColumn("mem_bytes", "MEM", 7, 5, lambda p: "n/a" if _unseen(p) else size_text(p.rss),
                  lambda p: None if _unseen(p) else p.rss, "", "mem", True, show=size_text),
    ProcessColumn("gpu_mem_bytes", "GPU MEM", 7, 5, lambda p: "" if p.gpu_memory is None else size_text(p.gpu_memory),
                  lambda p: p.gpu_memory, "", "gpu_mem", True, "GMEM", show=size_text),
    ProcessColumn("sm_percent", "SM%", 4, 3, lambda p: "" if p.gpu_sm_percent is None else f"{p.gpu_sm_percent:.0f}",
                  lambda p: _round(p.gpu_sm_percent, 0), ".0f", "sm", True),
    ProcessColumn("gpus", "GPU", 5, 3, lambda p: ",".join(map(str, p.gpu_indices)), lambda p: ",".join(map(str, p.gpu_indices))),
    ProcessColumn("cpu_time_s", "TIME+", 11, 8, lambda p: "n/a" if p.cpu_time is None else elapsed_text(p.cpu_time),
                  lambda p: _round(p.cpu_time, 2), ".2f", "time", True, show=htop_time),
    ProcessColumn("state", "S", 1, 0, lambda p: p.state, lambda p: p.state),
    ProcessColumn("command", "COMMAND", 0, 0, lambda p: p.command, lambda p: p.command, shorten=_cut_end),
)
"""The process table's columns, screen and export. TIME+ is CPU time (user + system, htop's
TIME+) in both; MEM is the resident set size. Fixed widths, so columns do not jump each
second, wide enough for pid_max (4194304); COMMAND (0) takes what is left."""
NODE_COLUMN = ProcessColumn("node", "NODE", 10, 8, lambda p: getattr(p, "node", ""), lambda p: getattr(p, "node", ""))
"""First in the table when its rows come from several nodes (`metrics.node_aggregate.NodeProcessRow`)."""
PROCESS_NOTE = "MEM: resident memory, GPU MEM: GPU memory (M: MiB, G: GiB); TIME+: CPU time (user + system) as htop's TIME+"


def scope_processes(snapshot: Snapshot) -> tuple[ProcessRow, ...]:
    """The processes the scope is about: its pids, else the user's, else every process."""
    scope = snapshot.scope
    if scope.pids:
        return tuple(p for p in snapshot.processes if p.pid in scope.pids)
    if scope.kind == "user" and scope.user:
        return tuple(p for p in snapshot.processes if p.user == scope.user)
    return snapshot.processes


def busy_cores(rows: tuple[ProcessRow, ...] | list[ProcessRow]) -> float | None:
    """Sum of CPU% / 100: how many cores these processes keep busy (None before any reading)."""
    readings = [p.cpu_percent for p in rows if p.cpu_percent is not None]
    return sum(readings) / 100.0 if readings else None


def scope_memory_used(snapshot: Snapshot) -> int | None:
    """The cgroup's own figure when there is one (it counts page cache), else the summed RSS."""
    if snapshot.scope.memory_used is not None:
        return snapshot.scope.memory_used
    if snapshot.scope.kind == "node":
        return snapshot.host.memory.used
    rows = scope_processes(snapshot)
    return sum(p.rss for p in rows) if rows else None


def gpus_used(snapshot: Snapshot, rows: tuple[ProcessRow, ...]) -> set[int]:
    """GPU indices on which any of `rows` has a context (NVML's view, plus the rows' own)."""
    pids = {p.pid for p in rows}
    used = {i for p in rows for i in p.gpu_indices}
    used |= {gp.gpu_index for g in snapshot.gpus for gp in g.processes if gp.pid in pids}
    return used


def instant_verdicts(snapshot: Snapshot) -> tuple[Verdict, ...]:
    """The snapshot's own verdicts, else judged on this one sample (the screen uses window
    means instead; one sample is what `--once` has)."""
    if snapshot.verdicts:
        return snapshot.verdicts
    rows = scope_processes(snapshot)
    utilisation = {g.index: g.util_gpu for g in snapshot.gpus}
    scope = snapshot.scope
    if scope.kind == "node":
        return ()
    return judge_mod.judge(scope, busy_cores(rows), utilisation, gpus_used(snapshot, rows))


def is_kernel_thread(p: ProcessRow) -> bool:
    """kthreadd (pid 2) and its children, which have no memory of their own: hidden unless
    asked for, as htop's `K` hides them (dozens of idle rows on a node)."""
    return p.rss == 0 and (p.pid == 2 or p.ppid == 2)


def _pairs(title: str, fields: list[tuple[str, str, Any, str]], notes: tuple[str, ...] = (), record: bool = False) -> ResultTable:
    """A table of (key, label, value, text) fields: for people an item/value list of the texts
    (`1.2 GiB`), for CSV (`record`) one row of the raw values under their keys, numbers as
    numbers and sizes in a `_bytes` column."""
    if record:
        return ResultTable(title, tuple(Column(key, label) for key, label, _, _ in fields), (tuple(v for _, _, v, _ in fields),), notes)
    return ResultTable(title, (Column("item"), Column("value")), tuple((label, text) for _, label, _, text in fields), notes)


def scope_table(snapshot: Snapshot, record: bool = False) -> ResultTable:
    s = snapshot.scope
    rows = scope_processes(snapshot)
    busy = busy_cores(rows)
    gpus = ", ".join(str(g.index if g.index is not None else g.uuid) for g in s.gpus) or "none"
    used = scope_memory_used(snapshot)
    fields = [
        ("scope", "scope", f"{s.kind}: {s.label}", f"{s.kind}: {s.label}"),
        ("job", "job", s.job_id, s.job_id or ""),
        ("user", "user", s.user, s.user or ""),
        ("cpus_allocated", "cpus allocated", s.cpus_allocated, "" if s.cpus_allocated is None else str(s.cpus_allocated)),
        ("cpu_ids", "cpu ids", ",".join(map(str, s.cpu_ids)), ",".join(map(str, s.cpu_ids))),
        ("busy_cores", "busy cores", _round(busy, 2), "n/a" if busy is None else f"{busy:.1f}"),
        ("memory_limit_bytes", "memory limit", s.memory_limit, human_bytes(s.memory_limit) if s.memory_limit else "none known"),
        ("memory_used_bytes", "memory used", used, human_bytes(used)),
        ("memory_peak_bytes", "memory peak", s.memory_peak, human_bytes(s.memory_peak)),
        ("gpus_allocated", "gpus allocated", gpus, gpus),
        ("processes", "processes", len(rows), str(len(rows))),
        ("cgroup", "cgroup", s.cgroup, s.cgroup or ""),
    ]
    notes = tuple(f"evidence: {e}" for e in s.evidence) + tuple(f"problem: {p}" for p in s.problems)
    return _pairs("Scope", fields, notes, record)


def verdict_table(snapshot: Snapshot) -> ResultTable:
    found = instant_verdicts(snapshot)
    notes = () if found else ("nothing to judge: the whole node has no allocation" if snapshot.scope.kind == "node" else "nothing to judge yet",)
    return ResultTable("Verdicts", (Column("severity"), Column("verdict")), tuple((v.severity, v.text) for v in found), notes)


def _as_mib(value: Any) -> str:
    return f"{value / MIB:.0f}"


def gpu_table(snapshot: Snapshot) -> ResultTable:
    status = snapshot.gpu_status
    cols = (
        Column("index", "GPU"), Column("name"), Column("util_percent", "util %", ".0f"),
        Column("memory_used_bytes", "mem used MiB", show=_as_mib), Column("memory_total_bytes", "mem total MiB", show=_as_mib),
        Column("temperature_c", "temp C", ".0f"), Column("power_w", "power W", ".0f"),
        Column("processes", "procs"), Column("error"),
    )
    rows = tuple(
        (g.index, g.name, g.util_gpu, g.memory_used, g.memory_total, g.temperature_c,
         g.power_w, len(g.processes), g.error or "")
        for g in snapshot.gpus
    )
    if status.backend == "none":
        notes: tuple[str, ...] = (f"No GPU view: {status.reason or 'no GPU backend'}",)
    else:
        notes = (f"backend: {status.backend}" + (f", driver {status.driver_version}" if status.driver_version else ""),)
        if status.backend == "simulated":
            notes += ("SIMULATED: these GPUs are not real",)
    return ResultTable("GPUs", cols, rows, notes)


def host_table(snapshot: Snapshot, record: bool = False) -> ResultTable:
    h = snapshot.host
    m = h.memory
    cores = h.cpu_percent
    mean = sum(cores) / len(cores) if cores else None
    busiest = max(cores) if cores else None
    loads = list(h.load_avg) + [None] * (3 - len(h.load_avg))
    fields = [
        ("host", "host", h.hostname, h.hostname),
        ("cores", "cores", h.cpu_count, str(h.cpu_count)),
        ("cpu_mean_percent", "cpu mean %", _round(mean, 1), "n/a" if mean is None else f"{mean:.0f}"),
        ("busiest_core_percent", "busiest core %", _round(busiest, 1), "n/a" if busiest is None else f"{busiest:.0f}"),
        *((f"load_{n}", f"load {n}", v, "") for n, v in zip((1, 5, 15), loads[:3])),
        ("memory_used_bytes", "memory used", m.used, f"{human_bytes(m.used)} of {human_bytes(m.total)}"),
        ("memory_total_bytes", "memory total", m.total, ""),
        ("memory_available_bytes", "memory available", m.available, human_bytes(m.available)),
        ("swap_used_bytes", "swap used", m.swap_used, f"{human_bytes(m.swap_used)} of {human_bytes(m.swap_total)}"),
        ("swap_total_bytes", "swap total", m.swap_total, ""),
    ]
    if not record:  # for people: the loads on one line, totals beside what is used
        fields = [f for f in fields if f[3]]
        fields.insert(4, ("load", "load 1/5/15", None, " ".join(f"{x:.2f}" for x in h.load_avg)))
    return _pairs("Host", fields, record=record)


def process_table(snapshot: Snapshot, top: int | None = TOP_PROCESSES, rows: list[ProcessRow] | tuple[ProcessRow, ...] | None = None,
                  title: str | None = None, width: int | None = None) -> ResultTable:
    """The process table with the screen's columns (`PROCESS_COLUMNS`): the busiest `top` of
    the scope without kernel threads (as the screen hides them), or `rows` as given (the watch
    screen's `e`: the rows shown, in their order). `width` (`--width`): GPU columns that no
    row has a value in are left out (a node without GPUs), as the screen does; the text
    export cuts long command lines at their end."""
    if rows is None:
        shown_rows = [p for p in scope_processes(snapshot) if not is_kernel_thread(p)]
        rows = sorted(shown_rows, key=lambda p: (-(p.cpu_percent or 0.0), p.pid))[:top]
    shown = (NODE_COLUMN, *PROCESS_COLUMNS) if any(getattr(p, "node", "") for p in rows) else PROCESS_COLUMNS
    if width is not None:
        shown = tuple(c for c in shown if c.key not in GPU_COLUMNS or any(c.value(p) not in (None, "") for p in rows))
    data = tuple(tuple(c.value(p) for c in shown) for p in rows)
    return ResultTable(title or f"Top {len(data)} processes by CPU", tuple(c.export_column() for c in shown),
                       data, (PROCESS_NOTE,))  # `--table top` picks it by this prefix


GPU_COLUMNS = frozenset({"gpu_mem_bytes", "sm_percent", "gpus"})
"""The process table's GPU columns: empty on a node without a GPU view."""


def snapshot_tables(snapshot: Snapshot, top: int = TOP_PROCESSES, width: int | None = None, fmt: str = "text") -> list[ResultTable]:
    """Scope, verdicts, GPUs, host and the busiest processes, for `metrics.export`; `width`
    leaves out empty GPU columns of the process table (`--width`). For CSV (`fmt`) the scope
    and the host are one row each, of numbers where they are numbers."""
    record = fmt == "csv"
    return [scope_table(snapshot, record), verdict_table(snapshot), gpu_table(snapshot), host_table(snapshot, record),
            process_table(snapshot, top, width=width)]


def snapshot_dict(snapshot: Snapshot, kernel_threads: bool = True) -> dict[str, Any]:
    """`dataclasses.asdict` made JSON-safe: frozensets become sorted lists, tuples lists,
    NaN and infinities None. Empty verdicts are filled by `instant_verdicts`. Without
    `kernel_threads` (`watch --once`, as on screen) the processes leave them out; `collect`
    keeps every process, so that a recording holds what was there."""
    if not kernel_threads:
        snapshot = dataclasses.replace(snapshot, processes=tuple(p for p in snapshot.processes if not is_kernel_thread(p)))
    data = _plain(snapshot)
    data["verdicts"] = _plain(instant_verdicts(snapshot))
    for row, process in zip(data["processes"], snapshot.processes):
        row["elapsed"] = elapsed(process, snapshot.host.uptime)  # seconds run, next to `started`
    return data


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
