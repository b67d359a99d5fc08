"""Provides one-shot views of a `Snapshot`: tables for `gpuscope watch --once --format text|csv|
markdown` and a JSON-safe dict for `--format json`.

Pure functions over one snapshot, so the print path needs no Textual. The helpers that decide
which processes belong to the scope and how many cores they keep busy live here too, so the
live screen and the one-shot output agree on those numbers.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gpuscope.metrics import verdicts as judge_mod
from gpuscope.metrics.samples import ProcessRow, Snapshot, Verdict, elapsed
from gpuscope.metrics.table import Column, ResultTable
from gpuscope.metrics.units import human_bytes

MIB = 1024 * 1024
TOP_PROCESSES = 20
"""Rows in the one-shot process table: the busiest, like `top -bn1 | head`."""


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
    return None if value is None else value / MIB


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
        Column("processes"), Column("error"),
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


def process_table(snapshot: Snapshot, top: int = TOP_PROCESSES) -> ResultTable:
    rows = sorted(scope_processes(snapshot), key=lambda p: (-(p.cpu_percent or 0.0), p.pid))[:top]
    cols = (
        Column("pid", "PID"), Column("user"), Column("cpu_percent", "CPU %", ".1f"),
        Column("rss_mib", "RSS MiB", ".0f"), Column("gpu_memory_mib", "GPU MiB", ".0f"),
        Column("gpu_sm_percent", "SM %", ".0f"), Column("gpus"), Column("elapsed_s", "time s", ".0f"),
        Column("command"),
    )
    data = tuple(
        (p.pid, p.user, p.cpu_percent, _mib(p.rss), _mib(p.gpu_memory), p.gpu_sm_percent,
         ",".join(map(str, p.gpu_indices)), elapsed(p, snapshot.host.uptime), p.command)
        for p in rows
    )
    return ResultTable(f"Top {len(data)} processes by CPU", cols, data)  # `--table top` picks it by this prefix


def snapshot_tables(snapshot: Snapshot, top: int = TOP_PROCESSES) -> list[ResultTable]:
    """Scope, verdicts, GPUs, host and the busiest processes, for `metrics.export`."""
    return [scope_table(snapshot), verdict_table(snapshot), gpu_table(snapshot), host_table(snapshot), process_table(snapshot, top)]


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
