"""The report's energy and activity section (metrics/job/energy.py): energy per GPU, node and
job, per unit of work, the activity advice on both sides of each threshold, RAPL as a node
figure and Slurm's figures beside; inputs are columns named after GpuSample fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpuscope.metrics.energy import RaplSample, RaplZone, SlurmEnergy, rapl_energy
from gpuscope.metrics.job import energy as je
from gpuscope.metrics.job.energy import (DRAM_BOUND_PCT, MIN_BUSY_SAMPLES, TENSOR_IDLE_PCT, WORK_COVERED, GpuReadings, Work, activity_advice,
                                         energy_section, work_from_runs)
from gpuscope.metrics.job.verdicts import SM_ACTIVE_LOW, UTIL_BUSY
from gpuscope.parsers.runlogs.read import read_runs

ROOT = Path(__file__).resolve().parents[2]
MLPERF = Path("/work/shared/data/formats/mlperf/asustek-esc-n8-e11-resnet-result_0.txt")


def steady(node: str, index: int, watts: float, seconds: int = 60, **columns: object) -> GpuReadings:
    """A GPU drawing `watts` for `seconds` at 1 Hz: its counter (mJ) and power agree."""
    t = np.arange(seconds + 1, dtype=float)
    frame = {"timestamp": t, "power_w": np.full(t.size, watts), "energy_mj": 5e9 + t * watts * 1000, **columns}
    return GpuReadings(node, index, frame)


def rows(section: je.EnergySection, title: str) -> list[dict]:
    return next(t for t in section.tables if t.title == title).records()


def test_energy_per_gpu_node_and_job_in_kwh_and_mean_watts() -> None:
    gpus = [steady("a", 0, 300), steady("a", 1, 200), steady("b", 0, 400)]
    energy = rows(energy_section(gpus), "Energy")
    by = {(r["node"], r["gpu"], r["what"]): r for r in energy}
    assert by[("a", 0, "GPU")]["energy_kwh"] == pytest.approx(300 * 60 / 3.6e6)
    assert by[("a", 0, "GPU")]["mean_w"] == pytest.approx(300) and by[("a", 0, "GPU")]["source"] == "energy counter"
    node_a = by[("a", None, "GPUs (2)")]  # a node row: only with several nodes, for a node with several GPUs
    assert node_a["energy_kwh"] == pytest.approx(500 * 60 / 3.6e6) and node_a["mean_w"] == pytest.approx(500)
    assert ("b", None, "GPUs (1)") not in by
    job = energy[-1]
    assert job["node"] == "job" and job["what"] == "the job's GPUs (3 on 2 nodes)"
    assert job["energy_kwh"] == pytest.approx(900 * 60 / 3.6e6) and job["mean_w"] == pytest.approx(900) and job["seconds"] == 60


def test_a_dataframe_with_nullable_counters_reads_like_arrays() -> None:
    g = steady("a", 0, 250)
    frame = pd.DataFrame({k: v for k, v in g.frame.items()})
    frame["energy_mj"] = pd.array([None, *frame["energy_mj"].astype("int64").tolist()[1:]], dtype="Int64")  # first reading missing
    fig = je.gpu_figure(GpuReadings("a", 0, frame))
    assert fig.source == "energy counter" and fig.joules == pytest.approx(250 * 59) and fig.mean_w == pytest.approx(250)


def test_no_counter_falls_back_to_integrated_power_labelled() -> None:
    g = steady("a", 0, 300)
    old = GpuReadings("a", 0, {"timestamp": g.frame["timestamp"], "power_w": g.frame["power_w"]})  # a recording before the counter
    row = rows(energy_section([old]), "Energy")[0]
    assert row["source"] == "integrated power" and row["energy_kwh"] == pytest.approx(300 * 60 / 3.6e6)
    assert row["counter_kwh"] is None and je.NO_COUNTER in row["note"]


def test_counter_and_power_that_disagree_are_both_shown() -> None:
    g = steady("a", 0, 300)
    frame = {**g.frame, "power_w": np.full(61, 200.0)}  # power says 200 W, the counter 300 W
    row = rows(energy_section([GpuReadings("a", 0, frame)]), "Energy")[0]
    assert row["energy_kwh"] == pytest.approx(row["counter_kwh"]) and row["integrated_kwh"] == pytest.approx(200 * 60 / 3.6e6)
    assert "differ by more than 5%" in row["note"]


def test_a_gpu_without_any_reading_is_na_and_makes_the_sum_na() -> None:
    blank = GpuReadings("a", 1, {"timestamp": np.arange(5.0)}, energy_note="energy counter not supported on this GPU (NVML)")
    energy = rows(energy_section([steady("a", 0, 300), blank]), "Energy")
    assert energy[1]["energy_kwh"] is None and energy[1]["source"] is None
    assert energy[1]["note"].startswith("energy counter not supported")
    job = energy[-1]
    assert job["energy_kwh"] is None and job["mean_w"] is None and job["note"] == "n/a: no energy figure for GPU a:1"


def test_rapl_is_a_node_row_never_the_jobs() -> None:
    samples = [RaplSample(float(t), (RaplZone("intel-rapl:0", "package-0", 1_000_000 + t * 150_000_000, 262_143_328_850),
                                     RaplZone("intel-rapl:0:0", "dram", t * 10_000_000, 65_712_999_613))) for t in range(11)]
    section = energy_section([steady("a", 0, 300, seconds=10)], cpu={"a": rapl_energy(samples)})
    energy = rows(section, "Energy")
    cpu = [r for r in energy if "RAPL" in r["what"]]
    assert [r["what"] for r in cpu] == ["CPU packages (RAPL, node)", "DRAM (RAPL, node)"]
    assert cpu[0]["energy_kwh"] == pytest.approx(1500 / 3.6e6) and cpu[0]["mean_w"] == pytest.approx(150) and cpu[0]["node"] == "a"
    assert energy[-1]["energy_kwh"] == pytest.approx(3000 / 3.6e6)  # the job's: its GPUs only
    assert any("never the job's" in n for n in next(t for t in section.tables if t.title == "Energy").notes)
    absent = rows(energy_section([steady("a", 0, 300)], cpu={"a": None}), "Energy")
    assert absent[1]["what"] == "CPU packages (RAPL, node)" and absent[1]["energy_kwh"] is None and absent[1]["note"] == je.NO_RAPL


# -- activity advice: each threshold from both sides ------------------------------------------

def advice_for(**activity: float) -> list[str]:
    n = MIN_BUSY_SAMPLES
    util = np.full(n, activity.pop("util", 98.0))
    return activity_advice("a: GPU 0", util, {k: np.full(n, v) for k, v in activity.items()})


def test_tensor_cores_idle_at_full_utilization_asks_about_mixed_precision() -> None:
    said = advice_for(tensor_active_pct=TENSOR_IDLE_PCT - 0.5)
    assert len(said) == 1 and "tensor cores idle at 98 % utilization" in said[0] and "mixed precision" in said[0]
    assert f"over {MIN_BUSY_SAMPLES} samples with utilization >= {UTIL_BUSY:g} %" in said[0]
    assert advice_for(tensor_active_pct=TENSOR_IDLE_PCT + 0.5) == []
    assert advice_for(tensor_active_pct=0.0, util=UTIL_BUSY - 1) == []  # not busy: no evidence either way


def test_dram_bandwidth_near_its_peak_is_memory_bound() -> None:
    said = advice_for(dram_bw_pct=DRAM_BOUND_PCT + 10)
    assert len(said) == 1 and "DRAM bandwidth at 90 % of its peak" in said[0] and "memory-bound" in said[0]
    assert advice_for(dram_bw_pct=DRAM_BOUND_PCT - 1) == []


def test_few_sms_active_while_utilization_is_full() -> None:
    said = advice_for(sm_active_pct=SM_ACTIVE_LOW - 1)
    assert len(said) == 1 and f"utilization 98 % but SM active {SM_ACTIVE_LOW - 1:.0f} %" in said[0] and "most SMs idle" in said[0]
    assert advice_for(sm_active_pct=SM_ACTIVE_LOW) == []  # the watch's verdict: the same threshold


def test_no_advice_without_enough_busy_samples_with_the_reading() -> None:
    util = np.full(MIN_BUSY_SAMPLES, 99.0)
    tensor = np.zeros(MIN_BUSY_SAMPLES)
    tensor[0] = np.nan  # one busy sample short of the evidence
    assert activity_advice("g", util, {"tensor_active_pct": tensor}) == []
    assert activity_advice("g", util, {}) == []  # a recording without activity


def test_activity_table_says_why_na_and_gives_the_advice_in_the_section() -> None:
    n = 20
    busy = steady("a", 0, 300, seconds=n - 1, util_gpu=np.full(n, 99.0), tensor_active_pct=np.full(n, 0.2), dram_bw_pct=np.full(n, 40.0),
                  sm_active_pct=np.full(n, 70.0), nvlink_tx_bytes_per_s=np.full(n, 2e9))
    old = GpuReadings("a", 1, {"timestamp": np.arange(3.0), "util_gpu": [99.0, 99.0, None]}, activity_note="no GPM on this GPU (Hopper or later)")
    section = energy_section([busy, old])
    activity = rows(section, "GPU activity")
    assert activity[0]["tensor_active_mean"] == pytest.approx(0.2) and activity[0]["nvlink_tx_gbps"] == pytest.approx(2.0)
    assert activity[0]["busy_samples"] == n and activity[0]["note"] == ""
    assert activity[1]["sm_active_mean"] is None and activity[1]["note"] == "no GPM on this GPU (Hopper or later)"
    assert activity[1]["util_mean"] == pytest.approx(99.0)
    assert [a.split(":")[0] for a in section.advice] == ["a"] and "tensor cores idle" in section.advice[0]


# -- per unit of work -------------------------------------------------------------------------

def test_energy_per_epoch_and_per_sample() -> None:
    work = Work(epochs=3, samples=300.0, run_time_s=60.0, source="run-1.log")
    per = rows(energy_section([steady("a", 0, 300)], work=work), "Energy per unit of work")
    assert [r["work"] for r in per] == ["epoch", "sample"]
    assert per[0]["joules_per_unit"] == pytest.approx(300 * 60 / 3) and per[1]["joules_per_unit"] == pytest.approx(300 * 60 / 300)
    assert per[0]["source"] == "run-1.log" and per[0]["note"] == ""


def test_per_unit_of_work_is_na_with_why() -> None:
    short = Work(epochs=3, samples=None, run_time_s=60 / (WORK_COVERED - 0.1), source="log")
    per = rows(energy_section([steady("a", 0, 300)], work=short), "Energy per unit of work")
    assert per[0]["joules_per_unit"] is None and "the recording covers 60 s of the 75 s run" in per[0]["note"]
    assert per[1]["count"] is None and per[1]["note"] == "n/a: the log does not say how many samples"
    untimed = rows(energy_section([steady("a", 0, 300)], work=Work(2, None, None, "log")), "Energy per unit of work")
    assert untimed[0]["joules_per_unit"] == pytest.approx(9000) and "no run time" in untimed[0]["note"]
    none = rows(energy_section([steady("a", 0, 300)], why_no_work="no log of the job: x"), "Energy per unit of work")
    assert none == [{"work": None, "count": None, "joules_per_unit": None, "gpu_energy_kwh": pytest.approx(300 * 60 / 3.6e6), "source": None,
                     "note": "no log of the job: x"}]


def test_work_from_the_runlog_readers_on_a_seed_log_and_summed_over_runs() -> None:
    runs = read_runs([ROOT / "examples" / "scaling" / "workers-1" / "run-1.log"]).runs
    work = work_from_runs(runs, "run-1.log")
    assert work.epochs == 3 and work.samples == 288 and work.run_time_s == pytest.approx(2.0311, abs=1e-3) and work.notes == ()
    both = work_from_runs(pd.DataFrame({"epochs": pd.array([3, 2], dtype="Int64"), "samples": [30.0, np.nan], "time_s": [1.0, 2.0]}), "x")
    assert both.epochs == 5 and both.samples is None and both.run_time_s == 3.0 and "2 runs" in both.notes[0]


@pytest.mark.skipif(not MLPERF.is_file(), reason="the shared data folder is not here")
def test_work_of_a_real_mlperf_log() -> None:
    work = work_from_runs(read_runs([MLPERF]).runs, MLPERF.name)
    assert work.epochs == 35 and work.samples == 1_281_167 * 35 and work.run_time_s == pytest.approx(800.371)


# -- Slurm beside -----------------------------------------------------------------------------

def test_slurm_figures_beside_gpuscopes() -> None:
    slurm = SlurmEnergy("7", "sacct", 7.2e6, "sacct ConsumedEnergyRaw: the job's nodes", gpu_util_pct=734.0, gpu_memory=21794 * 1024**2)
    section = energy_section([steady("a", 0, 300)], slurm=slurm, util_sum=180.0, memory_sum=40.0)
    beside = {r["figure"]: r for r in rows(section, "Slurm beside gpuscope")}
    assert beside["energy"]["slurm"] == pytest.approx(2.0) and beside["energy"]["gpuscope"] == pytest.approx(300 * 60 / 3.6e6)
    assert beside["energy"]["slurm_from"].startswith("sacct ConsumedEnergyRaw") and "not the CPUs" in beside["energy"]["gpuscope_from"]
    assert beside["GPU utilization"]["slurm"] == 734 and beside["GPU utilization"]["gpuscope"] == 180
    assert beside["GPU memory"]["slurm"] == pytest.approx(21794 / 1024) and beside["GPU memory"]["unit"] == "GiB"
    alone = SlurmEnergy("7", "sacct", None, "Slurm recorded no energy for this job", gpu_note="Slurm tracks no GPU use")
    only = {r["figure"]: r for r in rows(energy_section([], slurm=alone), "Slurm beside gpuscope")}
    assert only["energy"]["slurm"] is None and only["energy"]["slurm_from"] == "Slurm recorded no energy for this job"
    assert only["energy"]["gpuscope_from"] == "no recording given" and only["GPU memory"]["slurm_from"] == "Slurm tracks no GPU use"
    assert [t.title for t in energy_section([], slurm=alone).tables] == ["Slurm beside gpuscope"]


def test_a_node_view_sums_every_gpu_and_says_it_is_no_job() -> None:
    energy = rows(energy_section([steady("n", 0, 100), steady("n", 1, 100)], node_view=True), "Energy")
    assert energy[-1]["node"] == "all" and energy[-1]["what"] == "all GPUs (2 on 1 node; a node view, not a job's)"
    assert energy[-1]["energy_kwh"] == pytest.approx(200 * 60 / 3.6e6)
