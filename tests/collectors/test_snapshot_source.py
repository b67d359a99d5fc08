"""SnapshotSource on this machine's real /proc with a simulated GPU backend."""

from __future__ import annotations

import os
import subprocess
import sys

from os_cpu import mark, percent_bounds_around
from gpuscope.collectors.snapshot import SnapshotSource, attach_gpu_use, snapshot_once
from gpuscope.metrics.samples import GpuProcess, GpuSample, ProcessRow


def test_pid_scope_sees_a_busy_child_and_judges_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        source = SnapshotSource(pid=child.pid, demo="one-gpu-idle")
        before = mark(child.pid)
        snap = snapshot_once(source, settle_s=0.6)
        low, high = percent_bounds_around(before, mark(child.pid), 0.6)  # what the kernel recorded meanwhile
        rows = {p.pid: p for p in snap.processes}
        assert child.pid in rows and rows[child.pid].cpu_percent is not None
        assert low <= rows[child.pid].cpu_percent <= high, (low, rows[child.pid], high)
        assert snap.scope.kind == "pid" and child.pid in snap.scope.pids
        assert snap.gpu_status.backend == "simulated" and all(g.simulated for g in snap.gpus)
        assert snap.scope.memory_peak and snap.scope.memory_peak >= rows[child.pid].rss
        assert any("using" in v.text for v in snap.verdicts)
        source.close()
    finally:
        child.kill()
        child.wait()


def test_node_scope_without_gpu_keeps_the_host_view() -> None:
    source = SnapshotSource()  # this machine has no NVIDIA driver
    snap = source.poll()
    assert snap.scope.kind == "node" and snap.host.cpu_count >= 1
    assert any(p.pid == os.getpid() for p in snap.processes)
    if snap.gpu_status.backend == "none":
        assert snap.gpu_status.reason and "\n" not in snap.gpu_status.reason
    source.close()


def test_gpu_memory_and_sm_are_attached_per_process() -> None:
    row = ProcessRow(7, 1, "me", 0, "R", 10.0, 1, 1, 1.0, "train")
    gpus = (
        GpuSample(0, "GPU-a", "A100", "0", 0.0, processes=(GpuProcess(7, 0, 100, 40.0),)),
        GpuSample(1, "GPU-b", "A100", "1", 0.0, processes=(GpuProcess(7, 1, None, None),)),
    )
    (out,) = attach_gpu_use((row,), gpus)
    assert out.gpu_memory == 100 and out.gpu_sm_percent == 40.0 and out.gpu_indices == (0, 1)
