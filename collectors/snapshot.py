"""Provides `SnapshotSource`: one `poll()` gives everything a refresh of `gpuscope watch` shows.

It combines the collectors (host, processes, GPU backend, job scope) into an immutable
`Snapshot`, attaches each GPU process's memory and SM % to its process row, and judges the
scope ("asked for 2 cores, using 1.0"). It reads the scope's processes only, unless
`everyone` is set (the watch's `a`): then every process of the node, while the scope's own
figures (memory peak, verdicts) still count only the scope's. A `--demo` run's simulated GPU
processes are rows of their own (`SimulatedBackend.process_rows`), never attached to a real
process that happens to have the same made-up pid. `poll()` blocks (procfs reads, NVML, the first call
may run scontrol): callers run it in a worker thread, never on the UI thread.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable, Mapping

from gpuscope.collectors.gpu import GpuBackend, NoGpuBackend, open_backend
from gpuscope.collectors.host import HostCollector
from gpuscope.collectors.processes import ProcessCollector
from gpuscope.collectors.rapl import read_rapl
from gpuscope.collectors.scope import refresh, resolve_scope
from gpuscope.collectors.simulated import SimulatedBackend
from gpuscope.metrics.job import verdicts
from gpuscope.metrics.history import History
from gpuscope.metrics.samples import GpuProcess, GpuSample, GpuStatus, JobScope, ProcessRow, Snapshot
from gpuscope.metrics.snapshot_tables import NOT_IN_PROC, scope_processes

VERDICT_WINDOW_S = verdicts.WINDOW_S


def attach_gpu_use(processes: tuple[ProcessRow, ...], gpus: tuple[GpuSample, ...]) -> tuple[ProcessRow, ...]:
    """Process rows with GPU memory (summed over GPUs), SM % and the GPUs each one uses."""
    per_pid: dict[int, tuple[int | None, float | None, list[int]]] = {}
    for gpu in gpus:
        for proc in gpu.processes:
            memory, sm, indices = per_pid.get(proc.pid, (None, None, []))
            if proc.used_memory is not None:
                memory = (memory or 0) + proc.used_memory
            if proc.sm_percent is not None:
                sm = (sm or 0.0) + proc.sm_percent
            per_pid[proc.pid] = (memory, sm, [*indices, gpu.index])
    if not per_pid:
        return processes
    return tuple(
        dataclasses.replace(p, gpu_memory=per_pid[p.pid][0], gpu_sm_percent=per_pid[p.pid][1], gpu_indices=tuple(per_pid[p.pid][2]))
        if p.pid in per_pid else p
        for p in processes
    )


def add_unseen_gpu_processes(processes: tuple[ProcessRow, ...], gpus: tuple[GpuSample, ...], status: GpuStatus) -> tuple[ProcessRow, ...]:
    """The node's rows plus one for each GPU process NVML reports that /proc does not list
    (a container's or another PID namespace's pid: NVML gives host pids), with its GPU memory
    and SM %, so busy GPUs never show without their processes. Their state is
    `snapshot_tables.NOT_IN_PROC` and what /proc would tell (user, CPU, memory) is unknown.
    Simulated GPUs run made-up pids: nothing is added for them."""
    if status.backend == "simulated":
        return processes
    listed = {p.pid for p in processes}
    found: dict[int, list[GpuProcess]] = {}
    for gpu in gpus:
        for proc in gpu.processes:
            if proc.pid not in listed:
                found.setdefault(proc.pid, []).append(proc)
    if not found:
        return processes
    extra = []
    for pid, procs in sorted(found.items()):
        kind = {"G": "graphics", "M": "MPS"}.get(procs[0].kind, "compute")
        extra.append(ProcessRow(pid, 0, "?", -1, NOT_IN_PROC, None, 0, 0, 0.0,
                                f"({kind} process NVML reports, not in /proc: a container or another PID namespace)"))
    return processes + attach_gpu_use(tuple(extra), gpus)


class SnapshotSource:
    """The real data behind the watch screen and `gpuscope watch --once`."""

    def __init__(self, *, job: str | None = None, user: str | None = None, pid: int | None = None,
                 demo: str | None = None, root: str = "/", env: Mapping[str, str] | None = None,
                 backend_factory: Callable[[str | None], GpuBackend] = open_backend) -> None:
        self._scope_args = {"job": job, "user": user, "pid": pid, "root": root, "env": env}
        self._root = root
        self._demo = demo
        self._backend_factory = backend_factory
        self._host = HostCollector(root)
        self._processes = ProcessCollector(root)
        self._gpu: GpuBackend | None = None
        self._scope: JobScope | None = None
        self._history = History(capacity=int(VERDICT_WINDOW_S * 4))
        self.everyone = False
        """List every process of the node, not only the scope's (the watch's `a` sets it)."""

    def _backend(self) -> GpuBackend:
        if self._gpu is None:
            try:
                self._gpu = self._backend_factory(self._demo)
            except ValueError:  # an unknown --demo scenario is the caller's to report
                raise
            except Exception as error:  # noqa: BLE001 - no GPU view is not a reason to stop
                self._gpu = NoGpuBackend(f"GPU backend failed to start: {error}")
        return self._gpu

    def _current_scope(self) -> JobScope:
        if self._scope is None:
            self._scope = resolve_scope(**self._scope_args)  # type: ignore[arg-type]
        else:
            self._scope = refresh(self._scope, self._root)
        return self._scope

    def poll(self) -> Snapshot:
        backend = self._backend()
        scope = self._current_scope()
        host = self._host.sample()
        pids = None if scope.kind == "node" or self.everyone else scope.pids
        processes = self._processes.sample(pids)
        try:
            gpus = backend.sample()
            status = backend.status()
        except Exception as error:  # noqa: BLE001 - keep the host view alive
            gpus, status = (), GpuStatus("none", f"GPU sampling failed: {error}")
        if isinstance(backend, SimulatedBackend):  # made-up pids: rows of their own
            processes += attach_gpu_use(backend.process_rows(gpus), gpus)
        else:
            processes = attach_gpu_use(processes, gpus)
            if pids is None:  # every process listed: absence from /proc is evidence
                processes = add_unseen_gpu_processes(processes, gpus, status)
        snapshot = Snapshot(host, processes, gpus, status, scope, rapl=read_rapl())
        own = scope_processes(snapshot)
        scope = self._with_rss_peak(scope, own, host.timestamp, gpus)
        return dataclasses.replace(snapshot, scope=scope, verdicts=self._judge(scope, own, gpus))

    def _with_rss_peak(self, scope: JobScope, processes: tuple[ProcessRow, ...], t: float, gpus: tuple[GpuSample, ...]) -> JobScope:
        """Keep history for verdicts; without a cgroup, peak memory is the peak summed RSS seen."""
        if scope.kind == "node":
            return scope  # no verdicts and no peak for a whole node: nothing to keep
        rss = sum(p.rss for p in processes)
        readings = [p.cpu_percent for p in processes if p.cpu_percent is not None]
        busy = sum(readings) / 100.0 if readings else None  # the first sample has no CPU % yet
        values: dict[str, float | None] = {"rss": float(rss), "busy": busy}
        values.update({f"gpu{g.index}": g.util_gpu for g in gpus})
        self._history.append(t, values)
        if scope.memory_peak is not None:
            return scope
        peak = int(self._history.peak("rss") or rss)
        note = "peak memory: highest summed RSS of the scope's processes since gpuscope started"
        evidence = scope.evidence if note in scope.evidence else (*scope.evidence, note)
        return dataclasses.replace(scope, memory_used=scope.memory_used if scope.memory_used is not None else rss, memory_peak=peak, evidence=evidence)

    def _judge(self, scope: JobScope, processes: tuple[ProcessRow, ...], gpus: tuple[GpuSample, ...]) -> tuple:
        if scope.kind == "node":
            return ()
        busy = self._history.window_mean("busy", VERDICT_WINDOW_S)
        utilisation = {g.index: self._history.window_mean(f"gpu{g.index}", VERDICT_WINDOW_S) for g in gpus}
        used = {i for p in processes for i in p.gpu_indices}
        return verdicts.judge(scope, busy, utilisation, used)

    def close(self) -> None:
        self._processes.close()
        if self._gpu is not None:
            self._gpu.close()


def snapshot_once(source: SnapshotSource, settle_s: float = 1.0) -> Snapshot:
    """Two polls `settle_s` apart: CPU % needs a previous sample (as htop and top do). The
    readings are in the OS's 10 ms ticks, so a process's CPU % is true to about 1 / settle_s
    points of a core (2 at 0.5 s)."""
    source.poll()
    time.sleep(settle_s)
    return source.poll()


def current_uid() -> int:
    return os.getuid()
