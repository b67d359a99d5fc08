"""The watch's `a` on a real Slurm job (tests/slurm_cluster.py): the source lists the job's
processes, then with `everyone` every process of the node, while the job's memory and
verdicts stay the job's."""

from __future__ import annotations

import os
import time

import pytest

from gpuscope.collectors.snapshot import SnapshotSource
from gpuscope.metrics.snapshot_tables import scope_processes
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture

SLEEPER = "exec sleep 120  # gpuscope-everyone"


@pytest.mark.slow
def test_a_lists_every_process_of_the_node_on_a_real_job(slurm_cluster: SlurmCluster) -> None:  # noqa: F811 - fixture
    job_id = slurm_cluster.submit(SLEEPER, cpus=1, mem="100M")
    source = SnapshotSource(job=job_id, env={}, demo="one-gpu-idle")
    try:
        slurm_cluster.wait_running(job_id)
        deadline = time.monotonic() + 20
        while not (snap := source.poll()).scope.pids and time.monotonic() < deadline:  # the step starts a moment after RUNNING
            time.sleep(0.2)
        job = {p.pid for p in snap.processes}
        assert job and job <= snap.scope.pids and os.getpid() not in job
        source.everyone = True
        every = source.poll()
        listed = {p.pid for p in every.processes}
        assert job <= listed and os.getpid() in listed and 1 in listed
        assert {p.pid for p in scope_processes(every)} <= every.scope.pids
        assert every.scope.memory_used is not None and every.scope.memory_used < sum(p.rss for p in every.processes)
    finally:
        source.close()
        slurm_cluster.cancel(job_id)
