"""`read_runs` on real logs: MLPerf Training v3.1 (../shared, skipped when absent), and logs that
tests/scaling_work.py writes doing real parallel work at 1 and 2 workers, run directly and as
sbatch jobs under the real Slurm of tests/slurm_cluster.py (skipped without Slurm)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpuscope.parsers.runlogs.read import read_runs
from slurm_cluster import SlurmCluster, slurm_cluster  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
MLPERF = ROOT.parent / "shared" / "data" / "scaling" / "mlperf-training-v3.1"
WORK = Path(__file__).resolve().parent.parent / "scaling_work.py"
TOTAL = re.compile(r"^Total Training Time: (\S+) s$", re.MULTILINE)


def _printed_time(log: Path) -> float:
    found = TOTAL.findall(log.read_text())
    assert len(found) == 1, log.read_text()
    return float(found[0])


@pytest.mark.skipif(not MLPERF.is_dir(), reason="../shared/data/scaling/mlperf-training-v3.1 is absent")
def test_mlperf_training_v31() -> None:
    result = read_runs([MLPERF])
    runs = result.runs
    assert len(runs) == 20
    assert set(runs["format"]) == {"mlperf"} and set(runs["benchmark"]) == {"resnet", "ssd"}
    assert runs.groupby(["benchmark", "nodes"]).size().to_dict() == {("resnet", 1): 5, ("resnet", 8): 5, ("ssd", 1): 5, ("ssd", 8): 5}
    assert set(runs["resource_kind"]) == {"gpus"} and set(runs["resources"]) == {8, 64}
    assert set(runs["series"]) == {"resnet (gpus)", "ssd (gpus)"}
    eight = runs[runs["nodes"] == 8].iloc[0]
    assert eight["resources_from"].startswith("systems/eos_n8_") and "8 nodes x 8 accelerators" in eight["resources_from"]
    aborted = runs[runs["status"] == "aborted"]
    assert len(aborted) == 1
    bad = aborted.iloc[0]
    assert bad["benchmark"] == "resnet" and bad["nodes"] == 1 and bad["source"].endswith("eos_ngc23.09_mxnet/resnet/result_2.txt")
    assert bad["converged"] is False or bool(bad["converged"]) is False
    assert runs.loc[runs["status"] == "ok", "converged"].all()
    # time to train = run_stop - run_start, from the ms timestamps
    one = runs[runs["source"].str.endswith("eos_n8_ngc23.09_pytorch/ssd/result_0.txt")].iloc[0]
    assert one["time_s"] == pytest.approx((1695524967557 - 1695524598971) / 1000)
    assert "run_start" in one["time_from"] and "run_stop" in one["time_from"]
    assert one["quality_name"] == "eval_accuracy" and one["quality"] == pytest.approx(0.34632257873369665)
    assert one["set_global_batch_size"] == 256 and one["set_local_batch_size"] == 4
    assert one["set_accelerator"] == "NVIDIA H100-SXM5-80GB"
    ok = runs[runs["status"] == "ok"]
    medians = ok.groupby(["benchmark", "resources"])["time_s"].median()
    assert medians[("resnet", 8)] / medians[("resnet", 64)] > 4  # 8 nodes really are faster
    assert medians[("ssd", 8)] / medians[("ssd", 64)] > 4
    curves = result.curves
    acc = curves[(curves["source"] == one["source"]) & (curves["metric"] == "eval_accuracy")]
    assert list(acc["epoch"]) == [1, 2, 3, 4] and acc["value"].iloc[-1] == pytest.approx(one["quality"])
    assert (curves[curves["metric"] == "epoch_time_s"]["value"] > 0).all()
    assert [f.kind for f in result.findings if f.severity != "info"] == ["aborted"]


def _run_direct(folder: Path, workers: int) -> tuple[Path, float]:
    folder.mkdir(parents=True)
    log = folder / "run.log"
    started = time.perf_counter()
    with open(log, "w") as out:
        subprocess.run([sys.executable, str(WORK), "--workers", str(workers)], stdout=out, stderr=subprocess.STDOUT, timeout=120, check=True)
    return log, time.perf_counter() - started


def test_real_work_run_directly(tmp_path: Path) -> None:
    measured = {}
    for workers in (1, 2):
        log, wall = _run_direct(tmp_path / f"workers-{workers}", workers)
        measured[workers] = _printed_time(log)
        assert 0 < measured[workers] < wall
    result = read_runs([tmp_path])
    runs = result.runs.set_index("resources")
    assert sorted(runs.index) == [1, 2]
    assert set(runs["resource_kind"]) == {"processes"} and runs["series"].nunique() == 1
    for workers in (1, 2):
        assert runs.loc[workers, "time_s"] == measured[workers]  # exactly what the program printed
        assert runs.loc[workers, "resources_from"] == f"folder name 'workers-{workers}' (workers-{workers})"
        assert runs.loc[workers, "status"] == "ok" and runs.loc[workers, "epochs"] == 2
    speedup = runs.loc[1, "time_s"] / runs.loc[2, "time_s"]
    assert speedup == pytest.approx(measured[1] / measured[2])
    assert len(result.curves[result.curves["metric"] == "loss"]) == 4


SCRIPT = """#!/bin/bash
#SBATCH -J scaling_work
#SBATCH -c {cpus}
#SBATCH --mem=400M
#SBATCH -o {folder}/work-c{cpus}-%j.out
exec {python} {work} --workers $SLURM_CPUS_PER_TASK
"""


@pytest.mark.slow
def test_real_work_as_slurm_jobs(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:  # noqa: F811 - fixture
    jobs = {}
    for cpus in (1, 2):
        script = tmp_path / f"work-c{cpus}.sh"
        script.write_text(SCRIPT.format(cpus=cpus, folder=tmp_path, python=sys.executable, work=WORK))
        out = slurm_cluster.run("sbatch", "--parsable", f"--chdir={tmp_path}", str(script)).stdout
        job_id = out.strip().split(";")[0]
        slurm_cluster.submitted.append(job_id)
        jobs[cpus] = job_id
    deadline = time.monotonic() + 180
    logs = {cpus: tmp_path / f"work-c{cpus}-{job}.out" for cpus, job in jobs.items()}
    while time.monotonic() < deadline:
        done = all(log.exists() and "Total epochs/s:" in log.read_text() for log in logs.values())
        if done and not any(slurm_cluster.state(j) in ("RUNNING", "PENDING", "CONFIGURING") for j in jobs.values()):
            break
        time.sleep(0.5)
    else:
        pytest.fail("jobs did not finish: " + "; ".join(f"{log.name}: {log.read_text()[-300:] if log.exists() else 'absent'}" for log in logs.values()))
    result = read_runs([tmp_path])
    runs = result.runs.set_index("resources")
    assert sorted(runs.index) == [1, 2], result.findings
    assert set(runs["resource_kind"]) == {"threads"} and set(runs["benchmark"]) == {"scaling_work"}
    for cpus in (1, 2):
        assert runs.loc[cpus, "time_s"] == _printed_time(logs[cpus])
        assert runs.loc[cpus, "resources_from"].startswith("SLURM_CPUS_PER_TASK=") and "echoed" in runs.loc[cpus, "resources_from"]
    # the same logs without the echoed variables: the #SBATCH lines of the script beside each log
    bare = tmp_path / "bare"
    bare.mkdir()
    for cpus, log in logs.items():
        (bare / log.name).write_text("".join(line for line in log.read_text().splitlines(keepends=True) if not line.startswith("SLURM_")))
        (bare / f"work-c{cpus}.sh").write_text((tmp_path / f"work-c{cpus}.sh").read_text())
    again = read_runs([bare]).runs.set_index("resources")
    assert sorted(again.index) == [1, 2]
    for cpus in (1, 2):
        assert again.loc[cpus, "resources_from"] == f"#SBATCH -c {cpus} in work-c{cpus}.sh"
        assert again.loc[cpus, "time_s"] == _printed_time(logs[cpus])
