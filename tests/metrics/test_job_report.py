"""The job report from samples: efficiencies, n/a where unknown, advice only on evidence."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from fake_watch import FakeSource
from gpuscope.metrics.job.report import MEMORY_HEADROOM, SlurmUse, Usage, mem_request, report
from gpuscope.metrics.job.verdicts import MEMORY_HIGH
from gpuscope.metrics.samples import JobScope
from gpuscope.parsers.recording.usage import usage_from_snapshots

GIB = 1024**3
MIB = 1024**2
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "recording"
REAL = EXAMPLES / "slurm-job.gsrec"
"""`gpuscope record` of a real Slurm job (tests/make_job_recording.py): no job cgroup, no GPU."""
DEMO = EXAMPLES / "demo.gsrec"
"""Simulated GPUs and a simulated job cgroup."""


def test_fake_job_report_numbers_and_advice() -> None:
    source = FakeSource(gpus=8, processes=40)
    snaps = [source.poll() for _ in range(30)]
    usage = usage_from_snapshots(snaps)
    rep = report([usage], time_limit_s=8 * 3600)
    node = rep.tables[0].records()[0]
    busy = [sum(p.cpu_percent or 0 for p in s.processes if p.pid in s.scope.pids) / 100 for s in snaps]
    assert node["busy_cores_mean"] == pytest.approx(np.mean(busy))
    assert node["cpu_efficiency"] == pytest.approx(np.mean(busy) / 2)
    assert node["memory_peak_is"] == "cgroup peak" and node["memory_peak_gib"] == pytest.approx(snaps[-1].scope.memory_peak / GIB)
    gpus = {r["gpu"]: r for r in rep.tables[1].records()}
    assert set(gpus) == {0, 1, 2, 3}  # the allocated ones (the job uses no other)
    assert gpus[3]["idle_share"] == 1.0 and gpus[0]["idle_share"] == 0.0
    text = "\n".join(rep.advice)
    assert "asked for 2 cores, used 1.0 on average: request `-c 1`" in text
    assert "GPU 3 allocated, idle for 100% of the job" in text
    assert "close to the limit" in text  # 96 % of the request
    assert "time limit" in text


def test_unknown_values_are_none_not_zero() -> None:
    source = FakeSource(gpus=0, backend="none", processes=5)
    snaps = [dataclasses.replace(s, scope=JobScope(kind="job", label="job 1", pids=s.scope.pids)) for s in (source.poll() for _ in range(3))]
    rep = report([usage_from_snapshots(snaps)])
    node = rep.tables[0].records()[0]
    assert node["cpus"] is None and node["cpu_efficiency"] is None
    assert node["memory_requested_gib"] is None and node["memory_efficiency"] is None and node["time_limit_use"] is None
    assert node["memory_peak_is"].startswith("highest sampled")
    assert len(rep.tables) == 1 and rep.advice == []
    assert "n/a" in rep.tables[0].cell_text(0, 3)


def test_no_samples_is_a_row_of_na() -> None:
    rep = report([usage_from_snapshots([])])
    assert rep.tables[0].records()[0]["samples"] == 0 and rep.advice == []


def test_memory_request_advice_rounds_up_with_headroom() -> None:
    t = np.arange(10.0)
    usage = Usage("n1", t, np.full(10, 15.5), 16, np.full(10, math.nan), 18 * GIB, 100 * GIB, "cgroup memory")
    rep = report([usage], time_limit_s=12, elapsed_s=10)
    assert rep.advice == ["n1: peak memory 18.0 GiB (cgroup peak) of 100.0 GiB requested: `--mem=24G` (peak + 25%, rounded up)"]


def test_idle_gpu_needs_readings() -> None:
    from gpuscope.metrics.job.report import GpuUsage

    t = np.arange(4.0)
    gpu = GpuUsage(1, True, np.full(4, math.nan), np.full(4, math.nan), None)
    usage = Usage("n1", t, np.full(4, 1.0), 1, np.full(4, GIB), None, None, "summed RSS", (gpu,))
    rep = report([usage])
    assert rep.advice == ["n1: GPU 1 allocated, no utilisation reading: whether it was used is unknown"]
    assert rep.tables[1].records()[0]["idle_share"] is None


def test_a_multi_node_recording_is_reported_per_node_and_scopes_select_processes() -> None:
    """Batches as `record --job` over srun writes them (nodes interleaved in one batch): one
    row per node. A user scope counts that user's processes; a node view counts every one."""
    from gpuscope.parsers.recording import schema as recording_schema
    from gpuscope.parsers.recording.usage import usage_per_node

    source = FakeSource(gpus=2, processes=6)
    snaps = [source.poll() for _ in range(4)]
    user = snaps[0].processes[0].user
    a = [dataclasses.replace(s, host=dataclasses.replace(s.host, hostname="cn01")) for s in snaps]
    b = [dataclasses.replace(s, host=dataclasses.replace(s.host, hostname="cn02"), scope=JobScope(kind="user", label=f"user {user}", user=user)) for s in snaps]
    c = [dataclasses.replace(s, host=dataclasses.replace(s.host, hostname="cn03"), scope=JobScope(kind="node", label="node")) for s in snaps]
    batch = recording_schema.to_batch([x for trio in zip(a, b, c) for x in trio])
    usages = usage_per_node([batch])
    assert [u.node for u in usages] == ["cn01", "cn02", "cn03"] and all(u.times.size == 4 for u in usages)
    job = [sum(p.cpu_percent or 0 for p in s.processes if p.pid in s.scope.pids) / 100 for s in snaps]
    assert usages[0].busy_cores == pytest.approx(job) and usages[0].memory_peak == max(s.scope.memory_peak for s in snaps)
    mine = [sum(p.cpu_percent or 0 for p in s.processes if p.user == user) / 100 for s in snaps]
    every = [sum(p.cpu_percent or 0 for p in s.processes) / 100 for s in snaps]
    assert usages[1].busy_cores == pytest.approx(mine) and usages[1].memory_what == "summed RSS"
    assert usages[2].busy_cores == pytest.approx(every) and usages[2].memory_what == "node memory in use"
    assert usages[2].memory_used == pytest.approx([s.host.memory.used for s in snaps])
    assert [g.index for g in usages[2].gpus] == [0, 1]  # a node view: every GPU it saw
    assert len(report(usages).tables[0].rows) == 3


def test_node_view_idle_gpu_a_limit_shorter_than_the_run_and_simulated_in_the_table() -> None:
    from gpuscope.metrics.job.report import GpuUsage

    t = np.arange(10.0)
    idle = GpuUsage(7, False, np.zeros(10), np.zeros(10), 80 * GIB, simulated=True)
    usage = Usage("vm", t, np.full(10, 0.5), None, np.full(10, GIB), None, None, "node memory in use", (idle,), scope_kind="node")
    rep = report([usage], time_limit_s=5)
    assert "vm: ran 9 s, longer than the 5 s time limit given: is the limit right?" in rep.advice
    assert any("GPU 7 idle for 100% of the recording" in line and "node view" in line for line in rep.advice)
    assert rep.tables[1].records()[0]["simulated"] == "yes"


def test_report_refuses_a_time_limit_that_is_not_positive(tmp_path, capsys) -> None:
    from gpuscope.tui.cli.main import main

    assert main(["report", "--recording", str(tmp_path / "x.gsrec"), "--time-limit", "-5"]) == 2
    assert "--time-limit must be a positive number" in capsys.readouterr().err


def _job(rep) -> dict[str, str]:  # noqa: ANN001 - a Report
    """The report's first table, what it is about, as {what: value}."""
    return dict(rep.job.rows)


def _usages(path: Path) -> list[Usage]:
    from gpuscope.parsers.recording import read as recording
    from gpuscope.parsers.recording.usage import usage_per_node

    stream = recording.Stream(path)
    usages = usage_per_node(stream.batches())
    assert stream.complete and not stream.findings
    return usages


def test_mem_request_is_the_peak_with_headroom_rounded_up() -> None:
    assert mem_request(100 * MIB) == "128M"  # 125 MiB -> the next 64 MiB
    assert mem_request(480 * MIB) == "640M"  # 600 MiB
    assert mem_request(3 * GIB) == "3840M"  # 3.75 GiB: still in 64 MiB steps
    assert mem_request(3.5 * GIB) == "8G"  # 4.375 GiB -> the next 4 GiB
    assert mem_request(30 * GIB) == "40G"  # 37.5 GiB


def test_the_real_slurm_recording_names_its_memory_source_and_gives_a_concrete_mem() -> None:
    """A real job with no job cgroup (proctrack/linuxproc): memory is the summed RSS of its
    processes, said so (not 'cgroup peak'); its peak is near the request, so the advice is a
    `--mem=` computed from that peak."""
    (usage,) = _usages(REAL)
    assert usage.memory_what == "summed RSS" and usage.memory_peak is None  # the collector's running RSS max is no kernel peak
    rep = report([usage])
    job = _job(rep)
    assert list(job)[:5] == ["job", "user", "nodes", "wall time", "time limit"]
    assert (job["job"], job["user"], job["nodes"]) == ("1", "root", f"1: {usage.node}")
    span = float(np.clip(np.diff(usage.times), 0, None).sum())
    seconds = int(round(span))
    assert job["wall time"].startswith(f"0:00:{seconds:02d} (recorded")
    assert job["memory from"] == "no job cgroup: the sum of the job's processes' RSS"
    assert job["time limit"] == "0:05:00 (from the recording: scontrol's TimeLimit for the job)"  # sbatch -t 5
    node = rep.tables[0].records()[0]
    peak = np.nanmax(usage.memory_used)
    assert node["memory_peak_is"] == "highest sampled summed RSS" and node["memory_peak_gib"] == pytest.approx(peak / GIB)
    assert usage.memory_limit == 240 * MIB and peak / usage.memory_limit > MEMORY_HIGH
    want = math.ceil(peak * MEMORY_HEADROOM / MIB / 64) * 64
    mem = [line for line in rep.advice if "--mem=" in line]
    assert len(mem) == 1 and f"`--mem={want}M` (peak + 25%, rounded up)" in mem[0] and "highest sampled summed RSS" in mem[0]


def test_the_real_slurm_recording_holds_a_memory_peak_and_a_process_ending() -> None:
    """The job allocated 200 MiB and freed it, and its child process ended while the job ran on:
    both are in the recording, as the report's memory and the replay's events see them."""
    from gpuscope.tui.model.replay import open_replay

    (usage,) = _usages(REAL)
    mem = usage.memory_used
    top = int(np.nanargmax(mem))
    assert 0 < top < mem.size - 1
    assert mem[top] - mem[0] > 150 * MIB and mem[top] - np.nanmin(mem[top:]) > 150 * MIB  # up, then freed
    replay = open_replay(REAL)
    try:
        ended = [e for e in replay.events if e.kind == "process-end"]
        started = [e for e in replay.events if e.kind == "process-start"]
        assert started and ended and ended[0].index < replay.samples - 1
        child = started[0].text.split()[1]
        assert ended[0].text == f"process {child} ended"  # the child, while the job's program went on
        assert replay.snapshot(ended[0].index).scope.pids  # the job still had a process then
        assert not any(name.startswith("gpu") and name[3:4].isdigit() for name in replay.series)  # no GPU: the machine had none
    finally:
        replay.close()


def test_the_demo_recording_says_cgroup_memory_and_advises_mem_near_the_limit() -> None:
    (usage,) = _usages(DEMO)
    rep = report([usage])
    job = _job(rep)
    assert (job["job"], job["user"], job["nodes"]) == ("4242", "alice", "1: node-a01")
    assert job["memory from"].startswith("the job's cgroup")
    assert rep.tables[0].records()[0]["memory_peak_is"] == "cgroup peak"
    assert any(f"`--mem={mem_request(usage.memory_peak)}`" in line and "close to the limit" in line for line in rep.advice)
    assert mem_request(usage.memory_peak) == "640M"  # 480 MiB + 25 % = 600 MiB


def _usage(peak_share: float | None, limit: int | None = 10 * GIB, **kw) -> Usage:  # noqa: ANN003
    t = np.arange(10.0)
    used = np.full(10, (peak_share or 0.5) * (limit or 10 * GIB))
    return Usage("n1", t, np.full(10, 1.0), 1, used, None, limit, "summed RSS", job_id="77", user="bob", **kw)


def test_mem_advice_only_near_the_limit_and_none_when_the_limit_is_unknown() -> None:
    near, fine = report([_usage(0.95)]), report([_usage(0.6)])
    assert [line for line in near.advice if "--mem=" in line] == [
        "n1: peak memory 9.5 GiB (highest sampled summed RSS) is 95% of the 10.0 GiB requested, close to the limit (OOM kill): "
        "`--mem=12G` (peak + 25%, rounded up)"]
    assert not any("--mem=" in line for line in fine.advice)
    unknown = report([_usage(None, limit=None)])
    assert not any("--mem" in line for line in unknown.advice)
    assert _job(unknown)["memory request"] == "n/a (not known: no --mem advice)"
    assert unknown.tables[0].records()[0]["memory_efficiency"] is None
    assert "memory request" not in _job(near)


def test_time_limit_from_the_scope_unless_given_and_na_when_unknown() -> None:
    from_scope = report([_usage(0.5, time_limit_s=3600.0)])
    assert _job(from_scope)["time limit"] == "1:00:00 (from the recording: scontrol's TimeLimit for the job)"
    assert from_scope.tables[0].records()[0]["time_limit_use"] == pytest.approx(9 / 3600)
    assert any("time limit (0%)" in line and "`-t 0:01:00`" in line for line in from_scope.advice)
    given = report([_usage(0.5, time_limit_s=3600.0)], time_limit_s=20.0)
    assert _job(given)["time limit"] == "0:00:20 (from given)" and given.tables[0].records()[0]["time_limit_use"] == pytest.approx(9 / 20)
    slurm = SlurmUse("77", "sacct", "COMPLETED", "n1", 1, 9.0, 9.0, 7200.0, 10 * GIB, 5 * GIB, "MaxRSS")
    both = report([_usage(0.5)], slurm=slurm)
    assert _job(both)["time limit"] == "2:00:00 (from sacct)" and _job(both)["wall time"] == "0:00:09 (Slurm's elapsed time)"
    assert _job(both)["job"] == "77" and _job(both)["memory from"] == "no job cgroup: the sum of the job's processes' RSS"
    assert _job(both)["memory from (Slurm)"] == "MaxRSS"
    unknown = report([_usage(0.5)])
    assert _job(unknown)["time limit"] == "n/a (not known: --time-limit S gives it)"
    assert unknown.tables[0].records()[0]["time_limit_use"] is None


def test_a_scope_that_is_no_job_says_so() -> None:
    t = np.arange(3.0)
    node = Usage("vm", t, np.ones(3), None, np.full(3, GIB), None, None, "node memory in use", scope_kind="node")
    job = _job(report([node]))
    assert job["job"] == "n/a (a node scope, not a job)" and job["user"] == "n/a"
    assert job["memory from"] == "a node view: the node's memory in use"
