"""Provides `aggregate`: one `Snapshot` for a job across its nodes, the watch's "all nodes" view.

Each node's own snapshot (from `gpuscope collect --stream` on that node) is summed into one the
watch screen can show with its usual panes:

- cores: every node's cores one after the other (the job's cores keep their highlight), the
  allocation and the busy cores summed;
- memory: the nodes' host memory and the job's memory summed; the job's peak is the sum of the
  nodes' peaks (an upper bound: the peaks need not have come at the same moment, evidence says so);
- GPUs: every node's GPUs, each with a new index unique across nodes (`gpu_labels` names it
  `node:index` for the screen);
- processes: the job's processes of every node, as `NodeProcessRow`s that say their node (pids
  repeat across nodes); their start times are moved to the aggregate's clock so that the time
  each one has run stays right;
- verdicts: each node's own, prefixed with the node.

A value unknown on one node is unknown in the sum (n/a, never a partial sum shown as the total).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import AllocatedGpu, GpuStatus, HostSample, JobScope, MemoryUse, ProcessRow, Snapshot, Verdict
from gpuscope.metrics.snapshot_tables import scope_memory_used, scope_processes

GPU_STRIDE = 1000
"""Aggregate GPU index = node position * GPU_STRIDE + the GPU's index on its node: stable while
a node ends (its GPUs leave, the others keep their index and so their history)."""
PEAK_NOTE = "peak memory: the sum of each node's peak (an upper bound: they need not coincide)"


@dataclass(frozen=True, slots=True)
class NodeProcessRow(ProcessRow):
    """A process row of one node in the all-nodes view (pids repeat across nodes)."""

    node: str = ""


@dataclass(frozen=True)
class Aggregate:
    snapshot: Snapshot
    gpu_labels: dict[int, str]
    """Aggregate GPU index -> `node:index`, as the GPU pane names it."""


def _sum(values: list[int | None]) -> int | None:
    return None if not values or any(v is None for v in values) else sum(v for v in values if v is not None)


def node_row(row: ProcessRow, node: str, shift: float) -> NodeProcessRow:
    fields = {f.name: getattr(row, f.name) for f in dataclasses.fields(ProcessRow)}
    fields["started"] = row.started + shift
    return NodeProcessRow(**fields, node=node)


def aggregate(nodes: Mapping[str, Snapshot], position: Mapping[str, int] | None = None) -> Aggregate:
    """The all-nodes snapshot of `nodes` (node name -> its latest snapshot; at least one).
    `position`: each node's place for the GPU indices (default: the order of `nodes`)."""
    if not nodes:
        raise ValueError("no node to aggregate")
    names = list(nodes)
    place = dict(position) if position is not None else {n: i for i, n in enumerate(names)}
    snaps = [nodes[n] for n in names]
    hosts = [s.host for s in snaps]
    uptimes = [h.uptime for h in hosts if h.uptime is not None]
    uptime = max(uptimes) if uptimes else None
    memory = MemoryUse(**{f.name: sum(getattr(h.memory, f.name) for h in hosts) for f in dataclasses.fields(MemoryUse)})
    load = tuple(sum(h.load_avg[i] for h in hosts) if all(h.load_avg[i] is not None for h in hosts) else None for i in range(3))
    host = HostSample(
        timestamp=max(h.timestamp for h in hosts), hostname=f"all {len(names)} nodes",
        cpu_percent=tuple(c for h in hosts for c in h.cpu_percent), load_avg=load,  # type: ignore[arg-type]
        memory=memory, cpu_count=sum(h.cpu_count for h in hosts), uptime=uptime,
    )

    gpus, labels, allocated, rows, cpu_ids, verdicts, problems = [], {}, [], [], [], [], []
    offset = 0
    for name, snap in zip(names, snaps):
        base = place.get(name, len(place)) * GPU_STRIDE
        shown = clean(name)  # a host name from another node is outside text
        for g in snap.gpus:
            gpus.append(dataclasses.replace(g, index=base + g.index))
            labels[base + g.index] = f"{shown}:{g.index}"
        allocated += [AllocatedGpu(None if a.index is None else base + a.index, a.uuid, f"{shown}: {a.evidence}") for a in snap.scope.gpus]
        cores = len(snap.host.cpu_percent)  # an id past them would mark a core of the next node
        cpu_ids += [offset + c for c in snap.scope.cpu_ids if 0 <= c < cores]
        offset += cores
        # a process's start is seconds after its own node's boot: moved onto the aggregate's uptime
        shift = 0.0 if uptime is None or snap.host.uptime is None else uptime - snap.host.uptime
        rows += [node_row(p, shown, shift) for p in scope_processes(snap)]
        verdicts += [Verdict(v.severity, f"{shown}: {v.text}") for v in snap.verdicts]
        problems += [f"{shown}: {p}" for p in snap.scope.problems]

    scopes = [s.scope for s in snaps]
    first = scopes[0]
    peaks = _sum([s.memory_peak for s in scopes])
    scope = JobScope(
        kind=first.kind, label=first.label, job_id=first.job_id, user=first.user,
        cpus_allocated=_sum([s.cpus_allocated for s in scopes]), cpu_ids=tuple(cpu_ids),
        memory_limit=_sum([s.memory_limit for s in scopes]), memory_used=_sum([scope_memory_used(s) for s in snaps]),
        memory_peak=peaks, gpus=tuple(allocated), work_dir=first.work_dir, stdout=first.stdout, stderr=first.stderr, time_limit_s=first.time_limit_s,
        evidence=(f"{len(names)} nodes: {', '.join(map(clean, names))}",) + ((PEAK_NOTE,) if peaks is not None and len(names) > 1 else ()),
        problems=tuple(problems),
    )
    backends = {s.gpu_status.backend for s in snaps}
    backend = "simulated" if "simulated" in backends else ("nvml" if "nvml" in backends else "none")
    drivers = {s.gpu_status.driver_version for s in snaps}
    reasons = [f"{clean(n)}: {s.gpu_status.reason}" for n, s in zip(names, snaps) if s.gpu_status.reason]
    status = GpuStatus(backend, "; ".join(reasons), drivers.pop() if len(drivers) == 1 else None)
    return Aggregate(Snapshot(host, tuple(rows), tuple(gpus), status, scope, tuple(verdicts)), labels)
