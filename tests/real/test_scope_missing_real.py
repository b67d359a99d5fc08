"""Against a real Slurm (tests/slurm_cluster.py): a job id slurmctld does not know is exit 2,
before anything is printed; a real job's scope still opens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuscope.collectors import scope
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture


@pytest.mark.slow
def test_unknown_job_on_a_real_slurm_is_exit_2(slurm_cluster: SlurmCluster) -> None:  # noqa: F811 - fixture
    assert "does not exist" in (scope.missing(job="999999") or "")
    exe = Path(sys.executable).with_name("gpuscope")
    out = subprocess.run([str(exe), "watch", "--once", "--job", "999999", "--format", "json"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stdout == ""
    assert "Slurm job 999999 does not exist" in out.stderr
    job_id = slurm_cluster.submit("sleep 60")
    try:
        slurm_cluster.wait_running(job_id)
        assert scope.missing(job=job_id) is None
    finally:
        slurm_cluster.cancel(job_id)
