"""Provides a recording's samples reduced to what the job report needs (metrics/job/report.py's
`Usage` per node): the reading of the recording's columns; the report's math stays in metrics.

    usages = usage_per_node(recording.Stream(path).batches())   # a Usage per node
    usage = usage_from_snapshots(snapshots)                      # one node's samples in memory
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.job.report import GpuUsage, Usage
from gpuscope.metrics.samples import JobScope, Snapshot
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.columns import GpuColumns, floats, gpu_columns, scope_runs, starts


def usage_from_snapshots(snapshots: Sequence[Snapshot]) -> Usage:
    """Reduce one node's samples (in time order) to a `Usage`."""
    return usage_from_batches([recording_schema.to_batch(snapshots)] if snapshots else [])


class _Reduce:
    """One node's samples reduced batch by batch, a row at a time over numpy slices, as
    `snapshot_tables` does for one Snapshot (scope_processes, busy_cores, scope_memory_used,
    gpus_used): a day of samples with hundreds of processes each is never held, nor made
    into objects (at 1 Hz that was minutes and gigabytes)."""

    def __init__(self) -> None:
        self.times: list[np.ndarray] = []
        self.busy: list[float] = []
        self.memory: list[float] = []
        self.peaks: list[int] = []
        self.allocated: set[int] = set()
        self.used: set[int] = set()
        self.gpus: dict[int, list[tuple[int, GpuColumns]]] = {}
        """GPU index -> (first row, its readings) per batch it was in."""
        self.rows = 0
        self.scope: JobScope | None = None
        """The last sample's scope (its allocation and what its memory counts)."""
        self.last_gpus: set[int] = set()

    def add(self, batch: pa.RecordBatch) -> None:
        n = batch.num_rows
        self.times.append(floats(batch.column("timestamp")))
        host_used = floats(batch.column("memory_used"))
        procs = batch.column("processes")
        first = starts(procs)
        flat = pc.list_flatten(procs)
        pid = pc.fill_null(pc.struct_field(flat, "pid"), -1).to_numpy(zero_copy_only=False)
        cpu = floats(pc.struct_field(flat, "cpu_percent"))
        rss = floats(pc.struct_field(flat, "rss"))
        users = np.asarray(pc.struct_field(flat, "user").to_pylist(), dtype=object)
        indices = pc.struct_field(flat, "gpu_indices")
        index_starts = starts(indices)
        index_values = pc.list_flatten(indices).to_numpy(zero_copy_only=False)
        gpus = batch.column("gpus")
        gflat = pc.list_flatten(gpus)
        gpu_starts = starts(gpus)
        gprocs = pc.struct_field(gflat, "processes")
        gp_starts, gp_flat = starts(gprocs), pc.list_flatten(gprocs)
        gp_pid = pc.fill_null(pc.struct_field(gp_flat, "pid"), -1).to_numpy(zero_copy_only=False)
        gp_gpu = pc.fill_null(pc.struct_field(gp_flat, "gpu_index"), -1).to_numpy(zero_copy_only=False)
        run, scopes = scope_runs(batch.column("scope"))
        pid_sets = [np.fromiter(s.pids, np.int64, len(s.pids)) for s in scopes]
        for r in range(n):
            scope, pids = scopes[run[r]], pid_sets[run[r]]
            a, b = first[r], first[r + 1]
            if len(pids):
                member = np.isin(pid[a:b], pids)
            elif scope.kind == "user" and scope.user:
                member = users[a:b] == scope.user
            else:
                member = np.ones(b - a, bool)
            readings = cpu[a:b][member]
            readings = readings[~np.isnan(readings)]
            self.busy.append(readings.sum() / 100.0 if readings.size else math.nan)
            if scope.cgroup is not None:  # the kernel's own count of the job's memory (and its peak)
                self.memory.append(math.nan if scope.memory_used is None else float(scope.memory_used))
                if scope.memory_peak is not None:
                    self.peaks.append(scope.memory_peak)
            elif scope.kind == "node":
                self.memory.append(host_used[r])
            else:  # no cgroup: the collector's memory_used and peak are this same RSS sum, not the kernel's
                self.memory.append(float(np.nansum(rss[a:b][member])) if member.any() else math.nan)
            self.allocated |= {g.index for g in scope.gpus if g.index is not None}
            ga, gb = gpu_starts[r], gpu_starts[r + 1]
            if scope.kind != "node":
                mine = pid[a:b][member]
                for k in np.flatnonzero(member) + a:  # the GPUs these processes have contexts on (NVML's and their own view)
                    self.used |= set(index_values[index_starts[k]:index_starts[k + 1]].tolist())
                pa_, pb_ = gp_starts[ga], gp_starts[gb]
                self.used |= set(gp_gpu[pa_:pb_][np.isin(gp_pid[pa_:pb_], mine)].tolist())
            self.scope = scope
        self.last_gpus = {g["index"] for g in gpus[n - 1].as_py() or () if g.get("index") is not None}
        for index, columns in gpu_columns(gpus, n).items():
            self.gpus.setdefault(index, []).append((self.rows, columns))
        self.rows += n

    def usage(self, hostname: str) -> Usage:
        scope = self.scope
        if scope is None:
            return Usage("n/a", np.array([]), np.array([]), None, np.array([]), None, None, "n/a")
        wanted = self.last_gpus if scope.kind == "node" else self.used
        gpus = []
        for index in sorted((self.allocated | wanted) - {-1}):
            util, mem = np.full(self.rows, np.nan), np.full(self.rows, np.nan)
            totals: list[float] = []
            for first, c in self.gpus.get(index, ()):
                util[first:first + len(c.util)], mem[first:first + len(c.util)] = c.util, c.mem_bytes
                totals += [t for t in c.mem_total.tolist() if t == t and t]
            total = int(totals[-1]) if totals else None
            simulated = any(c.simulated for _, c in self.gpus.get(index, ()))
            gpus.append(GpuUsage(index, index in self.allocated, util, mem, total, simulated))
        what = "cgroup memory" if scope.cgroup is not None else ("node memory in use" if scope.kind == "node" else "summed RSS")
        return Usage(hostname, np.concatenate(self.times), np.array(self.busy, float), scope.cpus_allocated, np.array(self.memory, float),
                     max(self.peaks) if self.peaks else None, scope.memory_limit, what, tuple(gpus), scope.kind, scope.job_id, scope.user,
                     scope.time_limit_s)


def usage_from_batches(batches: Iterable[pa.RecordBatch]) -> Usage:
    """Reduce one node's samples, as a recording's record batches in time order, to a `Usage`."""
    usages = usage_per_node(batches)
    return usages[0] if usages else _Reduce().usage("n/a")


COALESCE_ROWS = 4096
COALESCE_BYTES = 64 * 1024**2


def _coalesced(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Consecutive batches joined up to COALESCE_ROWS rows or COALESCE_BYTES: the reduction
    costs a fixed overhead per batch, so a recording written a sample per batch (10,000 of
    them) would take minutes where the same samples in big batches take a second."""
    pending: list[pa.RecordBatch] = []
    rows = size = 0
    for batch in batches:
        pending.append(batch)
        rows, size = rows + batch.num_rows, size + batch.nbytes
        if rows >= COALESCE_ROWS or size >= COALESCE_BYTES:
            yield pa.concat_batches(pending)
            pending, rows, size = [], 0, 0
    if pending:
        yield pa.concat_batches(pending)


def usage_per_node(batches: Iterable[pa.RecordBatch]) -> list[Usage]:
    """A `Usage` per node (hostname) of a recording, in the order the nodes first appear: a
    multi-node recording (`record --job` over srun) holds every node's samples interleaved."""
    nodes: dict[str, _Reduce] = {}
    for batch in _coalesced(batches):
        hosts = pc.fill_null(batch.column("hostname"), "n/a")
        for host in pc.unique(hosts).to_pylist():
            part = batch.filter(pc.equal(hosts, host))
            if part.num_rows:
                nodes.setdefault(host, _Reduce()).add(part)
    return [reduce.usage(host) for host, reduce in nodes.items()]
