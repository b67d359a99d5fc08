"""Provides the live-sample vocabulary: frozen snapshots that collectors return and the UI shows.

Collectors (host, processes, GPUs, job scope) fill these; nothing here does I/O. Values a
source could not provide are None (shown as "n/a"), never 0, so an unsupported NVML field or an
unreadable cgroup file is not mistaken for an idle resource. Sizes are bytes, times seconds,
utilisation percent (0-100).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # metrics.energy imports numpy, which a snapshot does not need
    from gpuscope.metrics.energy import RaplSample


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """Host memory like `free -b`: total, used (total - available), available, cache, swap."""

    total: int
    available: int
    used: int
    cached: int
    buffers: int
    swap_total: int
    swap_used: int


@dataclass(frozen=True, slots=True)
class HostSample:
    """One reading of the node: per-core busy percent, load average, memory."""

    timestamp: float
    hostname: str
    cpu_percent: tuple[float, ...]
    """Busy percent per logical core since the previous sample (index = core id)."""
    load_avg: tuple[float, float, float]
    memory: MemoryUse
    cpu_count: int
    uptime: float | None = None
    """Seconds since boot at this reading (/proc/uptime); what process start times count from."""


@dataclass(frozen=True, slots=True)
class ProcessRow:
    """One process, as the process table shows it."""

    pid: int
    ppid: int
    user: str
    uid: int
    state: str
    cpu_percent: float | None
    """Percent of one core since the previous sample (None on the first sample of a process)."""
    rss: int
    threads: int
    started: float
    """Seconds after boot at which the process started (field 22 of /proc/PID/stat): fixed for
    the process's life, so a row of an idle process can be reused from one refresh to the
    next. How long it has run is `elapsed(row, host.uptime)`."""
    command: str
    """Command line, cleaned of escape sequences (metrics.safe_text.clean); shown as plain text."""
    cpu_id: int | None = None
    """Core the process last ran on (field 39 of /proc/PID/stat)."""
    cpu_time: float | None = None
    """User + system CPU seconds used so far (htop's TIME+)."""
    gpu_memory: int | None = None
    gpu_sm_percent: float | None = None
    gpu_indices: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class GpuProcess:
    """A process seen by NVML on one GPU."""

    pid: int
    gpu_index: int
    used_memory: int | None
    """None when NVML cannot tell (MIG, some drivers): never shown as 0."""
    sm_percent: float | None = None
    kind: str = "C"
    """'C' compute, 'G' graphics, 'M' MPS."""


@dataclass(frozen=True, slots=True)
class MigSample:
    gpu_index: int
    mig_index: int
    uuid: str
    profile: str
    memory_used: int | None
    memory_total: int | None


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One reading of one GPU. `error` says why fields are missing (e.g. 'GPU is lost')."""

    index: int
    uuid: str
    name: str
    bus_id: str
    timestamp: float
    util_gpu: float | None = None
    util_memory: float | None = None
    memory_used: int | None = None
    memory_total: int | None = None
    temperature_c: float | None = None
    power_w: float | None = None
    power_limit_w: float | None = None
    sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    throttle_reasons: tuple[str, ...] = ()
    mig: tuple[MigSample, ...] = ()
    processes: tuple[GpuProcess, ...] = ()
    simulated: bool = False
    error: str | None = None
    sm_clock_max_mhz: int | None = None
    """The highest SM clock this GPU can run (nvmlDeviceGetMaxClockInfo): `sm_clock_mhz` against it."""
    memory_clock_max_mhz: int | None = None
    energy_mj: int | None = None
    """NVML's energy counter: millijoules since the driver loaded (Volta and later). Always the
    whole board, also with MIG on (NVML has no energy per MIG instance). A job's energy is the
    counter's delta over the watch (metrics.energy.gpu_energy), never this value itself."""
    energy_note: str = ""
    """Why `energy_mj` is None, or what it covers ("whole GPU: ... MIG instances"); '' otherwise."""
    sm_active_pct: float | None = None
    """GPM (Hopper and later), between this poll and the previous one: percent of SMs busy
    (unlike `util_gpu`, which is the time any kernel ran)."""
    sm_occupancy_pct: float | None = None
    """GPM: resident warps against the SMs' maximum, percent."""
    tensor_active_pct: float | None = None
    """GPM: percent of time the SMs ran tensor-core instructions (any precision)."""
    dram_bw_pct: float | None = None
    """GPM: DRAM bandwidth used against its peak, percent."""
    pcie_tx_bytes_per_s: float | None = None
    """GPM: PCIe traffic from the GPU (bytes/s), free to read, unlike GpuBackend.pcie_throughput."""
    pcie_rx_bytes_per_s: float | None = None
    nvlink_tx_bytes_per_s: float | None = None
    """GPM: NVLink traffic over all links (bytes/s); None on boards without NVLink."""
    nvlink_rx_bytes_per_s: float | None = None
    activity_note: str = ""
    """Why the GPM fields are None (no GPM before Hopper, first poll...) or what they cover; ''
    when they are plain readings."""


@dataclass(frozen=True, slots=True)
class GpuStatus:
    """What the GPU backend is: 'nvml', 'simulated', or 'none' with the reason in one line."""

    backend: str
    reason: str = ""
    driver_version: str | None = None


@dataclass(frozen=True, slots=True)
class AllocatedGpu:
    """A GPU the job was given, with how we know."""

    index: int | None
    uuid: str | None
    evidence: str


@dataclass(frozen=True, slots=True)
class JobScope:
    """Which processes and resources a view is about: a Slurm job, a user, a process tree or
    the node. Allocation fields are None when unknown; `evidence` lists where each came from
    (e.g. 'cpus from cgroup cpuset.cpus.effective', 'gpus from SLURM_JOB_GPUS')."""

    kind: str
    """'job', 'user', 'pid' or 'node'."""
    label: str
    pids: frozenset[int] = frozenset()
    job_id: str | None = None
    user: str | None = None
    cpus_allocated: int | None = None
    cpu_ids: tuple[int, ...] = ()
    memory_limit: int | None = None
    memory_used: int | None = None
    memory_peak: int | None = None
    gpus: tuple[AllocatedGpu, ...] = ()
    cgroup: str | None = None
    work_dir: str | None = None
    """A job's working directory (`WorkDir` in scontrol show job); raw, cleaned where shown."""
    stdout: str | None = None
    """A job's output file (`StdOut`); raw, cleaned where shown. The browser opens on
    `work_dir` with it selected."""
    evidence: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    """Clear messages about what could not be read (unreadable cgroup file, scontrol missing...)."""
    time_limit_s: float | None = None
    """A job's time limit in seconds (`TimeLimit` in scontrol show job); None when unlimited or unknown."""
    stderr: str | None = None
    """A job's error file (`StdErr`); raw, cleaned where shown."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A plain-words judgement, e.g. 'asked for 8 cores, using 1'."""

    severity: str
    """'ok', 'warning' or 'problem'."""
    text: str


@dataclass(frozen=True)
class Snapshot:
    """Everything one refresh saw: the schema of `gpuscope watch --once --format json`."""

    host: HostSample
    processes: tuple[ProcessRow, ...]
    gpus: tuple[GpuSample, ...]
    gpu_status: GpuStatus
    scope: JobScope
    verdicts: tuple[Verdict, ...] = field(default=())
    rapl: RaplSample | None = None
    """The node's RAPL counters at this refresh (CPU packages and DRAM): a node figure, never
    one job's. None when they were not read."""


def elapsed(row: ProcessRow, uptime: float | None) -> float:
    """Wall seconds `row`'s process had run at a reading taken `uptime` seconds after boot
    (0 when the uptime is unknown)."""
    return max(uptime - row.started, 0.0) if uptime is not None else 0.0
