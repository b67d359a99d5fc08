"""The job report from samples: efficiencies, n/a where unknown, advice only on evidence."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fake_watch import FakeSource
from gpuscope.metrics.job.report import Usage, report
from gpuscope.metrics.samples import JobScope
from gpuscope.parsers.recording.usage import usage_from_snapshots

GIB = 1024**3


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
    assert rep.advice == ["n1: peak memory 18.0 GiB (cgroup peak) of 100.0 GiB requested: `--mem=24G`"]


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
