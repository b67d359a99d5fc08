"""`gpuscope kernels` as a user runs it: real PyProf data, a trace with start times, bad flags."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT

GPUSCOPE = str(Path(sys.executable).with_name("gpuscope"))
SEED_RUN = ROOT.parent / "shared/data/pyprof/data/pcm/pyprof_kernels/run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GPUSCOPE, "kernels", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not SEED_RUN.is_file(), reason="../shared/data/pyprof is absent")
def test_seed_ranking_and_peak_are_printed() -> None:
    out = run(str(SEED_RUN), "--gpu", "K40m", "--top", "3")
    assert out.returncode == 0, out.stderr
    assert "4.29 TFLOPS" in out.stdout and "base-clock" in out.stdout
    assert "cudnn_convolve_sgemm_sm35_ldg_nn_64x16x64x16x16" in out.stdout and "34.81" in out.stdout
    assert "GPU compute efficiency % (seed 001)" in out.stdout
    rows = list(csv.DictReader(io.StringIO(run(str(SEED_RUN), "--gpu", "K40m", "--format", "csv").stdout)))
    top = rows[0]
    assert top["kernel"] == "cudnn_convolve_sgemm_sm35_ldg_nn_64x16x64x16x16"
    assert float(top["flops_eff_pct"]) == pytest.approx(34.812331, rel=1e-6)


def test_trace_with_start_times_reports_busy_time() -> None:
    out = run(str(ROOT / "tests/data/profiles/nsys_cuda_gpu_trace_2023.csv"), "--gpu", "A100")
    assert out.returncode == 0, out.stderr
    assert "GPU busy ms (union of kernels)" in out.stdout and "Kernels" in out.stdout


def test_bad_flags_and_paths_are_clear(tmp_path: Path) -> None:
    unknown = run(str(ROOT / "tests/data/profiles/nsys_gpukernsum_2021.csv"), "--gpu", "Z9000")
    assert unknown.returncode == 2 and "K40m" in unknown.stderr and "--peak-tflops" in unknown.stderr
    missing = run(str(tmp_path / "nope.sqlite"))
    assert missing.returncode == 1 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
