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
from gpuscope.metrics.table import Column, ResultTable, format_cell
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

    def export_column(self) -> Column:
        return Column(self.key, self.title, self.fmt, missing="n/a" if self.numeric else "")


def _unseen(p: ProcessRow) -> bool:
    return p.state == NOT_IN_PROC


PROCESS_COLUMNS: tuple[ProcessColumn, ...] = (
    ProcessColumn("pid", "PID", 8, 7, lambda p: str(p.pid), lambda p: p.pid, sort="pid", numeric=True),
    ProcessColumn("user", "USER", 9, 8, lambda p: p.user, lambda p: p.user),
    ProcessColumn("cpu_percent", "CPU%", 6, 5, lambda p: "n/a" if p.cpu_percent is None else f"{p.cpu_percent:.1f}",
                  lambda p: _round(p.cpu_percent, 1), ".1f", "cpu", True),
    ProcessColumn("mem_mib", "MEM", 7, 5, lambda p: "n/a" if _unseen(p) else size_text(p.rss),
                  lambda p: None if _unseen(p) else round(p.rss / MIB, 1), ".1f", "mem", True),
    ProcessColumn("gpu_mem_mib", "GPU MEM", 7, 5, lambda p: "" if p.gpu_memory is None else size_text(p.gpu_memory),
                  lambda p: None if p.gpu_memory is None else round(p.gpu_memory / MIB, 1), ".1f", "gpu_mem", True, "GMEM"),
    ProcessColumn("sm_percent", "SM%", 4, 3, lambda p: "" if p.gpu_sm_percent is None else f"{p.gpu_sm_percent:.0f}",
                  lambda p: _round(p.gpu_sm_percent, 0), ".0f", "sm", True),
    ProcessColumn("gpus", "GPU", 5, 3, lambda p: ",".join(map(str, p.gpu_indices)), lambda p: ",".join(map(str, p.gpu_indices))),
    ProcessColumn("cpu_time_s", "TIME+", 11, 8, lambda p: "n/a" if p.cpu_time is None else elapsed_text(p.cpu_time),
                  lambda p: _round(p.cpu_time, 2), ".2f", "time", True),
    ProcessColumn("state", "S", 1, 0, lambda p: p.state, lambda p: p.state),
    ProcessColumn("command", "COMMAND", 0, 0, lambda p: p.command, lambda p: p.command),
)
"""The process table's columns, screen and export. TIME+ is CPU time (user + system, htop's
TIME+) in both; MEM is the resident set size. Fixed widths, so columns do not jump each
second, wide enough for pid_max (4194304); COMMAND (0) takes what is left."""
NODE_COLUMN = ProcessColumn("node", "NODE", 10, 8, lambda p: getattr(p, "node", ""), lambda p: getattr(p, "node", ""))
"""First in the table when its rows come from several nodes (`metrics.node_aggregate.NodeProcessRow`)."""
PROCESS_NOTE = "MEM and GPU MEM in MiB; TIME+ is CPU time (user + system) in seconds, as htop's TIME+"


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


def _mib(value: int | None) -> float | None:
    return None if value is None else round(value / MIB, 1)


def scope_table(snapshot: Snapshot) -> ResultTable:
    s = snapshot.scope
    rows = scope_processes(snapshot)
    busy = busy_cores(rows)
    gpus = ", ".join(str(g.index if g.index is not None else g.uuid) for g in s.gpus) or "none"
    items = [
        ("scope", f"{s.kind}: {s.label}"),
        ("job", s.job_id or ""),
        ("user", s.user or ""),
        ("cpus allocated", "" if s.cpus_allocated is None else str(s.cpus_allocated)),
        ("cpu ids", ",".join(map(str, s.cpu_ids))),
        ("busy cores", "n/a" if busy is None else f"{busy:.1f}"),
        ("memory limit", human_bytes(s.memory_limit) if s.memory_limit else "none known"),
        ("memory used", human_bytes(scope_memory_used(snapshot))),
        ("memory peak", human_bytes(s.memory_peak)),
        ("gpus allocated", gpus),
        ("processes", str(len(rows))),
        ("cgroup", s.cgroup or ""),
    ]
    notes = tuple(f"evidence: {e}" for e in s.evidence) + tuple(f"problem: {p}" for p in s.problems)
    return ResultTable("Scope", (Column("item"), Column("value")), tuple(items), notes)


def verdict_table(snapshot: Snapshot) -> ResultTable:
    found = instant_verdicts(snapshot)
    notes = () if found else ("nothing to judge: the whole node has no allocation" if snapshot.scope.kind == "node" else "nothing to judge yet",)
    return ResultTable("Verdicts", (Column("severity"), Column("verdict")), tuple((v.severity, v.text) for v in found), notes)


def gpu_table(snapshot: Snapshot) -> ResultTable:
    status = snapshot.gpu_status
    cols = (
        Column("index", "GPU"), Column("name"), Column("util_percent", "util %", ".0f"),
        Column("memory_used_mib", "mem used MiB", ".0f"), Column("memory_total_mib", "mem total MiB", ".0f"),
        Column("temperature_c", "temp C", ".0f"), Column("power_w", "power W", ".0f"),
        Column("processes", "procs"), Column("error"),
    )
    rows = tuple(
        (g.index, g.name, g.util_gpu, _mib(g.memory_used), _mib(g.memory_total), g.temperature_c,
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


def host_table(snapshot: Snapshot) -> ResultTable:
    h = snapshot.host
    m = h.memory
    cores = h.cpu_percent
    mean = sum(cores) / len(cores) if cores else None
    items = [
        ("host", h.hostname),
        ("cores", str(h.cpu_count)),
        ("cpu mean %", "n/a" if mean is None else f"{mean:.0f}"),
        ("busiest core %", f"{max(cores):.0f}" if cores else "n/a"),
        ("load 1/5/15", " ".join(f"{x:.2f}" for x in h.load_avg)),
        ("memory used", f"{human_bytes(m.used)} of {human_bytes(m.total)}"),
        ("memory available", human_bytes(m.available)),
        ("swap used", f"{human_bytes(m.swap_used)} of {human_bytes(m.swap_total)}"),
    ]
    return ResultTable("Host", (Column("item"), Column("value")), tuple(items))


def process_table(snapshot: Snapshot, top: int | None = TOP_PROCESSES, rows: list[ProcessRow] | tuple[ProcessRow, ...] | None = None,
                  title: str | None = None, width: int | None = None) -> ResultTable:
    """The process table with the screen's columns (`PROCESS_COLUMNS`): the busiest `top` of
    the scope, or `rows` as given (the watch screen's `e`: the rows shown, in their order).
    `width` (`--width`): long command lines are cut so a text table fits, and GPU columns
    that no row has a value in are left out (a node without GPUs), as the screen does."""
    if rows is None:
        rows = sorted(scope_processes(snapshot), key=lambda p: (-(p.cpu_percent or 0.0), p.pid))[:top]
    shown = (NODE_COLUMN, *PROCESS_COLUMNS) if any(getattr(p, "node", "") for p in rows) else PROCESS_COLUMNS
    if width is not None:
        shown = tuple(c for c in shown if c.key not in GPU_COLUMNS or any(c.value(p) not in (None, "") for p in rows))
    data = tuple(tuple(c.value(p) for c in shown) for p in rows)
    if width is not None and data:
        data = _fit_command(data, width, shown)
    return ResultTable(title or f"Top {len(data)} processes by CPU", tuple(c.export_column() for c in shown),
                       data, (PROCESS_NOTE,))  # `--table top` picks it by this prefix


GPU_COLUMNS = frozenset({"gpu_mem_mib", "sm_percent", "gpus"})
"""The process table's GPU columns: empty on a node without a GPU view."""


def _fit_command(data: tuple[tuple[Any, ...], ...], width: int, shown: tuple[ProcessColumn, ...] = PROCESS_COLUMNS) -> tuple[tuple[Any, ...], ...]:
    """Cut the last (command) column so each text line stays within `width` cells."""
    columns = [c.export_column() for c in shown[:-1]]
    used = 1
    for i, column in enumerate(columns):
        cells = [column.missing if v is None else format_cell(v, column.fmt) for v in (r[i] for r in data)]
        used += 2 + max([len(column.header), *map(len, cells)]) + 1
    room = max(len("COMMAND"), width - used - 2)
    return tuple((*r[:-1], r[-1] if len(r[-1]) <= room else r[-1][: room - 1] + "…") for r in data)


def snapshot_tables(snapshot: Snapshot, top: int = TOP_PROCESSES, width: int | None = None) -> list[ResultTable]:
    """Scope, verdicts, GPUs, host and the busiest processes, for `metrics.export`; `width`
    cuts long command lines so the text tables fit (`--width`)."""
    return [scope_table(snapshot), verdict_table(snapshot), gpu_table(snapshot), host_table(snapshot), process_table(snapshot, top, width=width)]


def snapshot_dict(snapshot: Snapshot) -> dict[str, Any]:
    """`dataclasses.asdict` made JSON-safe: frozensets become sorted lists, tuples lists,
    NaN and infinities None. Empty verdicts are filled by `instant_verdicts`."""
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
