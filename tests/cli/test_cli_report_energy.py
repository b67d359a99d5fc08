"""`gpuscope report` with energy and GPU activity, end to end: a recording written with the
recorder from samples that carry the counters, GPM activity and RAPL, the kept version 4 file,
old recordings (energy from integrated power or n/a, never a crash), the job's log for the work
done, every output format, and Slurm's figures beside."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Sequence

import pytest

from fake_watch import FakeSource
from gpuscope.collectors.recorder import Recorder
from gpuscope.collectors.slurm import CommandResult
from gpuscope.metrics.energy import RaplSample, RaplZone
from gpuscope.metrics.job import energy as je
from gpuscope.metrics.samples import Snapshot
from gpuscope.parsers.slurm_accounting import SACCT_FORMAT
from gpuscope.tui.cli import live

Cli = Callable[..., subprocess.CompletedProcess[str]]
ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "data" / "recordings"
SEED_LOG = ROOT / "examples" / "scaling" / "workers-1" / "run-1.log"
"""A seed 004 log: 3 epochs of 96 samples in 2.03 s."""
SAMPLES = 30
WATTS = {0: 300.0, 1: 400.0}
RANGE = 262_143_328_850


def job_snapshots(host: str = "node-a01", stdout: Path | None = None, samples: int = SAMPLES) -> list[Snapshot]:
    """A job on two GPUs, 1 s apart: GPU 0 busy with idle tensor cores (an fp32 job), GPU 1 busy
    with them; each counter grows by its power; the node's RAPL package draws 150 W."""
    source = FakeSource(gpus=2, processes=8)
    out = []
    for n in range(samples):
        snap = source.poll()
        gpus = tuple(dataclasses.replace(g, util_gpu=98.0, power_w=WATTS[g.index], energy_mj=int(2e9 + n * WATTS[g.index] * 1000),
                                         sm_active_pct=80.0, tensor_active_pct=0.3 if g.index == 0 else 35.0, dram_bw_pct=30.0)
                     for g in snap.gpus)
        rapl = RaplSample(snap.host.timestamp, (RaplZone("intel-rapl:0", "package-0", 10**9 + n * 150_000_000, RANGE),))
        scope = dataclasses.replace(snap.scope, stdout=str(stdout) if stdout else None)
        out.append(dataclasses.replace(snap, host=dataclasses.replace(snap.host, hostname=host), gpus=gpus, scope=scope, rapl=rapl))
    return out


def record(path: Path, snapshots: Sequence[Snapshot]) -> Path:
    with Recorder(path, batch_samples=7) as rec:
        for snap in snapshots:
            rec.add(snap)
    return path


def report_json(cli: Cli, *args: object) -> dict:
    done = cli("report", *args, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_energy_activity_work_and_advice_from_a_recording(tmp_path: Path, gpuscope_cli: Cli) -> None:
    log = tmp_path / "slurm-4242.out"
    shutil.copy(SEED_LOG, log)
    path = record(tmp_path / "job.gsrec", job_snapshots(stdout=log))
    got = report_json(gpuscope_cli, "--recording", path)
    energy = {(r["node"], r["gpu"], r["what"]): r for r in got["energy"]}
    seconds = SAMPLES - 1
    gpu0 = energy[("node-a01", 0, "GPU")]
    assert gpu0["source"] == "energy counter" and gpu0["energy_kwh"] == pytest.approx(300 * seconds / 3.6e6)
    assert gpu0["mean_w"] == pytest.approx(300) and gpu0["integrated_kwh"] == pytest.approx(gpu0["counter_kwh"])
    job = energy[("job", None, "the job's GPUs (2 on 1 node)")]
    assert job["energy_kwh"] == pytest.approx(700 * seconds / 3.6e6) and job["mean_w"] == pytest.approx(700)
    cpu = energy[("node-a01", None, "CPU packages (RAPL, node)")]
    assert cpu["energy_kwh"] == pytest.approx(150 * seconds / 3.6e6) and cpu["mean_w"] == pytest.approx(150)
    activity = {r["gpu"]: r for r in got["gpu_activity"]}
    assert activity[0]["tensor_active_mean"] == pytest.approx(0.3) and activity[1]["tensor_active_mean"] == pytest.approx(35.0)
    assert activity[0]["busy_samples"] == SAMPLES
    per = {r["work"]: r for r in got["energy_per_unit_of_work"]}
    assert per["epoch"]["count"] == 3 and per["epoch"]["joules_per_unit"] == pytest.approx(700 * seconds / 3)
    assert per["sample"]["count"] == 288 and per["epoch"]["source"] == "slurm-4242.out"
    advice = [a["advice"] for a in got["advice"]]
    idle = [a for a in advice if "tensor cores idle" in a]
    assert len(idle) == 1 and idle[0].startswith("node-a01: GPU 0: tensor cores idle at 98 % utilization (tensor active 0.3 %")
    text = gpuscope_cli("report", "--recording", path, "--width", "120").stdout
    assert "\nEnergy\n" in text and "\nGPU activity\n" in text and "\nEnergy per unit of work\n" in text and "tensor cores idle" in text
    assert "### Energy per unit of work" in gpuscope_cli("report", "--recording", path, "--format", "markdown").stdout
    csv = gpuscope_cli("report", "--recording", path, "--format", "csv", "--table", "energy").stdout.splitlines()
    assert csv[0] == ",".join(c.key for c in je.ENERGY_COLUMNS) and len(csv) == 1 + 4
    assert gpuscope_cli("report", "--recording", path, "--format", "csv").stdout.startswith("node,samples,")  # the default table


def test_a_multi_node_recording_has_node_rows_and_the_job_sum(tmp_path: Path, gpuscope_cli: Cli) -> None:
    a, b = job_snapshots("node-a01", samples=12), job_snapshots("node-b02", samples=12)
    path = record(tmp_path / "two.gsrec", [s for pair in zip(a, b) for s in pair])  # interleaved, as srun's streams come
    energy = report_json(gpuscope_cli, "--recording", path)["energy"]
    whats = [(r["node"], r["what"]) for r in energy]
    assert ("node-a01", "GPUs (2)") in whats and ("node-b02", "GPUs (2)") in whats
    assert energy[-1]["what"] == "the job's GPUs (4 on 2 nodes)" and energy[-1]["energy_kwh"] == pytest.approx(2 * 700 * 11 / 3.6e6)


def test_the_kept_version_4_recording(gpuscope_cli: Cli) -> None:
    got = report_json(gpuscope_cli, "--recording", RECORDINGS / "v4.gsrec")
    gpus = [r for r in got["energy"] if r["what"] == "GPU"]
    assert [r["source"] for r in gpus] == ["energy counter", "energy counter"] and all(r["energy_kwh"] > 0 for r in gpus)
    assert any(r["what"] == "CPU packages (RAPL, node)" and r["energy_kwh"] for r in got["energy"])
    activity = {r["gpu"]: r for r in got["gpu_activity"]}
    assert activity[0]["sm_active_mean"] is not None and activity[1]["sm_active_mean"] is None and "GPM" in activity[1]["note"]


@pytest.mark.parametrize("name", ["v1.gsrec", "v2.gsrec", "v3.gsrec"])
def test_old_recordings_give_integrated_power_and_na_activity(name: str, gpuscope_cli: Cli) -> None:
    got = report_json(gpuscope_cli, "--recording", RECORDINGS / name)
    gpus = [r for r in got["energy"] if r["what"] == "GPU"]
    assert gpus and all(r["source"] == "integrated power" and r["counter_kwh"] is None and r["note"] == je.NO_COUNTER for r in gpus)
    assert all(r["note"] == je.NO_ACTIVITY and r["sm_active_mean"] is None for r in got["gpu_activity"])
    rapl = [r for r in got["energy"] if "RAPL" in r["what"]]
    assert [r["energy_kwh"] for r in rapl] == [None] and rapl[0]["note"] == je.NO_RAPL


def test_a_recording_without_gpus_or_logs(gpuscope_cli: Cli) -> None:
    got = report_json(gpuscope_cli, "--recording", ROOT / "examples" / "recording" / "slurm-job.gsrec")
    assert [r["what"] for r in got["energy"]] == ["CPU packages (RAPL, node)"]  # no GPU: no GPU rows, no activity, no work
    assert "gpu_activity" not in got and "energy_per_unit_of_work" not in got


def test_log_option_and_its_refusals(tmp_path: Path, gpuscope_cli: Cli) -> None:
    path = record(tmp_path / "job.gsrec", job_snapshots(samples=12))
    per = report_json(gpuscope_cli, "--recording", path)["energy_per_unit_of_work"]
    assert per[0]["work"] is None and "names no output file" in per[0]["note"]
    per = report_json(gpuscope_cli, "--recording", path, "--log", SEED_LOG)["energy_per_unit_of_work"]
    assert per[0]["work"] == "epoch" and per[0]["joules_per_unit"] == pytest.approx(700 * 11 / 3)
    text = tmp_path / "notes.txt"
    text.write_text("nothing about epochs here\n")
    per = report_json(gpuscope_cli, "--recording", path, "--log", text)["energy_per_unit_of_work"]
    assert per[0]["work"] is None and per[0]["note"].startswith("no run found in notes.txt")
    missing = gpuscope_cli("report", "--recording", path, "--log", tmp_path / "gone.log")
    assert missing.returncode == 2 and "gone.log: no such file" in missing.stderr
    absent = gpuscope_cli("report", "--recording", path, "--format", "csv", "--table", "slurm")
    assert absent.returncode == 1 and "no slurm table" in absent.stderr and "energy" in absent.stderr


# -- Slurm's own figures --------------------------------------------------------------------

SACCT = "\n".join([
    SACCT_FORMAT.replace(",", "|"),
    "4242|COMPLETED|node-a01|2|00:00:50|00:00:29|01:00:00|500M|||billing=2,cpu=2,gres/gpu=2,mem=500M,node=1|36000",
    "4242.0|COMPLETED|node-a01|2|00:00:50|00:00:29|||300M|cpu=00:00:50,energy=35000,gres/gpumem=45G,gres/gpuutil=190,mem=300M|"
    "cpu=2,gres/gpu=2,mem=500M,node=1|35000",
])


class Runner:
    def __init__(self, replies: dict[str, CommandResult]) -> None:
        self.replies = replies

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        return self.replies.get(argv[0], CommandResult(1, "", f"{argv[0]}: error"))


def test_slurm_use_carries_slurms_energy_from_sacct_and_sstat() -> None:
    use, said = live.slurm_use("4242", Runner({"sacct": CommandResult(0, SACCT, "")}))
    assert use is not None and said == [] and use.energy is not None
    assert use.energy.energy_j == 36000 and use.energy.gpu_util_pct == 190 and use.energy.gpu_memory == 45 * 1024**3
    show = "JobId=12 JobName=x\n   JobState=RUNNING NumCPUs=2 RunTime=00:00:05 TimeLimit=01:00:00\n   TRES=cpu=2,mem=400M,node=1\n"
    sstat = "JobID|NTasks|MaxRSS|TRESUsageInTot\n12.0|1|163M|cpu=00:00:03,energy=900,mem=163M"
    use, _ = live.slurm_use("12", Runner({"scontrol": CommandResult(0, show, ""), "sstat": CommandResult(0, sstat, "")}))
    assert use is not None and use.energy is not None and use.energy.energy_j == 900 and use.energy.source == "sstat (running)"


def test_slurms_figures_beside_gpuscopes_in_the_report(tmp_path: Path, gpuscope_cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    real = live.slurm_use
    monkeypatch.setattr(live, "slurm_use", lambda job_id: real(job_id, Runner({"sacct": CommandResult(0, SACCT, "")})))
    path = record(tmp_path / "job.gsrec", job_snapshots())
    beside = {r["figure"]: r for r in report_json(gpuscope_cli, "--recording", path, "--job", "4242")["slurm_beside_gpuscope"]}
    assert beside["energy"]["slurm"] == pytest.approx(0.01) and beside["energy"]["gpuscope"] == pytest.approx(700 * 29 / 3.6e6)
    assert beside["GPU utilization"]["slurm"] == 190 and beside["GPU utilization"]["gpuscope"] == pytest.approx(196)
    assert beside["GPU memory"]["slurm"] == 45
    alone = {r["figure"]: r for r in report_json(gpuscope_cli, "--job", "4242")["slurm_beside_gpuscope"]}
    assert alone["energy"]["slurm"] == pytest.approx(0.01) and alone["energy"]["gpuscope"] is None
    assert alone["energy"]["gpuscope_from"] == "no recording given"
    csv = gpuscope_cli("report", "--job", "4242", "--format", "csv")
    assert csv.returncode == 0 and csv.stdout.startswith("job,source,state,")  # no recording: Slurm's table is the default

