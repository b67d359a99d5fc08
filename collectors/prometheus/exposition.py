"""Provides the Prometheus exposition of what gpuscope samples (`collect --serve`, `--textfile`).

`Tracker.update(snapshot)` turns each sample into a `Reading`: the snapshot plus the counters
Prometheus wants and a snapshot lacks (the node's CPU busy seconds from /proc/stat, each Slurm
job's GPU energy since the exporter first saw it). `families(reading)` makes the metric
families; `SnapshotCollector` hands the latest reading's families to prometheus-client, so a
scrape only formats numbers and never samples. `write_textfile` writes the same text for
node_exporter's textfile collector, atomically.

Naming follows Prometheus' rules: a `gpuscope_` prefix, base units in the name (bytes, watts,
joules, celsius, hertz, seconds, ratios 0-1), counters end in `_total`. A value gpuscope could
not read is an absent series, never 0. Labels: per GPU `node`, `gpu` (index), `uuid`, `name`;
per node `node`; per Slurm job `node` and `jobid` only (few series per job: cardinality);
per process (only when asked) `node`, `pid`, `user`, `command` (its first word).
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

from gpuscope.collectors.host import stat_ticks
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import GpuSample, JobScope, Snapshot

TEXTFILE_NAME = "gpuscope.prom"
GPU_LABELS = ("node", "gpu", "uuid", "name")
MIB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Reading:
    """One sample as exported: the snapshot and the counters kept across samples."""

    snapshot: Snapshot
    cpu_busy_seconds: float | None = None
    """Busy CPU time of the node since boot, summed over cores (/proc/stat); None when unreadable."""
    jobs: tuple[JobScope, ...] = ()
    """The Slurm jobs the exporter follows: the scope's with --job, else every job on the node (jobs.py)."""
    job_gpu_energy_j: dict[str, float] = dataclasses.field(default_factory=dict)
    """jobid -> joules its allocated GPUs used since the exporter first saw the job (energy
    counters' deltas; a counter that went back, a driver reload, counts from its new value).
    Absent for a job whose GPUs have no energy counter or are unknown."""


def cpu_busy_seconds(proc: str = "/proc") -> float | None:
    """The `cpu` line of /proc/stat (all cores summed): its busy ticks in seconds, counted as
    the watch counts each core's (collectors.host.stat_ticks)."""
    try:
        with open(os.path.join(proc, "stat"), "rb") as f:
            first = f.readline().decode("ascii", "replace").split()
    except OSError:
        return None
    ticks = stat_ticks(first) if first and first[0] == "cpu" else None
    return None if ticks is None else ticks[0] / os.sysconf("SC_CLK_TCK")


def _job_gpus(job: JobScope, gpus: tuple[GpuSample, ...]) -> list[GpuSample]:
    """The snapshot's GPUs the job was allocated, matched by UUID, else by index."""
    uuids = {g.uuid for g in job.gpus if g.uuid}
    indices = {g.index for g in job.gpus if g.index is not None}
    return [g for g in gpus if g.uuid in uuids or g.index in indices]


class Tracker:
    """Keeps what a counter needs across samples; `update` is called once per sample."""

    def __init__(self, proc: str = "/proc") -> None:
        self._proc = proc
        self._energy: dict[str, dict[str, int]] = {}
        """jobid -> GPU uuid -> its energy counter (mJ) at the previous sample."""
        self._joules: dict[str, float] = {}

    def update(self, snapshot: Snapshot, jobs: Iterable[JobScope] | None = None) -> Reading:
        if jobs is None:
            jobs = (snapshot.scope,) if snapshot.scope.kind == "job" and snapshot.scope.job_id else ()
        jobs = tuple(jobs)
        for job in jobs:
            self._add_energy(str(job.job_id), _job_gpus(job, snapshot.gpus))
        live = {str(j.job_id) for j in jobs}
        for gone in set(self._energy) - live:  # an ended job's series goes; its memory too
            self._energy.pop(gone, None)
            self._joules.pop(gone, None)
        return Reading(snapshot, cpu_busy_seconds(self._proc), jobs, dict(self._joules))

    def _add_energy(self, job_id: str, gpus: list[GpuSample]) -> None:
        counters = {g.uuid: g.energy_mj for g in gpus if g.energy_mj is not None}
        if not counters:
            return
        before = self._energy.get(job_id, {})
        added = 0.0
        for uuid, mj in counters.items():
            if uuid in before:
                added += (mj - before[uuid] if mj >= before[uuid] else mj) / 1000.0
        self._energy[job_id] = counters
        self._joules[job_id] = self._joules.get(job_id, 0.0) + added


def _num(value: float | int | None, scale: float = 1.0) -> float | None:
    """A finite number in base units, or None (then the series is left out)."""
    if value is None or isinstance(value, bool):
        return None
    number = float(value) * scale
    return number if math.isfinite(number) else None


class _Families:
    """Collects families by name, adding a sample only where the value is known."""

    def __init__(self) -> None:
        self.out: dict[str, Metric] = {}

    def add(self, kind: str, name: str, doc: str, labels: dict[str, str], value: float | int | None, scale: float = 1.0) -> None:
        number = _num(value, scale)
        if number is None:
            return
        family = self.out.get(name)
        if family is None:
            make = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            family = self.out[name] = make(name, doc, labels=list(labels))
        family.add_metric([labels[k] for k in labels], number)


def families(reading: Reading | None, per_process: bool = False) -> list[Metric]:
    """The metric families of one reading; none before the first sample."""
    if reading is None:
        return []
    snap = reading.snapshot
    node = clean(snap.host.hostname)
    f = _Families()
    n = {"node": node}
    f.add("gauge", "gpuscope_simulated", "1 when the GPUs are simulated (gpuscope --demo), 0 when they are real", n,
          1 if snap.gpu_status.backend == "simulated" else 0)
    f.add("gauge", "gpuscope_sample_timestamp_seconds", "Unix time of the sample this scrape shows", n, snap.host.timestamp)
    _node(f, reading, n)
    for gpu in snap.gpus:
        _gpu(f, gpu, {"node": node, "gpu": str(gpu.index), "uuid": clean(gpu.uuid), "name": clean(gpu.name)})
    for job in reading.jobs:
        _job(f, reading, job, {"node": node, "jobid": clean(job.job_id)})
    if per_process:
        for p in snap.processes:
            command = clean(p.command.split(" ", 1)[0] if p.command else "")[-64:]
            labels = {"node": node, "pid": str(p.pid), "user": clean(p.user), "command": command}
            f.add("counter", "gpuscope_process_cpu_seconds", "CPU time (user + system) the process used", labels, p.cpu_time)
            f.add("gauge", "gpuscope_process_cpu_ratio", "Cores the process kept busy since the previous sample (1 = one core)", labels, p.cpu_percent, 0.01)
            f.add("gauge", "gpuscope_process_resident_memory_bytes", "Resident memory of the process", labels, p.rss if p.uid >= 0 else None)
            f.add("gauge", "gpuscope_process_gpu_memory_bytes", "GPU memory of the process, summed over its GPUs", labels, p.gpu_memory)
    return list(f.out.values())


def _node(f: _Families, reading: Reading, n: dict[str, str]) -> None:
    host = reading.snapshot.host
    f.add("counter", "gpuscope_node_cpu_busy_seconds", "Busy CPU time since boot, summed over cores (/proc/stat, idle and iowait excluded)", n,
          reading.cpu_busy_seconds)
    f.add("gauge", "gpuscope_node_cpus", "Logical cores of the node", n, host.cpu_count)
    for i, minutes in enumerate((1, 5, 15)):
        f.add("gauge", f"gpuscope_node_load{minutes}", f"Load average over {minutes} minute{'s' if minutes > 1 else ''}", n,
              host.load_avg[i] if len(host.load_avg) > i else None)
    mem = host.memory
    if mem.total > 0:  # an unreadable /proc/meminfo reads 0: unknown, not an empty node
        f.add("gauge", "gpuscope_node_memory_total_bytes", "Memory of the node", n, mem.total)
        f.add("gauge", "gpuscope_node_memory_used_bytes", "Memory in use (total - available, as free)", n, mem.used)
        f.add("gauge", "gpuscope_node_memory_available_bytes", "Memory available to new work (MemAvailable)", n, mem.available)


def _gpu(f: _Families, gpu: GpuSample, g: dict[str, str]) -> None:
    f.add("gauge", "gpuscope_gpu_utilization_ratio", "Share of time a kernel ran on the GPU (NVML utilization.gpu)", g, gpu.util_gpu, 0.01)
    f.add("gauge", "gpuscope_gpu_memory_utilization_ratio", "Share of time device memory was read or written", g, gpu.util_memory, 0.01)
    f.add("gauge", "gpuscope_gpu_memory_used_bytes", "GPU memory in use", g, gpu.memory_used)
    f.add("gauge", "gpuscope_gpu_memory_total_bytes", "GPU memory in all", g, gpu.memory_total)
    f.add("gauge", "gpuscope_gpu_power_watts", "Board power draw", g, gpu.power_w)
    f.add("gauge", "gpuscope_gpu_power_limit_watts", "Board power limit", g, gpu.power_limit_w)
    f.add("counter", "gpuscope_gpu_energy_joules", "Energy the board used since the driver loaded (NVML counter; a reload resets it)", g, gpu.energy_mj, 0.001)
    f.add("gauge", "gpuscope_gpu_temperature_celsius", "GPU temperature", g, gpu.temperature_c)
    f.add("gauge", "gpuscope_gpu_sm_clock_hertz", "SM clock", g, gpu.sm_clock_mhz, 1e6)
    f.add("gauge", "gpuscope_gpu_memory_clock_hertz", "Memory clock", g, gpu.memory_clock_mhz, 1e6)
    # GPM (Hopper and later): absent where the GPU has none, never 0
    f.add("gauge", "gpuscope_gpu_sm_active_ratio", "GPM: share of SMs busy", g, gpu.sm_active_pct, 0.01)
    f.add("gauge", "gpuscope_gpu_sm_occupancy_ratio", "GPM: resident warps against the SMs' maximum", g, gpu.sm_occupancy_pct, 0.01)
    f.add("gauge", "gpuscope_gpu_tensor_active_ratio", "GPM: share of time the SMs ran tensor-core instructions", g, gpu.tensor_active_pct, 0.01)
    f.add("gauge", "gpuscope_gpu_dram_active_ratio", "GPM: DRAM bandwidth used against its peak", g, gpu.dram_bw_pct, 0.01)


def _job(f: _Families, reading: Reading, job: JobScope, j: dict[str, str]) -> None:
    snap = reading.snapshot
    rows = [p for p in snap.processes if p.pid in job.pids]
    busy = [p.cpu_percent for p in rows if p.cpu_percent is not None]
    f.add("gauge", "gpuscope_job_cpus_allocated", "Cores the Slurm job was allocated on this node", j, job.cpus_allocated)
    f.add("gauge", "gpuscope_job_cpus_busy", "Cores the job's processes kept busy since the previous sample", j, sum(busy) / 100.0 if busy else None)
    f.add("gauge", "gpuscope_job_memory_requested_bytes", "Memory the job may use on this node (its cgroup limit or request)", j, job.memory_limit)
    f.add("gauge", "gpuscope_job_memory_peak_bytes", "Peak memory of the job on this node (cgroup peak, else the highest summed RSS seen)", j, job.memory_peak)
    known = bool(job.gpus) or not job.problems  # none found while scontrol or the cgroup failed: unknown, not 0
    f.add("gauge", "gpuscope_job_gpus_allocated", "GPUs the job was allocated on this node", j, len(job.gpus) if known else None)
    f.add("counter", "gpuscope_job_gpu_energy_joules", "Energy of the job's GPUs since gpuscope first saw the job (whole boards)", j,
          reading.job_gpu_energy_j.get(str(job.job_id)))


class SnapshotCollector(Collector):
    """A prometheus-client collector over the latest reading; `reading` is replaced whole by
    the sampling loop (one assignment), so a scrape in the server's thread sees one sample."""

    def __init__(self, per_process: bool = False) -> None:
        self.reading: Reading | None = None
        self.per_process = per_process

    def collect(self) -> Iterator[Metric]:
        yield from families(self.reading, self.per_process)


def registry_for(collector: SnapshotCollector) -> CollectorRegistry:
    """A registry of our series only (not prometheus-client's own process and GC series)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    return registry


def textfile_problem(folder: str) -> str | None:
    """Why `folder` cannot take the textfile (said before sampling starts), or None."""
    if not os.path.isdir(folder):
        return f"--textfile {clean(folder)}: no such folder"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".gpuscope-check-"):
            pass
    except OSError as exc:
        return f"--textfile {clean(folder)}: cannot write there ({clean(exc.strerror or exc)})"
    return None


def write_textfile(folder: str, data: bytes) -> Path:
    """DIR/gpuscope.prom replaced whole: written to a temporary name node_exporter skips (not
    *.prom), flushed to disk, then renamed over the old file, so a reader sees the old file or
    the new one, never half of one."""
    target = Path(folder) / TEXTFILE_NAME
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuscope.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # node_exporter often runs as another user
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # the rename itself survives a crash once the folder is synced
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
    return target
