"""gpuscope's job scope against a real Slurm (tests/slurm_cluster.py): a batch job that keeps one
core busy and holds ~300 MB, asked for 2 CPUs and 500 MB. With proctrack/linuxproc there is no
job cgroup, so the processes must come from `scontrol listpids` and the allocation from
`scontrol show job -d`."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from gpuscope.collectors import scope
from os_cpu import mark, percent_bounds_around
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
            s = scope.resolve_scope(job=job_id, env={})
            burners = _marked(s.pids)
            if burners or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert burners, f"no process of job {job_id} found: {s}"
        assert s.kind == "job" and s.job_id == job_id and s.problems == (), s.problems
        assert s.cpus_allocated == 2
        assert s.memory_limit == 500 << 20
        assert s.cgroup is None and any("scontrol listpids" in e for e in s.evidence)
        # Each tick re-reads /proc only: the program stays in scope and really holds its memory.
        again = scope.refresh(s)
        assert set(burners) <= again.pids
        assert _settled_rss(burners[0]) > 250 << 20
    finally:
        slurm_cluster.cancel(job_id)
    assert not slurm_cluster.state(job_id)


@pytest.mark.slow
def test_gpuscope_watch_once_on_a_real_job(slurm_cluster: SlurmCluster) -> None:  # noqa: F811 - fixture
    """The issue's end-to-end check: `gpuscope watch --job ID --once --format json`."""
    import json
    import subprocess
    import sys

    job_id = slurm_cluster.submit(BURN, cpus=2, mem="500M")
    try:
        slurm_cluster.wait_running(job_id)
        deadline = time.monotonic() + 20
        while not _marked(scope.resolve_scope(job=job_id, env={}).pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        burner = _marked(scope.resolve_scope(job=job_id, env={}).pids)[0]
        _settled_rss(burner)
        exe = Path(sys.executable).with_name("gpuscope")
        before = mark(burner)
        out = subprocess.run([str(exe), "watch", "--job", job_id, "--once", "--format", "json"],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        low, high = percent_bounds_around(before, mark(burner), 1.0)  # --once: two polls 1 s apart
        assert out.returncode == 0, out.stderr
        snap = json.loads(out.stdout)
        job = snap["scope"]
        assert job["kind"] == "job" and job["job_id"] == job_id
        assert burner in job["pids"] and any(p["pid"] == burner for p in snap["processes"])
        assert job["cpus_allocated"] == 2 and job["memory_limit"] == 500 << 20
        used = job["memory_used"]
        assert 250 << 20 < used < 450 << 20, used  # about 300 MB in use
        row = next(p for p in snap["processes"] if p["pid"] == burner)
        # The one busy core, as much of it as the kernel gave the burner meanwhile (never a
        # share asserted: a loaded machine gives it less).
        assert low <= row["cpu_percent"] <= high, (low, row["cpu_percent"], high)
        texts = [v["text"] for v in snap["verdicts"]]
        busy = sum(p["cpu_percent"] or 0 for p in snap["processes"] if p["pid"] in job["pids"]) / 100
        cores = re.compile(r"using ([\d.]+) of 2 cores|asked for 2 cores, using ([\d.]+)")
        said = [float(m.group(1) or m.group(2)) for t in texts if (m := cores.fullmatch(t))]
        assert said and abs(said[0] - busy) <= 0.05, (texts, busy)  # the verdict sums the job's processes
        assert any("of 500.0 MiB requested" in t for t in texts), texts
    finally:
        slurm_cluster.cancel(job_id)
