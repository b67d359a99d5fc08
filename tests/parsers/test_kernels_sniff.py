"""Profiler exports are recognised by content, whatever their extension, by the registry: the
browser and `kernels` take a file for the same kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.parsers import registry
from paths import ROOT

DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared" / "data"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("profiles/ncu_long_2022.csv", "ncu"), ("profiles/ncu_long_old_kernel_time.csv", "ncu"), ("profiles/ncu_wide_raw.csv", "ncu"),
        ("profiles/nsys_cuda_gpu_kern_sum_2023.csv", "nsys"), ("profiles/nsys_cuda_gpu_trace_2023.csv", "nsys"),
        ("profiles/nsys_cuda_gpu_trace_2024_us.csv", "nsys"), ("profiles/nsys_gpukernsum_2021.csv", "nsys"),
        ("profiles/nsys_gpukernsum_2022_gridblock.csv", "nsys"), ("profiles/nsys_gputrace_2021.csv", "nsys"),
        ("profiles/nvprof_gpu_summary.csv", "nvprof"), ("profiles/nvprof_gpu_trace.csv", "nvprof"),
        ("profiles/nvprof_gpu_trace_old_ms.csv", "nvprof"), ("profiles/nvprof_metrics.csv", "nvprof"),
        ("pyprof/resnet_csv.csv", "pyprof"), ("pyprof/subset.csv", "pyprof"), ("pyprof/columnated.txt", "pyprof"),
        ("torch/edge_cases.json", "torch-trace"),
    ],
)
def test_each_fixture_goes_to_its_reader(name: str, kind: str) -> None:
    path = DATA / name
    assert registry.recognise(path).kind == kind
    result = registry.read(path)
    assert not [f for f in result.findings if f.kind == "unknown-format"]


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is absent")
def test_real_exports_by_content() -> None:
    parquet = next((SHARED / "pyprof/data/pcm/pyprof_kernels").glob("*.gzip"))
    assert registry.recognise(parquet).kind == "pyprof"  # Parquet despite the .gzip name
    assert registry.recognise(next((SHARED / "profiles/nsys_sqlite").glob("*.sqlite"))).kind == "nsys"
    assert registry.recognise(next((SHARED / "profiles/pytorch_trace").glob("*.json.gz"))).kind == "torch-trace"


def test_unknown_and_missing_files_say_so(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("just some text\n")
    found = registry.read_profiles([other]).findings
    assert [f.kind for f in found] == ["unknown-format"] and "Nsight" in found[0].message
    assert registry.read_profiles([tmp_path / "nope.csv"]).findings[0].kind == "missing"
