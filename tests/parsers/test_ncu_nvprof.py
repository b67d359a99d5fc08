"""The Nsight Compute and nvprof CSV readers: long/wide ncu, nvprof trace/summary/metrics."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import ncu
from gpuscope.parsers.profilers import nvprof
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS

DATA = Path(__file__).parent.parent / "data" / "profiles"


def kinds(result) -> set[str]:
    return {f.kind for f in result.findings}


def assert_canonical(result) -> None:
    assert list(result.table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)


# ------------------------------------------------------------------------------------- ncu


def test_ncu_long_2022() -> None:
    result = ncu.read_kernels(DATA / "ncu_long_2022.csv")
    assert_canonical(result)
    table = result.table
    assert list(table["id"]) == [0, 1]
    sgemm, vec = table.iloc[0], table.iloc[1]
    assert sgemm["kernel"].startswith("sgemm_kernel(int, int, int")
    assert sgemm["duration_ns"] == pytest.approx(1_234_560)  # 1,234.56 usecond
    assert sgemm["flops"] == 1_000 + 2_000 + 2 * 5_323_503_232  # ffma counted twice
    assert sgemm["flops_fp32"] == sgemm["flops"] and sgemm["flops_fp64"] == 0
    assert sgemm["bytes"] == pytest.approx(50.33e6 + 4_194.30e3)  # Mbyte + Kbyte
    assert sgemm["stream"] == 7 and sgemm["device"] == "0"
    assert vec["flops"] == 1_048_576 and vec["flops_fp64"] == 1_048_576  # hfma n/a is unknown, not 0
    assert vec["bytes"] == 8_388_608 + 4_194_304 and vec["duration_ns"] == 9216
    assert "preamble" in kinds(result) and "start_ns" in result.unavailable
    assert not [f for f in result.findings if f.severity != "info"]


def test_ncu_long_old_header_smsp_and_dram_total() -> None:
    result = ncu.read_kernels(DATA / "ncu_long_old_kernel_time.csv")
    first, second = result.table.iloc[0], result.table.iloc[1]
    assert first["duration_ns"] == 1_500_000  # msecond
    assert first["flops"] == 2 * 1_000_000 + 10  # smsp__ ffma + hadd
    assert first["flops_fp16"] == 10
    assert first["bytes"] == 0.25e9  # dram__bytes.sum in Gbyte
    assert second["duration_ns"] == pytest.approx(2000)
    assert second["flops"] is not None and str(second["flops"]) == "<NA>"  # unknown, not 0
    assert "metric-missing" in kinds(result)


def test_ncu_wide_with_units_row() -> None:
    result = ncu.read_kernels(DATA / "ncu_wide_raw.csv")
    table = result.table
    assert list(table["kernel"]) == ["gemm_tile(float*)", "relu(float*)"]
    assert list(table["duration_ns"]) == [10_000, 2_500]
    assert list(table["flops"]) == [2 * 2_000_000 + 100, 262_144]
    assert list(table["bytes"]) == [1_048_576 + 512_000, 262_144 + 262_144]
    assert result.meta["format"] == "ncu-wide"


def test_ncu_wide_without_units_row() -> None:
    text = '"ID","Kernel Name","gpu__time_duration.sum"\n"0","k","1,000"\n'
    result = ncu.parse_csv(text)
    assert result.table["duration_ns"].iloc[0] == 1000 and "no-units" in kinds(result)


def test_ncu_unknown_unit_is_reported() -> None:
    text = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n"0","k","gpu__time_duration.sum","fortnight","3"\n'
    result = ncu.parse_csv(text)
    assert str(result.table["duration_ns"].iloc[0]) == "<NA>" and "unit" in kinds(result)


def test_ncu_missing_column() -> None:
    text = '"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","gpu__time_duration.sum","3"\n'
    (finding,) = ncu.parse_csv(text, "x.csv").findings
    assert finding.kind == "missing-column" and "`Metric Unit`" in finding.message and '"Metric Name"' in finding.message


def test_ncu_no_header() -> None:
    result = ncu.parse_csv("==PROF== Connected\nhello\n")
    assert [f.kind for f in result.findings] == ["unknown-format"]
    assert "Kernel Name" in result.findings[0].message


# ---------------------------------------------------------------------------------- nvprof


def test_nvprof_gpu_trace_units_row() -> None:
    result = nvprof.read_kernels(DATA / "nvprof_gpu_trace.csv")
    table = result.table
    assert_canonical(result)
    assert list(table["op"]) == ["memset", "memcpy", "kernel", "memcpy"]
    assert list(table["direction"].fillna("-")) == ["-", "HtoD", "-", "DtoH"]
    assert list(table["start_ns"]) == [0, 10_500, 200_000, 300_000]
    assert table["duration_ns"].iloc[2] == 55_125
    assert table["bytes"].iloc[0] == 1028 and table["bytes"].iloc[1] == 4096 * 1024  # KB = 1024 B
    assert str(table["bytes"].iloc[2]) == "<NA>"
    assert table["device"].iloc[0] == "GeForce RTX 2080 Ti (0)" and table["stream"].iloc[0] == 7
    assert list(table["correlation_id"]) == [274, 275, 276, 277]


def test_nvprof_old_17_column_trace_in_ms() -> None:
    table = nvprof.read_kernels(DATA / "nvprof_gpu_trace_old_ms.csv").table
    assert list(table["start_ns"]) == [512_125_000, 513_000_000]
    assert list(table["duration_ns"]) == [2048, 1_250_000]
    assert table["bytes"].iloc[1] == 2 * 1024**2


def test_nvprof_summary() -> None:
    result = nvprof.read_kernels(DATA / "nvprof_gpu_summary.csv")
    table = result.table
    assert list(table["kernel"]) == ["matmul(float*, float*, float*)", "[CUDA memcpy HtoD]"]
    assert list(table["duration_ns"]) == [353_084_000, 70_800_000]
    assert list(table["calls"]) == [1, 2]
    assert "api-rows" in kinds(result)


def test_nvprof_metrics() -> None:
    result = nvprof.read_kernels(DATA / "nvprof_metrics.csv")
    forma, copy = result.table.iloc[0], result.table.iloc[1]
    assert forma["calls"] == 3 and forma["flops"] == 3 * 673_384_360
    assert forma["bytes"] == 3 * 32 * (1100 + 500)  # transactions x 32 B
    assert copy["flops"] == 0 and copy["bytes"] == 2 * 8192
    assert forma["device"] == "Tesla K20c (0)"
    assert "duration_ns" in result.unavailable
    assert not [f for f in result.findings if f.severity != "info"]  # throughput strings are not used


def test_nvprof_missing_column() -> None:
    text = '"Device","Kernel","Metric Name","Min","Max"\n"d","k","flop_count_sp",1,1\n'
    (finding,) = nvprof.parse_csv(text).findings
    assert finding.kind == "missing-column" and "`Invocations`" in finding.message and "`Avg`" in finding.message


def test_nvprof_trace_missing_name() -> None:
    text = '"Start","Duration","Grid X","Stream"\nus,us,,\n1,2,3,4\n'
    (finding,) = nvprof.parse_csv(text).findings
    assert finding.kind == "missing-column" and "`Name`" in finding.message


@pytest.mark.parametrize("module", [ncu, nvprof])
@pytest.mark.parametrize("content, kind", [(b"", "empty"), (b"\x00\x01binary" * 10, "binary"), (b"SQLite format 3\x00" + b"\x00" * 100, "binary")])
def test_empty_and_binary(tmp_path: Path, module, content: bytes, kind: str) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(content)
    result = module.read(path)
    assert [f.kind for f in result.findings] == [kind] and len(result.table) == 0
    assert_canonical(result)


@pytest.mark.parametrize("module", [ncu, nvprof])
def test_header_only(module) -> None:
    header = {ncu: '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"', nvprof: '"Start","Duration","Name"\nus,us,'}[module]
    result = module.parse_csv(header + "\n")
    assert len(result.table) == 0 and "no-rows" in kinds(result)


# ------------------------------------------------------------------------------ properties

FIXTURES = [(ncu, p.read_text()) for p in sorted(DATA.glob("ncu_*.csv"))] + [(nvprof, p.read_text()) for p in sorted(DATA.glob("nvprof_*.csv"))]


def _check(result) -> None:
    assert_canonical(result)
    if len(result.table) == 0:
        assert result.findings


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([ncu, nvprof]), st.text(max_size=400))
def test_random_text_never_raises(module, text: str) -> None:
    _check(module.parse_csv(text))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURES), st.data())
def test_mangled_files_never_raise(fixture, data) -> None:
    module, text = fixture
    lines = text.splitlines()
    for _ in range(data.draw(st.integers(0, 4))):
        if not lines:
            break
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "cut", "junk", "dup", "swap"]))
        if action == "drop":
            lines.pop(i)
        elif action == "cut":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        elif action == "junk":
            lines[i] = data.draw(st.text(max_size=40))
        elif action == "dup":
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i].replace(",", ";", 1)
    _check(module.parse_csv("\n".join(lines)))
