"""Provides a recording's samples reduced to what the job report needs (metrics/job/report.py's
`Usage` per node): the reading of the recording's columns; the report's math stays in metrics.

    usages = usage_per_node(recording.Stream(path).batches())   # a Usage per node
    usage = usage_from_snapshots(snapshots)                      # one node's samples in memory
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gpuscope.metrics.job.report import GpuUsage, Usage
from gpuscope.metrics.samples import JobScope, Snapshot
from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.columns import GpuColumns, floats, gpu_columns, parents, scope_runs


def usage_from_snapshots(snapshots: Sequence[Snapshot]) -> Usage:
    """Reduce one node's samples (in time order) to a `Usage`."""
    return usage_from_batches([recording_schema.to_batch(snapshots)] if snapshots else [])


class _Reduce:
    """One node's samples reduced batch by batch, as `snapshot_tables` does for one Snapshot
    (scope_processes, busy_cores, scope_memory_used, gpus_used), on each batch's whole columns:
    every process's membership of its sample's scope at once, then sums per sample. A day of
    samples with hundreds of processes each is never held, nor made into objects, nor stepped
    through a sample at a time in Python (92,176 samples of 16 nodes took ~8 s CPU that way, ~1 s now)."""

    def __init__(self) -> None:
        self.times: list[np.ndarray] = []
        self.busy: list[np.ndarray] = []
        self.memory: list[np.ndarray] = []
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
        run, scopes = scope_runs(batch.column("scope"))
        procs = batch.column("processes")
        row = parents(procs)  # each process's sample
        flat = pc.list_flatten(procs)
        pid = pc.fill_null(pc.struct_field(flat, "pid"), -1).to_numpy(zero_copy_only=False)
        member = self._members(run[row], pid, pc.struct_field(flat, "user"), scopes)
        cpu = floats(pc.struct_field(flat, "cpu_percent"))
        read = member & ~np.isnan(cpu)
        self.busy.append(_row_sums(cpu[read], np.bincount(row[read], minlength=n)) / 100.0)
        rss = np.nan_to_num(floats(pc.struct_field(flat, "rss")), nan=0.0)  # nansum's
        memory = _row_sums(rss[member], np.bincount(row[member], minlength=n))  # NaN where no process is the job's
        kinds = np.array([0 if s.cgroup is not None else 1 if s.kind == "node" else 2 for s in scopes])[run]  # what memory counts
        cgroup = np.array([np.nan if s.cgroup is None or s.memory_used is None else float(s.memory_used) for s in scopes])[run]
        memory = np.where(kinds == 0, cgroup, np.where(kinds == 1, floats(batch.column("memory_used")), memory))
        self.memory.append(memory)
        self.peaks += [s.memory_peak for s in scopes if s.cgroup is not None and s.memory_peak is not None]
        self.allocated |= {g.index for s in scopes for g in s.gpus if g.index is not None}
        node = np.array([s.kind == "node" for s in scopes])[run]
        self._add_used(batch, row, pid, member & ~node[row])
        self.scope = scopes[-1]
        gpus = batch.column("gpus")
        self.last_gpus = {g["index"] for g in gpus[n - 1].as_py() or () if g.get("index") is not None}
        for index, columns in gpu_columns(gpus, n, readings=False).items():
            self.gpus.setdefault(index, []).append((self.rows, columns))
        self.rows += n

    @staticmethod
    def _members(run: np.ndarray, pid: np.ndarray, user: pa.Array, scopes: list[JobScope]) -> np.ndarray:
        """bool per process: it is its sample's scope's (one of its pids; else, for a user
        scope, that user's; else every process)."""
        member = np.ones(len(pid), bool)
        by_pid = [j for j, s in enumerate(scopes) if s.pids]
        if by_pid:  # (scope run, pid) pairs: one lookup for every process
            pids = [np.fromiter(scopes[j].pids, np.int64, len(scopes[j].pids)) for j in by_pid]
            mine = np.isin(run, by_pid)
            member[mine] = _pairs_in(run[mine], pid[mine], np.repeat(by_pid, [len(p) for p in pids]), np.concatenate(pids))
        by_user = [j for j, s in enumerate(scopes) if not s.pids and s.kind == "user" and s.user]
        if by_user:
            names = pa.array([scopes[j].user if j in by_user else None for j in range(len(scopes))], pa.string())
            mine = np.isin(run, by_user)
            same = pc.fill_null(pc.equal(user, pc.take(names, pa.array(run))), False).to_numpy(zero_copy_only=False)
            member[mine] = same[mine]
        return member

    def _add_used(self, batch: pa.RecordBatch, row: np.ndarray, pid: np.ndarray, member: np.ndarray) -> None:
        """The GPUs the scope's processes have contexts on, in their own view (gpu_indices)
        and in NVML's (a GPU's processes with one of their pids in the same sample)."""
        if not member.any():
            return
        indices = pc.struct_field(pc.list_flatten(batch.column("processes")), "gpu_indices")
        index_values = pc.list_flatten(indices).to_numpy(zero_copy_only=False)
        self.used |= set(np.unique(index_values[member[parents(indices)]]).tolist())
        gpus = batch.column("gpus")
        gprocs = pc.struct_field(pc.list_flatten(gpus), "processes")
        gp_row = parents(gpus)[parents(gprocs)]
        gp_flat = pc.list_flatten(gprocs)
        gp_pid = pc.fill_null(pc.struct_field(gp_flat, "pid"), -1).to_numpy(zero_copy_only=False)
        gp_gpu = pc.fill_null(pc.struct_field(gp_flat, "gpu_index"), -1).to_numpy(zero_copy_only=False)
        if not len(gp_pid):
            return
        seen = _pairs_in(gp_row, gp_pid, row[member], pid[member])  # one of the scope's pids in the same sample
        self.used |= set(np.unique(gp_gpu[seen]).tolist())

    def usage(self, hostname: str) -> Usage:
        scope = self.scope
        if scope is None:
            return Usage("n/a", np.array([]), np.array([]), None, np.array([]), None, None, "n/a")
        wanted = self.last_gpus if scope.kind == "node" else self.used
        gpus = []
        for index in sorted((self.allocated | wanted) - {-1}):
            util, mem = np.full(self.rows, np.nan), np.full(self.rows, np.nan)
            total = None  # the last total memory read (not n/a, not 0)
            for first, c in self.gpus.get(index, ()):
                util[first:first + len(c.util)], mem[first:first + len(c.util)] = c.util, c.mem_bytes
                read = c.mem_total[~np.isnan(c.mem_total) & (c.mem_total != 0)]
                total = int(read[-1]) if read.size else total
            simulated = any(c.simulated for _, c in self.gpus.get(index, ()))
            gpus.append(GpuUsage(index, index in self.allocated, util, mem, total, simulated))
        what = "cgroup memory" if scope.cgroup is not None else ("node memory in use" if scope.kind == "node" else "summed RSS")
        return Usage(hostname, np.concatenate(self.times), np.concatenate(self.busy), scope.cpus_allocated, np.concatenate(self.memory),
                     max(self.peaks) if self.peaks else None, scope.memory_limit, what, tuple(gpus), scope.kind, scope.job_id, scope.user,
                     scope.time_limit_s)


def _pairs_in(groups: np.ndarray, values: np.ndarray, other_groups: np.ndarray, other_values: np.ndarray) -> np.ndarray:
    """bool per (group, value) pair: whether it is among the other pairs (pandas' hashed
    MultiIndex look-up: one call for every process of a batch)."""
    import pandas as pd

    return pd.MultiIndex.from_arrays([groups, values]).isin(pd.MultiIndex.from_arrays([other_groups, other_values]))


def _row_sums(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row, the sum of its `counts[row]` values (`values` in row order), NaN for none:
    each row's sum as numpy's `.sum()` of its slice, to the last bit (rows of one length
    summed as a 2-D block use the same pairwise order; `np.add.reduceat` does not)."""
    out = np.full(len(counts), np.nan)
    first = np.cumsum(counts) - counts
    for length in np.unique(counts[counts > 0]).tolist():
        rows = np.flatnonzero(counts == length)
        out[rows] = values[first[rows][:, None] + np.arange(length)].sum(axis=1)
    return out


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
            yield pending[0] if len(pending) == 1 else pa.concat_batches(pending)  # a big batch is not copied
            pending, rows, size = [], 0, 0
    if pending:
        yield pending[0] if len(pending) == 1 else pa.concat_batches(pending)


def usage_per_node(batches: Iterable[pa.RecordBatch]) -> list[Usage]:
    """A `Usage` per node (hostname) of a recording, in the order the nodes first appear: a
    multi-node recording (`record --job` over srun) holds every node's samples interleaved."""
    nodes: dict[str, _Reduce] = {}
    for batch in _coalesced(batches):
        hosts = pc.fill_null(batch.column("hostname"), "n/a")
        every = pc.unique(hosts).to_pylist()
        for host in every:  # one node's batch (an import writes a node at a time) is not copied
            part = batch if len(every) == 1 else batch.filter(pc.equal(hosts, host))
            nodes.setdefault(host, _Reduce()).add(part)
    return [reduce.usage(host) for host, reduce in nodes.items()]
