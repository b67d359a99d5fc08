"""SnapshotSource on this machine's real /proc: `everyone` (the watch's `a`) lists every process
of the node while the scope's own figures still count only the scope's, and a demo's
simulated GPU processes are rows of their own, labelled, with their GPU memory."""

from __future__ import annotations

import os
import subprocess

from gpuscope.collectors.simulated import SIMULATED_USER
from gpuscope.collectors.snapshot import SnapshotSource
from gpuscope.metrics.snapshot_tables import scope_processes

MIB = 1024 * 1024


def test_everyone_lists_the_node_and_the_scope_keeps_its_own_figures() -> None:
    child = subprocess.Popen(["sleep", "60"])
    source = SnapshotSource(pid=child.pid, demo="one-gpu-idle")
    try:
        scoped = source.poll()
        assert {p.pid for p in scoped.processes} == {child.pid}
        source.everyone = True
        everyone = source.poll()
        listed = {p.pid for p in everyone.processes}
        assert {child.pid, os.getpid(), 1} <= listed
        assert everyone.scope.pids == scoped.scope.pids and [p.pid for p in scope_processes(everyone)] == [child.pid]
        child_rss = next(p.rss for p in everyone.processes if p.pid == child.pid)
        assert everyone.scope.memory_used == scoped.scope.memory_used  # the child's, never the node's
        assert everyone.scope.memory_peak is not None and everyone.scope.memory_peak < child_rss + sum(
            p.rss for p in everyone.processes if p.pid == os.getpid())
        source.everyone = False
        assert {p.pid for p in source.poll().processes} == {child.pid}
    finally:
        source.close()
        child.kill()
        child.wait()


def test_demo_gpu_processes_are_labelled_rows_with_their_gpu_memory() -> None:
    source = SnapshotSource(demo="a100x8-training")
    try:
        snap = source.poll()
    finally:
        source.close()
    simulated = {p.pid: p for p in snap.processes if p.user == SIMULATED_USER}
    assert set(simulated) == {gp.pid for g in snap.gpus for gp in g.processes}
    assert simulated[48211].gpu_memory == 71230 * MIB and simulated[48211].command.startswith("[simulated] ")
    real = [p for p in snap.processes if p.user != SIMULATED_USER]
    assert any(p.pid == os.getpid() for p in real) and all(p.gpu_memory is None for p in real)
