"""gpuscope's job scope against a real Slurm (tests/slurm_cluster.py): a batch job that keeps one
core busy and holds ~300 MB, asked for 2 CPUs and 500 MB. With proctrack/linuxproc there is no
job cgroup, so the processes must come from `scontrol listpids` and the allocation from
`scontrol show job -d`."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpuscope.collectors import scope
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture

MARKER = "gpuscope-burn"
# exec: the batch shell becomes python, so the job's main process is the program itself.
BURN = f"""exec python3 -c '
import time  # {MARKER}
held = b"x" * (300 << 20)  # written, so resident (a zero-filled bytearray would not be)
end = time.time() + 120    # ends by itself even if nobody cancels it
while time.time() < end:
    pass
'"""


def _marked(pids: frozenset[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            if MARKER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def _settled_rss(pid: int, timeout: float = 10) -> int:
    """RSS once the program has finished writing its 300 MB (it starts a moment after RUNNING)."""
    deadline = time.monotonic() + timeout
    while True:
        rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        if rss > 250 << 20 or time.monotonic() > deadline:
            return rss
        time.sleep(0.1)


@pytest.mark.slow
def test_job_scope_of_a_real_job(slurm_cluster: SlurmCluster) -> None:  # noqa: F811 - fixture
    job_id = slurm_cluster.submit(BURN, cpus=2, mem="500M")
    try:
        slurm_cluster.wait_running(job_id)
        deadline = time.monotonic() + 20
        while True:  # RUNNING comes a moment before slurmstepd has started the script
            started = time.monotonic()
            s = scope.resolve_scope(job=job_id, env={})
            took = time.monotonic() - started
            burners = _marked(s.pids)
            if burners or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert burners, f"no process of job {job_id} found: {s}"
        assert s.kind == "job" and s.job_id == job_id and s.problems == (), s.problems
        assert s.cpus_allocated == 2
        assert s.memory_limit == 500 << 20
        assert s.cgroup is None and any("scontrol listpids" in e for e in s.evidence)
        assert took < 5, f"resolve_scope took {took:.1f} s"
        # Each tick re-reads /proc only: the program stays in scope and really holds its memory.
        again = scope.refresh(s)
        assert set(burners) <= again.pids
        assert _settled_rss(burners[0]) > 250 << 20
    finally:
        slurm_cluster.cancel(job_id)
    assert not slurm_cluster.state(job_id)
