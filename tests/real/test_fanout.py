"""Every node of a job: simulated multi-node streams (a child printing three nodes' JSON lines,
one node falling silent, garbage between), and a real one-node fan-out through srun on the real
Slurm of tests/slurm_cluster.py, recorded and reported against the job's known use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpuscope.collectors.fanout import NodesSource, NodeStreams, srun_command
from gpuscope.parsers.recording import read as recording
from gpuscope.tui.model.nodes import NodesView, switcher_text
from os_cpu import mark, percent_bounds_around
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture

TESTS = Path(__file__).parent.parent

FAKE_NODES = textwrap.dedent(f"""
    import json, sys, time
    sys.path.insert(0, {str(TESTS)!r})
    from fake_watch import FakeSource
    from gpuscope.metrics.snapshot_tables import snapshot_dict
    sources = {{name: FakeSource(gpus=2, processes=5) for name in ("cn01", "cn02", "cn03")}}
    for step in range(12):
        for name, source in sources.items():
            if name == "cn03" and step >= 3:
                continue  # this node's collector died after three samples
            data = snapshot_dict(source.poll())
            data["host"]["hostname"] = name
            print(json.dumps(data), flush=True)
        if step == 5:
            print("srun: error: cn03: task 2: Killed", flush=True)  # noise between the lines
            print("{{not json", flush=True)
        time.sleep(0.05)
    sys.stderr.write("srun: error: cn03: task 2: Exited with exit code 9\\n")
    sys.exit(1)
""")


def test_simulated_nodes_stream_and_one_falls_silent() -> None:
    streams = NodeStreams([sys.executable, "-c", FAKE_NODES], interval=0.05).start()
    deadline = time.monotonic() + 30
    while not streams.ended and time.monotonic() < deadline:
        time.sleep(0.05)
    got = streams.drain()
    streams.close()
    by_node = {}
    for s in got:
        by_node[s.host.hostname] = by_node.get(s.host.hostname, 0) + 1
    assert by_node == {"cn01": 12, "cn02": 12, "cn03": 3}
    assert streams.bad_lines == 2
    assert streams.error and "exit" in streams.error and "cn03" in streams.error
    # cn03 by srun's own words about its task; the others when the whole step ended
    assert {s.node: s.status for s in streams.states()} == {"cn01": "ended: python ended", "cn02": "ended: python ended",
                                                           "cn03": "ended: Exited with exit code 9"}
    assert set(streams.latest()) == {"cn01", "cn02", "cn03"}


def test_silent_node_is_said_while_the_others_run() -> None:
    now = [0.0]
    streams = NodeStreams([sys.executable, "-c", FAKE_NODES], interval=1.0, clock=lambda: now[0]).start()
    deadline = time.monotonic() + 30
    states = {}
    while not streams.ended and time.monotonic() < deadline:
        time.sleep(0.01)
        now[0] += 0.5  # half an interval per look: cn01 and cn02 keep answering, cn03 stopped after three
        states = {s.node: s for s in streams.states()}
        if "cn01" in states and states["cn01"].samples >= 10:
            break
    streams.close()
    assert states["cn03"].samples == 3 and states["cn03"].status.startswith("silent for ")
    assert states["cn01"].last_seen > states["cn03"].last_seen + 3


def test_a_missing_command_is_an_error_not_a_crash() -> None:
    streams = NodeStreams(["/nonexistent/srun"], interval=1.0).start()
    assert streams.ended and "cannot start" in streams.error
    assert streams.drain() == [] and streams.states() == []
    streams.close()


def test_srun_command_is_an_argument_list() -> None:
    argv = srun_command("123", 2.0, python="/venv/bin/python")
    assert argv[:6] == ["srun", "--jobid", "123", "--overlap", "--ntasks-per-node=1", "--kill-on-bad-exit=0"]
    assert argv[-9:] == ["/venv/bin/python", "-m", "gpuscope.tui.cli.main", "collect", "--stream", "--job", "123", "--interval", "2"]


def _burner() -> int:
    """The pid of the job's busy loop, found by the marker in its command line."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"gpuscope-fanout-burn" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    raise AssertionError("the job's busy loop is not running")


BURN = """exec python3 -c '
import time  # gpuscope-fanout-burn
held = b"x" * (200 << 20)
end = time.time() + 90
while time.time() < end:
    pass
'"""


@pytest.mark.slow
def test_record_a_real_job_on_every_node_through_srun(slurm_cluster: SlurmCluster, tmp_path: Path,  # noqa: F811 - fixture
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`gpuscope record --job ID --all-nodes`: one collector per node through `srun --overlap`
    (one node here), its samples in the recording with the job's scope, and `report` saying
    the job asked for 2 cores and used about 1."""
    job_id = slurm_cluster.submit(BURN, cpus=2, mem="500M")
    out = tmp_path / "job.gsrec"
    try:
        slurm_cluster.wait_running(job_id)
        time.sleep(1.0)  # the burner starts a moment after RUNNING
        env = {**os.environ, **slurm_cluster.env}
        burner = _burner()
        before = mark(burner)
        done = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "record", "--job", job_id, "--all-nodes", "--duration", "6",
                               "--interval", "1", "-o", str(out)], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
        after = mark(burner)
        assert done.returncode == 0, done.stderr
        rec = recording.read(out)
        assert rec.samples >= 3, done.stderr
        span = float(rec.times[-1] - rec.times[0])
        last = rec.snapshot(rec.samples - 1)
        assert last.scope.kind == "job" and last.scope.job_id == job_id and last.scope.cpus_allocated == 2
        report = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "report", "--recording", str(out), "--format", "json"],
                                capture_output=True, text=True, timeout=60, env=env)
        assert report.returncode == 0, report.stderr
        data = json.loads(report.stdout)
        node = data["job_efficiency_per_node"][0]
        # One busy process on two cores: what the recording says must agree with the CPU time the
        # kernel itself recorded for it over the same interval, whatever share the machine gave it.
        low, high = percent_bounds_around(before, after, span, cores=1.0)
        assert node["cpus"] == 2 and low / 200 - 0.05 <= node["cpu_efficiency"] <= min(high / 200, 0.5) + 0.05, (node, low, high)
        assert node["memory_requested_gib"] == pytest.approx(500 / 1024)
        # The same job from Slurm's side while it runs (no slurmdbd here: sacct says accounting
        # is disabled, so sstat + scontrol), together with the recording's GPUs and samples.
        both = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "report", "--job", job_id, "--recording", str(out), "--format", "json"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert both.returncode == 0, both.stderr
        assert "accounting storage is disabled" in both.stderr and "is running" in both.stderr
        data = json.loads(both.stdout)
        job = data["slurm_accounting"][0]
        assert job["source"] == "sstat + scontrol (running)" and job["state"] == "RUNNING" and job["cpus"] == 2, job
        assert 0 < job["cpu_efficiency"] <= 0.55, job  # one busy process of two cores, CPU time over the whole run so far
        assert 200 / 1024 <= job["memory_peak_gib"] < 400 / 1024 and "TRESUsageInTot" in job["memory_peak_is"], job  # the 200 MiB it holds
        assert job["memory_requested_gib"] == pytest.approx(500 / 1024) and job["time_limit_use"] is None  # no limit: n/a
        assert data["job_efficiency_per_node"][0]["cpus"] == 2

        # What `watch --job ID --all-nodes` polls for the same job (NodesSource, in-process):
        # the node in the switcher, the job's allocation in the all-nodes view.
        for key, value in slurm_cluster.env.items():
            monkeypatch.setenv(key, value)
        source, view = NodesSource.for_job(job_id, 1.0), NodesView()
        try:
            deadline = time.monotonic() + 60
            while view.total is None and time.monotonic() < deadline and not source.streams.ended:
                view.take(source.poll())
                time.sleep(0.2)
        finally:
            source.close()
        assert view.total is not None, source.streams.stderr
        assert len(view.nodes) == 1 and view.total.scope.cpus_allocated == 2 and view.total.scope.job_id == job_id
        assert view.nodes[0] in switcher_text(view, 120).plain
    finally:
        slurm_cluster.cancel(job_id)
