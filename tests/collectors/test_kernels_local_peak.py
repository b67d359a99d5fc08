"""With no --gpu and a profile that names no GPU, the peak comes from NVML when
gpuscope runs on a GPU, and the source line says it is this machine's GPU."""

from __future__ import annotations

from typing import Any

import pynvml
import pytest

import gpuscope.collectors.nvml as nvml
from fake_pynvml import FakePynvml, gpus, install
from gpuscope.tui.model.kernels import build_model
from paths import ROOT

REAL_LOCAL_GPU_NAMES = nvml.local_gpu_names  # bound before conftest's fixture stubs it
SAMPLE = ROOT / "tests" / "data" / "kernels" / "run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
NSYS_TRACE = ROOT / "tests" / "data" / "profiles" / "nsys_cuda_gpu_trace_2023.csv"


def _fake_gpus(monkeypatch: Any, fake: FakePynvml) -> FakePynvml:
    install(monkeypatch, fake)
    monkeypatch.setattr(nvml, "local_gpu_names", REAL_LOCAL_GPU_NAMES)
    return fake


def test_local_gpu_names_in_index_order_and_nvml_shut_down(monkeypatch: Any) -> None:
    fake = _fake_gpus(monkeypatch, FakePynvml(gpus(2, name="NVIDIA H100 80GB HBM3")))
    assert nvml.local_gpu_names() == ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3")
    assert fake.calls["nvmlInit"] == 1 and fake.calls["nvmlShutdown"] == 1


@pytest.mark.parametrize("function", ["nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetName"])
def test_no_driver_or_a_failing_call_means_no_local_gpu(monkeypatch: Any, function: str) -> None:
    code = pynvml.NVML_ERROR_LIBRARY_NOT_FOUND if function == "nvmlInit" else pynvml.NVML_ERROR_UNKNOWN
    _fake_gpus(monkeypatch, FakePynvml(gpus(1), errors={(function, None): code}))
    assert nvml.local_gpu_names() == ()


def test_profile_without_gpu_is_measured_against_this_machines_gpu(monkeypatch: Any) -> None:
    _fake_gpus(monkeypatch, FakePynvml(gpus(2, name="NVIDIA H100 80GB HBM3")))
    model = build_model([str(SAMPLE)])
    assert model.peak.complete
    assert model.peak.tflops == pytest.approx(67.0) and model.peak.gbs == pytest.approx(3350.0)
    assert "NVML (this machine's GPU 0 of 2; the profile names no GPU)" in model.peak.source_text


def test_flags_and_no_gpu_keep_their_meaning(monkeypatch: Any) -> None:
    _fake_gpus(monkeypatch, FakePynvml(gpus(1, name="NVIDIA H100 80GB HBM3")))
    model = build_model([str(SAMPLE)], gpu="K40m")
    assert model.peak.tflops == pytest.approx(4.29) and "NVML" not in model.peak.source_text
    _fake_gpus(monkeypatch, FakePynvml(gpus(1), errors={("nvmlInit", None): pynvml.NVML_ERROR_LIBRARY_NOT_FOUND}))
    model = build_model([str(SAMPLE)])
    assert not model.peak.complete and "no peak known" in model.peak.source_text


def test_gpu_named_in_the_rows_wins_over_this_machine(monkeypatch: Any) -> None:
    _fake_gpus(monkeypatch, FakePynvml(gpus(1, name="NVIDIA H100 80GB HBM3")))
    model = build_model([str(NSYS_TRACE)])  # rows say `NVIDIA A100-SXM4-40GB (0)`
    assert model.peak.tflops == pytest.approx(19.5) and model.peak.gbs == pytest.approx(1555.0)
    assert "in the profile's device column" in model.peak.source_text and "NVML" not in model.peak.source_text


def test_rows_naming_two_models_name_no_gpu() -> None:
    import pandas as pd

    from gpuscope.tui.model.kernels import device_column_meta

    assert device_column_meta(pd.DataFrame({"device": ["Tesla V100-SXM2-16GB (0)", "Tesla V100-SXM2-16GB (1)"]}))["gpu_name"] == "Tesla V100-SXM2-16GB"
    assert device_column_meta(pd.DataFrame({"device": ["Tesla V100-SXM2-16GB (0)", "NVIDIA A100-SXM4-40GB (1)"]})) == {}
    assert device_column_meta(pd.DataFrame({"device": ["GPU 0", None]})) == {}  # not in the peak table
