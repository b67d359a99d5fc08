"""`gpuscope kernels` as a user runs it: the screen by default, `--format` prints the same
tables; real PyProf data, a trace with start times, many runs with markers, bad flags."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from gpuscope.tui.cli.main import main
from paths import ROOT

GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
SHARED_PYPROF = ROOT.parent / "shared/data/pyprof/data/pcm/pyprof_kernels"
SEED_RUN = SHARED_PYPROF / "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
needs_seed_runs = pytest.mark.skipif(not SEED_RUN.is_file(), reason="../shared/data/pyprof is absent")
SAMPLE = ROOT / "tests/data/kernels"
RUN_1 = SAMPLE / "run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
RUN_8 = SAMPLE / "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_64_fp16_fp32_ret_0_0.csv"


Cli = Callable[..., subprocess.CompletedProcess[str]]  # the gpuscope_cli fixture: gpuscope run in this process


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """In a process of its own, for what must not start a screen in this one."""
    return subprocess.run([GPUSCOPE, "kernels", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def sums(path: Path) -> tuple[float, float]:
    """Σ FLOPs and Σ Bytes of a PyProf CSV, read with the csv module only (an independent path)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return sum(float(r["FLOPs"]) for r in rows), sum(float(r["Bytes"]) for r in rows)


@needs_seed_runs
def test_seed_ranking_and_peak_are_printed(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(SEED_RUN), "--gpu", "K40m", "--top", "3", "--format", "text")
    assert out.returncode == 0, out.stderr
    assert "4.29 TFLOPS" in out.stdout and "base-clock" in out.stdout
    assert "cudnn_convolve_sgemm_sm35_ldg_nn_64x16x64x16x16" in out.stdout and "34.81" in out.stdout
    assert "GPU compute efficiency % (seed 001)" in out.stdout
    assert "Time share of the longest kernels" in out.stdout and "Roofline" in out.stdout and "┤" in out.stdout
    assert "\x1b[" not in out.stdout
    rows = csv_rows(gpuscope_cli("kernels", str(SEED_RUN), "--gpu", "K40m", "--format", "csv").stdout)
    top = rows[0]
    assert top["kernel"] == "cudnn_convolve_sgemm_sm35_ldg_nn_64x16x64x16x16"
    assert float(top["flops_eff_pct"]) == pytest.approx(34.812331, rel=1e-6)


@needs_seed_runs
def test_seed_runs_grouped_like_the_notebook(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(SHARED_PYPROF), "--gpu", "K40m", "--group-by", "batch_size,nodes", "--format", "json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    runs = {r["file"].rsplit("/", 1)[-1]: r for r in payload["runs"]}
    run_8 = runs[SEED_RUN.name]
    assert (run_8["nodes"], run_8["batch_size"], run_8["data_loader"], run_8["grad"]) == (8, 32, "dali-gpu", "fp16")
    # The three efficiencies of this file, as the seed computes them (also checked in test_kernel_efficiency).
    assert run_8["compute_efficiency_pct"] == pytest.approx(69.751, abs=5e-4)
    assert run_8["flops_efficiency_pct"] == pytest.approx(8.259, abs=5e-4)
    assert run_8["bandwidth_efficiency_pct"] == pytest.approx(9.039, abs=5e-4)
    grouped = payload["runs_grouped"]
    assert [(g["batch_size"], g["nodes"], g["runs"]) for g in grouped] == [(32, 1, 1), (32, 8, 1)]
    # One run per group here, so each mean is that run's value. The seed's own table averages
    # 8 configurations per group (In [8]: 69.94 / 8.27 / 9.07 at batch 32, 8 nodes): ours is
    # one of those 8, so it must be close to, not equal to, the seed's mean.
    by_nodes = {g["nodes"]: g for g in grouped}
    assert by_nodes[8]["compute_efficiency_pct"] == pytest.approx(run_8["compute_efficiency_pct"])
    assert abs(by_nodes[8]["compute_efficiency_pct"] - 69.936754) < 1.0
    assert abs(by_nodes[8]["flops_efficiency_pct"] - 8.26863) < 0.5
    assert abs(by_nodes[1]["compute_efficiency_pct"] - 68.791497) < 1.0


def test_trace_with_start_times_reports_busy_time(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(ROOT / "tests/data/profiles/nsys_cuda_gpu_trace_2023.csv"), "--gpu", "A100", "--format", "text")
    assert out.returncode == 0, out.stderr
    assert "GPU busy ms (union of kernels)" in out.stdout and "Kernels" in out.stdout


def test_runs_fields_markers_and_scaled_efficiency_by_hand(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(SAMPLE), "--gpu", "K40m", "--format", "csv", "--table", "runs")
    assert out.returncode == 0, out.stderr
    rows = {Path(r["file"]).name: r for r in csv_rows(out.stdout)}
    one, eight = rows[RUN_1.name], rows[RUN_8.name]
    assert (one["nodes"], one["batch_size"], eight["nodes"], eight["batch_size"]) == ("1", "32", "8", "64")
    # tests/data/markers (beside tests/data/kernels) holds run 1's markers: 'End of Batch'
    # every 100/120/300 ms (median 0.12 s), 'Forward Pass' after the first 26 every 50/60/70 ms
    # (median 0.06 s); the seed takes the smaller, and spreads Σ FLOPs over 25 such batches.
    flops, nbytes = sums(RUN_1)
    assert float(one["batch_s"]) == pytest.approx(0.06)
    assert float(one["scaled_flops_efficiency_pct"]) == pytest.approx(flops / (25 * 0.06) * 1e-12 / 4.29 * 100)
    assert float(one["scaled_bandwidth_efficiency_pct"]) == pytest.approx(nbytes / (25 * 0.06) * 1e-9 / 288 * 100)
    assert eight["batch_s"] == "" and eight["scaled_flops_efficiency_pct"] == ""  # no marker file for it


def test_markers_flag_and_group_by(tmp_path: Path, gpuscope_cli: Cli) -> None:
    markers = tmp_path / f"markers_{RUN_8.stem}.csv"
    markers.write_text("name_str,timestamp\n" + "".join(f"End of Batch,{i * 200_000_000}\n" for i in range(5)))
    out = gpuscope_cli("kernels", str(SAMPLE), "--gpu", "K40m", "--markers", str(markers), "--group-by", "nodes", "--format", "json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    eight = next(r for r in payload["runs"] if r["file"].endswith(RUN_8.name))
    flops, _ = sums(RUN_8)
    assert eight["batch_s"] == pytest.approx(0.2)
    assert eight["scaled_flops_efficiency_pct"] == pytest.approx(flops / (25 * 0.2) * 1e-12 / 4.29 * 100)
    grouped = payload["runs_grouped"]
    assert [g["nodes"] for g in grouped] == [1, 8] and grouped[1]["batch_s"] == pytest.approx(0.2)


def test_name_pattern_and_its_errors(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(SAMPLE), "--gpu", "K40m", "--name-pattern", "run_{run}_config_{n}_{g}*", "--format", "json", "--table", "runs")
    assert out.returncode == 0, out.stderr
    assert sorted(r["n"] for r in json.loads(out.stdout)) == [1, 8] and "nodes" not in json.loads(out.stdout)[0]
    bad = gpuscope_cli("kernels", str(SAMPLE), "--name-pattern", "{1x}", "--format", "text")
    assert bad.returncode == 2 and "--name-pattern" in bad.stderr and "Traceback" not in bad.stderr
    unknown = gpuscope_cli("kernels", str(SAMPLE), "--gpu", "K40m", "--group-by", "colour", "--format", "text")
    assert unknown.returncode == 2 and "cannot group by colour" in unknown.stderr and "batch_size" in unknown.stderr


def test_rank_by_op_and_text_plots(gpuscope_cli: Cli) -> None:
    out = gpuscope_cli("kernels", str(SAMPLE), "--gpu", "K40m", "--rank-by", "op", "--sort", "time", "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = csv_rows(out.stdout)
    assert list(rows[0])[0] == "op" and rows[0]["op"] == "conv2d"
    none = gpuscope_cli("kernels", str(ROOT / "tests/data/profiles/nsys_cuda_gpu_trace_2023.csv"), "--rank-by", "op", "--format", "text")
    assert none.returncode == 2 and "no op values" in none.stderr


def test_bad_flags_and_paths_are_clear(tmp_path: Path) -> None:
    unknown = run(str(ROOT / "tests/data/profiles/nsys_gpukernsum_2021.csv"), "--gpu", "Z9000")
    assert unknown.returncode == 2 and "K40m" in unknown.stderr and "--peak-tflops" in unknown.stderr
    missing = run(str(tmp_path / "nope.sqlite"))  # the screen is not even started
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    printed = run(str(tmp_path / "nope.sqlite"), "--format", "text")
    assert printed.returncode == 1 and "no such file" in printed.stderr and "Traceback" not in printed.stderr


def test_without_format_the_screen_opens_with_the_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuscope.tui.app import GpuscopeApp
    from gpuscope.tui.screens.studies.kernels import KernelsScreen

    started: list[Any] = []
    monkeypatch.setattr(GpuscopeApp, "run", lambda self: started.append(self._first_screen()))
    assert main(["kernels", str(SAMPLE), "--gpu", "K40m", "--sort", "time", "--rank-by", "op", "--group-by", "nodes,batch_size"]) == 0
    screen = started[0]
    assert isinstance(screen, KernelsScreen) and screen.paths == [str(SAMPLE)]
    assert (screen.view.sort, screen.view.group) == ("time", "op")
    assert screen.options["gpu"] == "K40m" and screen.options["group_by"] == ("nodes", "batch_size")
