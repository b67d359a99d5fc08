"""The exporter's per-job series when it watches the whole node: jobs found by their cgroups
(collectors/prometheus/jobs.py) on fake /proc and /sys/fs/cgroup trees."""

from __future__ import annotations

import shutil
from pathlib import Path

from fake_scope import Fake, proc, v2_job, write
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gpuscope.collectors.prometheus.exposition import SnapshotCollector, Tracker, registry_for
from gpuscope.collectors.prometheus.jobs import NodeJobs, job_ids
from gpuscope.metrics.samples import GpuStatus, HostSample, JobScope, MemoryUse, ProcessRow, Snapshot

SCOPE = "sys/fs/cgroup/system.slice/slurmstepd.scope"


def node(tmp_path: Path) -> None:
    v2_job(tmp_path, "system.slice/slurmstepd.scope/job_43")  # processes 199, 200, 201
    v2_job(tmp_path, "system.slice/slurmstepd.scope/sEKNKTV3WPV500", leaves={"step_0/user/task_0": "500\n"}, limit="max")
    write(tmp_path, f"{SCOPE}/system/cgroup.procs", "10\n")  # slurmstepd itself: not a job
    proc(tmp_path, 500, env={"SLURM_JOB_ID": "77"})
    for pid in (199, 200, 201):
        proc(tmp_path, pid, "0::/system.slice/slurmstepd.scope/job_43/step_0/user/task_0\n")
    write(tmp_path, "sys/fs/cgroup/memory/slurm/uid_1000/job_9/memory.limit_in_bytes", "1024\n")  # a v1 job


def test_jobs_found_by_their_cgroups(tmp_path: Path) -> None:
    node(tmp_path)
    assert job_ids(tmp_path) == ["9", "43", "77"]
    assert job_ids(tmp_path / "nothing") == []


def snapshot(rows: tuple[ProcessRow, ...]) -> Snapshot:
    memory = MemoryUse(total=1 << 34, available=1 << 33, used=1 << 33, cached=0, buffers=0, swap_total=0, swap_used=0)
    host = HostSample(timestamp=1.0, hostname="cn001", cpu_percent=(0.0,) * 4, load_avg=(0.0, 0.0, 0.0), memory=memory, cpu_count=4)
    return Snapshot(host, rows, (), GpuStatus("none", "no NVML"), JobScope(kind="node", label="node cn001"))


def row(pid: int, cpu: float) -> ProcessRow:
    return ProcessRow(pid, 1, "alice", 1000, "R", cpu, 1 << 20, 1, 0.0, "python")


def test_every_job_on_the_node_gets_its_series_resolved_once(tmp_path: Path) -> None:
    node(tmp_path)
    runner = Fake(show_rc=1, show_err="slurm_load_jobs error: Unable to contact slurm controller")
    jobs = NodeJobs(tmp_path, runner=runner)
    tracker, collector = Tracker(), SnapshotCollector()
    rows = (row(200, 100.0), row(201, 50.0), row(500, 25.0), row(1, 300.0))
    for _ in range(2):
        collector.reading = tracker.update(snapshot(rows), jobs.update())
    asked = [c for c in runner.calls if c[:3] == ["scontrol", "show", "job"]]
    assert len(asked) == 3  # once per job, not once per sample
    text = generate_latest(registry_for(collector)).decode()
    series = {(s.name, s.labels["jobid"]): s.value for f in text_string_to_metric_families(text) for s in f.samples if "jobid" in s.labels}
    assert series[("gpuscope_job_cpus_busy", "43")] == 1.5  # pid 1 is no job's
    assert series[("gpuscope_job_cpus_busy", "77")] == 0.25
    assert series[("gpuscope_job_memory_peak_bytes", "43")] == 419430400
    assert series[("gpuscope_job_memory_requested_bytes", "43")] == 1073741824
    assert ("gpuscope_job_memory_requested_bytes", "77") not in series  # memory.max "max": no limit, not 0
    assert series[("gpuscope_job_cpus_allocated", "43")] == 2  # cpuset 2-3
    shutil.rmtree(tmp_path / SCOPE / "job_43")
    collector.reading = tracker.update(snapshot(rows), jobs.update())
    text = generate_latest(registry_for(collector)).decode()
    assert 'jobid="43"' not in text and 'jobid="77"' in text  # an ended job's series go
