"""The job report from samples: efficiencies, n/a where unknown, advice only on evidence."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fake_watch import FakeSource
from gpuscope.metrics.job_report import Usage, report, usage_from_snapshots
from gpuscope.metrics.samples import JobScope

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
    from gpuscope.metrics.job_report import GpuUsage

    t = np.arange(4.0)
    gpu = GpuUsage(1, True, np.full(4, math.nan), np.full(4, math.nan), None)
    usage = Usage("n1", t, np.full(4, 1.0), 1, np.full(4, GIB), None, None, "summed RSS", (gpu,))
    rep = report([usage])
    assert rep.advice == ["n1: GPU 1 allocated, no utilisation reading: whether it was used is unknown"]
    assert rep.tables[1].records()[0]["idle_share"] is None
