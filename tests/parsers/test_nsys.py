"""The Nsight Systems reader: SQLite export (real, from ../shared), stats CSV reports by version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.profilers import nsys
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS

DATA = Path(__file__).parent.parent / "data" / "profiles"
SHARED_SQLITE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "profiles" / "nsys_sqlite" / "pipit_saxpy_mpi_cuda_a100_nsys2022.2.sqlite"
SAXPY = "saxpy(double *, double *, double *, double, int)"


def kinds(result) -> set[str]:
    return {f.kind for f in result.findings}


def assert_canonical(table: pd.DataFrame) -> None:
    assert list(table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)


@pytest.mark.skipif(not SHARED_SQLITE.is_file(), reason="../shared/data/profiles/nsys_sqlite is absent")
def test_real_sqlite_export() -> None:
    result = nsys.read_kernels(SHARED_SQLITE)
    assert not [f for f in result.findings if f.severity == "error"]
    kernels = result.table[result.table["op"] == "kernel"]
    assert len(kernels) == 5
    assert set(kernels["kernel"]) == {SAXPY}  # resolved through StringIds, not ids
    assert kernels["duration_ns"].sum() == 88_573_480
    assert kernels["start_ns"].is_monotonic_increasing
    assert (kernels["stream"] == 7).all()
    assert kernels["device"].iloc[0] == "NVIDIA A100-SXM4-40GB (0)"
    copies = result.table[result.table["op"] == "memcpy"]
    assert len(copies) == 15 and set(copies["direction"]) == {"HtoD", "DtoH"}
    assert (copies["bytes"] == 262_144_000).all()
    assert result.meta["peak_gbs"] == pytest.approx(1555.2)
    assert result.meta["sm_count"] == 108 and result.meta["clock_hz"] == 1.41e9
    assert result.meta["gpu_name"] == "NVIDIA A100-SXM4-40GB"
    nvtx = result.meta["nvtx"]
    assert len(nvtx) > 0 and nvtx["name"].notna().all()
    assert_canonical(result.table)


def _make_db(path: Path, kernel_columns: str = "start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER, demangledName INTEGER, shortName INTEGER") -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "void k<float>(float*)"), (2, "k")])
    con.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL({kernel_columns})")
    if "shortName" in kernel_columns:
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?)", [(300, 400, 0, 7, 1, 2), (100, 150, 0, 7, 1, 2), (500, 450, 0, 7, None, 2)])
    con.commit()
    con.close()


def test_synthetic_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    _make_db(db)
    result = nsys.read_kernels(db)
    assert list(result.table["kernel"]) == ["void k<float>(float*)", "void k<float>(float*)", "k"]  # shortName fallback
    assert list(result.table["start_ns"]) == [100, 300, 500]
    assert result.table["duration_ns"].iloc[2] is pd.NA
    assert "impossible" in kinds(result) and "no-gpu-info" in kinds(result)
    assert "peak_gbs" not in result.meta


def test_sqlite_missing_column_names_it(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    _make_db(db, "start INTEGER, deviceId INTEGER, demangledName INTEGER")
    result = nsys.read_kernels(db)
    errors = [f for f in result.findings if f.severity == "error"]
    assert len(errors) == 1 and "end" in errors[0].message and "streamId" in errors[0].message
    assert len(result.table) == 0


def test_sqlite_without_kernels(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT)")
    con.close()
    result = nsys.read_kernels(db)
    assert "no-kernels" in kinds(result) and len(result.table) == 0


def test_corrupt_sqlite(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(nsys.SQLITE_MAGIC + b"\x10\x00garbage" * 200)
    result = nsys.read_kernels(bad)
    assert [f.kind for f in result.findings] == ["corrupt"]
    assert result.findings[0].severity == "error" and len(result.table) == 0


@pytest.mark.skipif(not SHARED_SQLITE.is_file(), reason="../shared/data/profiles/nsys_sqlite is absent")
def test_truncated_real_sqlite(tmp_path: Path) -> None:
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(SHARED_SQLITE.read_bytes()[:20_000])
    result = nsys.read_kernels(cut)  # never raises; a clear error
    assert [(f.severity, f.kind) for f in result.findings] == [("error", "corrupt")]
    assert len(result.table) == 0


@pytest.mark.parametrize("content, kind", [(b"", "empty"), (b"   \n\n", "empty"), (b"\x00\x01\x02binary\xff" * 50, "binary")])
def test_empty_and_binary(tmp_path: Path, content: bytes, kind: str) -> None:
    path = tmp_path / "x.csv"
    path.write_bytes(content)
    result = nsys.read_kernels(path)
    assert [f.kind for f in result.findings] == [kind]
    assert len(result.table) == 0
    assert_canonical(result.table)


def test_missing_file(tmp_path: Path) -> None:
    result = nsys.read_kernels(tmp_path / "nope.csv")
    assert [f.kind for f in result.findings] == ["unreadable"]


@pytest.mark.parametrize("name, total, calls, first", [
    ("nsys_cuda_gpu_kern_sum_2023.csv", 14198407375 + 3600000000, [97620, 1000], "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<float, 128>>(T1::Params)"),
    ("nsys_gpukernsum_2021.csv", 88573480 + 11500000, [5, 10], SAXPY),
    ("nsys_gpukernsum_2022_gridblock.csv", 10000, [3, 2], "vectorAdd(float const*, float const*, float*, int)"),
])
def test_kernel_summaries(name: str, total: int, calls: list[int], first: str) -> None:
    result = nsys.read_kernels(DATA / name)
    table = result.table
    assert_canonical(table)
    assert table["duration_ns"].sum() == total
    assert list(table["calls"]) == calls
    assert table["kernel"].iloc[0] == first
    assert table["start_ns"].isna().all() and "start_ns" in result.unavailable
    assert (table["avg_ns"] * table["calls"]).sum() == pytest.approx(total, rel=1e-3)
    assert not [f for f in result.findings if f.severity != "info"]


def test_summary_preamble_is_reported() -> None:
    result = nsys.read_kernels(DATA / "nsys_cuda_gpu_kern_sum_2023.csv")
    assert [f.kind for f in result.findings] == ["preamble"]


@pytest.mark.parametrize("name", ["nsys_gputrace_2021.csv", "nsys_cuda_gpu_trace_2023.csv"])
def test_trace_unit_variants_agree(name: str) -> None:
    table = nsys.read_kernels(DATA / name).table
    kernel = table[table["op"] == "kernel"].iloc[0]
    assert kernel["start_ns"] == 924922186 and kernel["duration_ns"] == 17704808
    assert kernel["kernel"] == SAXPY and kernel["stream"] == 7
    copies = table[table["op"] == "memcpy"]
    assert list(copies["direction"][:2]) == ["HtoD", "DtoH"]
    assert copies["bytes"].iloc[0] == 262_144_000  # 262.144 MB == 262144000 byte
    assert (table["op"] == "memset").sum() == 1
    assert table.loc[table["op"] == "kernel", "bytes"].isna().all()


def test_trace_2024_microseconds_and_greenctx() -> None:
    result = nsys.read_kernels(DATA / "nsys_cuda_gpu_trace_2024_us.csv")
    table = result.table
    assert list(table["start_ns"]) == [1000500, 1020000, 1030125]
    assert list(table["duration_ns"]) == [12250, 3000, 1875]
    assert list(table["stream"]) == [20, 20, 21]
    assert table["bytes"].iloc[1] == 1048576
    assert table["device"].iloc[0] == "NVIDIA H100 80GB HBM3 (1)"
    assert list(table["op"]) == ["kernel", "memcpy", "kernel"]
    assert not result.findings


def test_nvtx_pushpop_trace_real() -> None:
    result = nsys.read_kernels(DATA / "nsys_nvtx_pushpop_trace_pipit_nbody.csv")
    nvtx = result.meta["nvtx"]
    assert len(nvtx) == 131
    assert nvtx["name"].iloc[0] == "main"
    assert nvtx["start_ns"].iloc[0] == 982845927 and nvtx["duration_ns"].iloc[0] == 1005098329
    assert str(nvtx["rangeid"].dtype) == "Int64"
    assert len(result.table) == 0 and "no-kernels" in kinds(result)


def test_nvtx_sum() -> None:
    text = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n95.0,3481709,1,3481709.0,3481709.0,3481709,3481709,0.0,PushPop,Profile_Loop\n"
    result = nsys.parse_csv(text)
    assert result.meta["nvtx"]["range"].iloc[0] == "Profile_Loop"
    assert result.meta["nvtx"]["total_time_ns"].iloc[0] == 3481709


def test_missing_column_names_column_and_format() -> None:
    text = "Time (%),Total Time (ns),Instances,Avg (ns)\n50,100,2,50\n"
    result = nsys.parse_csv(text, "x.csv")
    (finding,) = result.findings
    assert finding.severity == "error" and "`Name`" in finding.message and "cuda_gpu_kern_sum" in finding.message


def test_unknown_text() -> None:
    result = nsys.parse_csv("hello\nworld\n")
    assert [f.kind for f in result.findings] == ["unknown-format"]


def test_bad_rows_and_values_are_counted() -> None:
    text = (DATA / "nsys_cuda_gpu_trace_2023.csv").read_text()
    lines = text.splitlines()
    lines[2] = "garbage,row"
    lines[3] = lines[3].replace("942633682", "soon")
    result = nsys.parse_csv("\n".join(lines))
    assert len(result.table) == 4
    assert {"malformed", "not-numeric"} <= kinds(result)
    assert result.table["start_ns"].isna().sum() == 1


def test_unknown_unit() -> None:
    result = nsys.parse_csv("Start (fortnights),Duration (ns),Name\n1,2,k\n")
    assert result.table["start_ns"].isna().all() and "unit" in kinds(result)
    assert result.table["duration_ns"].iloc[0] == 2


FIXTURES = sorted(p.read_text() for p in DATA.glob("nsys_*.csv"))


def _check(result) -> None:
    assert_canonical(result.table)
    if len(result.table) == 0 and "nvtx" not in result.meta:
        assert result.findings  # nothing read is always explained


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_random_text_never_raises(text: str) -> None:
    _check(nsys.parse_csv(text))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURES), st.data())
def test_mangled_reports_never_raise(text: str, data) -> None:
    lines = text.splitlines()
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "cut", "junk", "dup"]))
        if action == "drop":
            lines.pop(i)
        elif action == "cut":
            lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
        elif action == "junk":
            lines[i] = data.draw(st.text(max_size=40))
        else:
            lines.insert(i, lines[i])
        if not lines:
            break
    data_lines = sum(1 for line in lines if line.strip())
    result = nsys.parse_csv("\n".join(lines))
    _check(result)
    read = len(result.table) + (len(result.meta["nvtx"]) if "nvtx" in result.meta else 0)
    if read < data_lines - 1:
        assert result.findings  # skipped lines are accounted for


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_random_bytes_after_sqlite_magic(tmp_path: Path, blob: bytes) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(nsys.SQLITE_MAGIC + blob)
    result = nsys.read_kernels(path)
    _check(result)
