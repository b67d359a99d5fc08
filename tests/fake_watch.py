"""Provides `FakeSource`: deterministic snapshots for the watch screen's tests, bench and demo.

Poll N always returns the same numbers (sines of N, no randomness, fixed timestamps), so SVG
snapshots are stable. The default node runs a training job of alice's on the first GPUs
(2 cores and 500 MiB allocated, one core busy, peak memory close to the limit, one allocated
GPU idle) next to bob's job on the others, plus system processes up to `processes` rows.
Command names carry `[bold]`, `[/]` and a cleaned `ESC[31m`, which must show literally.
`delay` sleeps in `poll()` like a slow NVML call. The Pilot helpers at the end are shared by
the watch tests.
"""

from __future__ import annotations

import math
import os
import threading
import time
from typing import Any, Sequence


from gpuscope.metrics.safe_text import clean
from gpuscope.collectors.snapshot import add_unseen_gpu_processes
from gpuscope.metrics.samples import (
    AllocatedGpu, GpuProcess, GpuSample, GpuStatus, HostSample, JobScope, MemoryUse, MigSample, ProcessRow, Snapshot,
)
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.screens.watch.screen import WatchScreen
from gpuscope.tui.screens.watch.process_table import ProcessTable
from gpuscope.tui.screens.watch.status import StatusLine

GIB = 1024**3
MIB = 1024**2
T0 = 1_700_000_000.0
NO_GPU_REASON = "NVML library not found (libnvidia-ml.so.1): no NVIDIA driver on this node"
OWN_UID = os.getuid()
OTHER_UID = OWN_UID + 1
"""bob: never the tester's uid, so `k` on his processes must be refused."""
ROOT_UID = 0 if OWN_UID != 0 else OWN_UID + 2
"""'root' processes are never ours either, even when the tests run as root."""
MARKUP_COMMAND = "python train.py --name [bold]big[/] --tag [red]x"
ESCAPED_COMMAND = clean("\x1b[31mred-logger [/] --level debug")


def wave(n: int, period: float, phase: float = 0.0) -> float:
    """0..1, deterministic in the poll number."""
    return 0.5 + 0.5 * math.sin(2 * math.pi * (n / period) + phase)


class FakeSource:
    """A `poll() -> Snapshot` source like `collectors.snapshot.SnapshotSource`, fake data."""

    def __init__(
        self,
        *,
        gpus: int = 8,
        processes: int = 40,
        cores: int = 16,
        backend: str = "simulated",
        scope: str = "job",
        delay: float = 0.0,
        extra: Sequence[ProcessRow] = (),
        mig: bool = False,
        gpu_only: Sequence[GpuProcess] = (),
    ) -> None:
        self.n_gpus = 0 if backend == "none" else gpus
        self.n_processes = processes
        self.cores = cores
        self.backend = backend
        self.scope_kind = scope
        self.delay = delay
        self.extra = tuple(extra)
        """Rows added as they are (a real child process for the signal tests)."""
        self.mig = mig
        """GPU 0 is MIG-enabled: two instances, no utilisation (NVML: NOT_SUPPORTED on the parent)."""
        self.gpu_only = tuple(gpu_only)
        """GPU processes NVML reports whose pids are not among the rows (another PID namespace);
        in the node view they are added as rows by `collectors.snapshot.add_unseen_gpu_processes`,
        as `SnapshotSource` does."""
        self.polls = 0
        """How many times `poll` ran: the pause test counts these."""
        self.gate: threading.Event | None = None
        """When set to an Event, each poll waits for it (a poll held in flight for as long as a test needs)."""
        self.job_gpus = tuple(range(min(4, self.n_gpus)))

    def poll(self) -> Snapshot:
        if self.delay:
            time.sleep(self.delay)
        if self.gate is not None:
            self.gate.wait(60)
        n = self.polls
        self.polls += 1
        t = T0 + n
        rows = self._processes(n)
        gpus = tuple(self._gpu(i, n, t, rows) for i in range(self.n_gpus))
        if self.backend == "none":
            status = GpuStatus("none", NO_GPU_REASON)
        else:
            status = GpuStatus(self.backend, driver_version="550.54.15" if self.backend == "nvml" else None)
        if self.gpu_only and self.scope_kind == "node":
            rows = add_unseen_gpu_processes(rows, gpus, status)
        return Snapshot(self._host(n, t), rows, gpus, status, self._scope(rows))

    def _host(self, n: int, t: float) -> HostSample:
        busy = [round(3 + 20 * wave(n, 9, c), 1) for c in range(self.cores)]
        if self.cores > 4:
            busy[4] = round(95 + 4 * wave(n, 5), 1)  # the job's one busy core
        memory = MemoryUse(
            total=64 * GIB, available=40 * GIB - int(wave(n, 30) * GIB), used=24 * GIB + int(wave(n, 30) * GIB),
            cached=12 * GIB, buffers=GIB // 2, swap_total=8 * GIB, swap_used=GIB // 4,
        )
        load = (1.5 + wave(n, 20), 1.4, 1.2)
        return HostSample(t, "node-a01", tuple(busy), load, memory, self.cores)

    def _gpu(self, i: int, n: int, t: float, rows: tuple[ProcessRow, ...]) -> GpuSample:
        on_gpu = [p for p in rows if i in p.gpu_indices]
        idle = i == 3 or not on_gpu
        util = 0.0 if idle else round(70 + 25 * wave(n, 12, i), 1)
        used = sum(p.gpu_memory or 0 for p in on_gpu)
        procs = tuple(GpuProcess(p.pid, i, p.gpu_memory, p.gpu_sm_percent) for p in on_gpu)
        procs += tuple(gp for gp in self.gpu_only if gp.gpu_index == i)
        mig: tuple[MigSample, ...] = ()
        if self.mig and i == 0:
            mig = (MigSample(0, 0, "MIG-fake-0", "3g.40gb", 12 * GIB, 40 * GIB), MigSample(0, 1, "MIG-fake-1", "1g.10gb", GIB, 10 * GIB))
        return GpuSample(
            index=i, uuid=f"GPU-{i:08x}-fake", name="NVIDIA A100-SXM4-80GB", bus_id=f"0000:{i + 7:02x}:00.0",
            timestamp=t, util_gpu=None if mig else util, util_memory=util / 2, memory_used=used + 500 * MIB,
            memory_total=80 * GIB, temperature_c=35.0 + util / 3, power_w=60.0 + util * 3,
            power_limit_w=400.0, sm_clock_mhz=1410, memory_clock_mhz=1593, processes=procs,
            simulated=self.backend == "simulated", mig=mig,
        )

    def _processes(self, n: int) -> tuple[ProcessRow, ...]:
        rows: list[ProcessRow] = []
        gpus = self.n_gpus

        def add(pid: int, ppid: int, user: str, uid: int, cpu: float, rss: int, command: str, **gpu: object) -> None:
            rows.append(ProcessRow(pid, ppid, user, uid, "S" if cpu < 50 else "R", round(cpu, 1), rss, 1 + pid % 7,
                                   float(pid), command, cpu_id=pid % self.cores, cpu_time=3600.0 + pid * 7.0 + n, **gpu))  # type: ignore[arg-type]

        add(1, 0, "root", ROOT_UID, 0.0, 12 * MIB, "/sbin/init")
        add(900, 1, "root", ROOT_UID, 0.3, 30 * MIB, "slurmstepd: [4242.batch]")
        add(1000, 900, "alice", OWN_UID, 2.0 + wave(n, 7), 40 * MIB, MARKUP_COMMAND)
        job = self.job_gpus or (None,)
        for k, g in enumerate(job):
            gpu_fields = {} if g is None or g == 3 else {
                "gpu_memory": (20 + 4 * k) * GIB, "gpu_sm_percent": round(60 + 30 * wave(n, 12, g), 0), "gpu_indices": (g,)}
            cpu = 90.0 / len(job) + wave(n, 6, k)
            add(1001 + k, 1000, "alice", OWN_UID, cpu, (60 + 10 * k) * MIB, f"python -m torch.distributed.run rank={k}", **gpu_fields)
        add(1100, 1000, "alice", OWN_UID, 0.5, 8 * MIB, ESCAPED_COMMAND)
        add(2000, 1, "bob", OTHER_UID, 12.0 + 5 * wave(n, 8), 3 * GIB, "python serve.py --model llama")
        for k, g in enumerate(range(len(self.job_gpus), gpus)):
            add(2001 + k, 2000, "bob", OTHER_UID, 40.0 + 20 * wave(n, 10, k), 2 * GIB, f"python serve.py --worker {k}",
                gpu_memory=(30 + k) * GIB, gpu_sm_percent=round(50 + 40 * wave(n, 10, k), 0), gpu_indices=(g,))
        names = ("bash", "sshd: bob@pts/0", "kworker/u64:2-events", "munged", "sleep 1000", "vim notes.txt", "top")
        users = (("root", ROOT_UID), ("bob", OTHER_UID), ("carol", OTHER_UID + 1))
        k = 0
        while len(rows) + len(self.extra) < self.n_processes:
            user, uid = users[k % 3]
            parent = 1 if k % 4 == 0 else 3000 + (k // 4) * 4
            add(3000 + k, parent, user, uid, (k * 7 % 13) / 10, (k % 50 + 1) * MIB, names[k % len(names)])
            k += 1
        return tuple(rows) + self.extra

    def _scope(self, rows: tuple[ProcessRow, ...]) -> JobScope:
        if self.scope_kind == "node":
            return JobScope(kind="node", label="node-a01", evidence=("no job found: showing the whole node",))
        pids = frozenset(p.pid for p in rows if p.user == "alice" and 1000 <= p.pid < 1200)
        used = sum(p.rss for p in rows if p.pid in pids)
        return JobScope(
            kind="job", label="job 4242 (alice)", pids=pids, job_id="4242", user="alice",
            cpus_allocated=2, cpu_ids=(4, 5), memory_limit=500 * MIB, memory_used=used, memory_peak=480 * MIB,
            gpus=tuple(AllocatedGpu(i, f"GPU-{i:08x}-fake", "SLURM_JOB_GPUS") for i in self.job_gpus),
            cgroup="/sys/fs/cgroup/system.slice/slurmstepd.scope/job_4242",
            evidence=("cpus from cgroup cpuset.cpus.effective", "memory from cgroup memory.max", "gpus from SLURM_JOB_GPUS"),
        )


# --- Pilot helpers shared by the watch tests -------------------------------------------------


def watch_app(source: Any = None, **kwargs: Any) -> GpuscopeApp:
    kwargs.setdefault("interval", None)
    return GpuscopeApp(first_screen=lambda: WatchScreen(source or FakeSource(), **kwargs))


async def poll(pilot: Any, times: int = 1) -> WatchScreen:
    """Run `times` polls to completion, each applied on the main thread."""
    screen = pilot.app.screen
    assert isinstance(screen, WatchScreen)
    for _ in range(times):
        done = screen.poll_now()
        assert done is not None
        await done.wait()  # set once the snapshot is applied on the main thread
        await pilot.pause()
    return screen


def table(screen: WatchScreen) -> ProcessTable:
    return screen.query_one(ProcessTable)


def pids(screen: WatchScreen) -> list[int]:
    return [s.row.pid for s in table(screen).shown]


def status(screen: WatchScreen) -> str:
    return screen.query_one(StatusLine).text.plain


def notes(app: GpuscopeApp) -> list[str]:
    return [n.message for n in app._notifications]


async def select_pid(pilot: Any, screen: WatchScreen, pid: int) -> None:
    table(screen).move_cursor(row=pids(screen).index(pid))
    await pilot.pause()
    assert table(screen).selected is not None and table(screen).selected.pid == pid
