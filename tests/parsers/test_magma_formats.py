"""MAGMA reader on every tester layout in formats-scaling.md §1, written from MAGMA's printf
formats (the real study only has gemm and gemm_vbatched), and on bad files."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from gpuscope.parsers.magma import read as magma
from gpuscope.parsers import files as textfile

BANNER_25 = """% MAGMA 2.5.1  compiled for CUDA capability >= 3.0, 64-bit magma_int_t, 64-bit pointer.
% CUDA runtime 10000, driver 10010. OpenMP threads 4. MKL 2019.0.5, MKL threads 4.
% device 0: Tesla V100-SXM2-16GB, 1530.0 MHz clock, 16130.5 MiB memory, capability 7.0
% Fri Dec 13 15:05:08 2019
"""
BANNER_29_HIP = """% MAGMA 2.9.0 svn 32-bit magma_int_t, 64-bit pointer.
% HIP runtime 70051831, driver 70051831. MAGMA not compiled with OpenMP.
% device 0: AMD Radeon Graphics, 2420.0 MHz clock, 16304.0 MiB memory, gcn arch gfx1201
% Thu Feb  6 00:26:10 2025
"""
BANNER_26 = """% MAGMA 2.6.0  32-bit magma_int_t, 64-bit pointer.
Compiled with CUDA support for 3.5
% CUDA runtime 11020, driver 11040. OpenMP threads 8.
% device 0: NVIDIA A100-SXM4-40GB, 1410.0 MHz clock, 40536.2 MiB memory, capability 8.0
% Mon Mar  1 10:00:00 2021
"""


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_getrf_gpu_lapack_tester_cpu_first_seconds(tmp_path: Path) -> None:
    text = BANNER_29_HIP + """% Usage: ./testing_sgetrf_gpu [options] [-h|--help]

% ngpu 1, version 2
%   M     N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   |Ax-b|/(N*|A|*|x|)
%========================================================================
    1     1     ---   (  ---  )      0.00 (   0.00)   0.00e+00   ok
  258   258     ---   (  ---  )     21.21 (   0.00)   2.81e-11   ok
 1024  1024    110.40 (   0.01)   1200.50 (   0.0012)   3.1e-11   failed
"""
    every, _ = magma.read(write(tmp_path, "getrf.out", text))
    assert every["impl"].tolist() == ["magma", "magma", "cpu", "magma"]  # GPU is MAGMA's; CPU ran on the last row only
    rows = every[every["impl"] == "magma"]
    assert rows["test"].tolist() == ["sgetrf_gpu"] * 3 and rows["precision"].iloc[0] == "s"
    assert rows["problem_size"].tolist() == ["1x1", "258x258", "1024x1024"]
    last, cpu = rows.iloc[-1], every[every["impl"] == "cpu"].iloc[0]
    assert last["gflops"] == 1200.50 and last["time_ms"] == pytest.approx(1.2)  # seconds -> ms
    assert cpu["gflops"] == 110.40 and cpu["time_ms"] == pytest.approx(10.0) and cpu["line"] == last["line"]
    assert last["status"] == "failed" and last["check_error"] == pytest.approx(3.1e-11)
    assert str(last["device"]) == "AMD Radeon Graphics"


def test_potrf_single_size_column_without_check(tmp_path: Path) -> None:
    text = BANNER_25 + """% Usage: testing_dpotrf [options] [-h|--help]

% ngpu = 1, uplo = Lower
%   N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   ||R_magma - R_lapack||_F / ||R_lapack||_F
%=======================================================
 1088     ---   (  ---  )    512.20 (   0.00)     ---
 2112     ---   (  ---  )   1834.95 (   0.00)     ---
"""
    rows, _ = magma.read(write(tmp_path, "potrf.out", text))
    assert rows["problem_size"].tolist() == ["1088", "2112"]
    assert rows["n"].tolist() == [1088, 2112] and rows["m"].isna().all()
    assert (rows["status"] == "").all() and rows["gflops"].tolist() == [512.20, 1834.95]


def test_gemm_batched_cublas_header_and_lapack_columns(tmp_path: Path) -> None:
    text = BANNER_26 + """% Usage: /opt/magma/testing/testing_sgemm_batched [options] [-h|--help]

% version = 1, regular batch GEMM
% transA = No transpose, transB = No transpose
% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CUBLAS Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error   CUBLAS error
%========================================================================================================================
         100    32    32    32      12.34 (   0.53)      15.01 (   0.44)    427.83 (1118.44)   1.13e-08      1.13e-08   ok
         100    64    64    64    33822.46 (   0.32)     55.00 (   0.95)     ---   (  ---  )   2.00e-08        ---      ok
"""
    every, _ = magma.read(write(tmp_path, "batched.out", text))
    assert every["impl"].tolist() == ["magma", "cublas", "cpu", "magma", "cublas"]  # CPU '---' on the second row
    rows = every[every["impl"] == "magma"]
    assert rows["batch_count"].tolist() == [100, 100]
    assert every.loc[every["impl"] == "cublas", "gflops"].tolist() == [15.01, 55.00]
    assert every.loc[every["impl"] == "cpu", "time_ms"].tolist() == [1118.44]  # '(1118.44)': wider than %7.2f, no space
    assert rows["magma_error"].tolist() == [1.13e-08, 2.00e-08] and math.isnan(rows["cublas_error"].iloc[1])
    # A100 FP32 peak 19.5 TFLOPS: 33.8 TFLOPS in FP32 cannot be real.
    assert rows["impossible"].tolist() == [False, True]


def test_nan_inf_and_version_26_banner_without_percent(tmp_path: Path) -> None:
    text = BANNER_26 + """% Usage: ./testing_dgemm_vbatched [options] [-h|--help]
%              max   max   max
% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error
%===================================================================================
         300    32    32    31      nan (   0.46)     ---   (  ---  )     ---
         300    64    64    63     -nan (    inf)     ---   (  ---  )     ---
         300    96    96    95     60.00 (   0.30)     ---   (  ---  )     ---
"""
    rows, findings = magma.read(write(tmp_path, "nan.out", text))
    assert len(rows) == 3
    assert rows["excluded"].tolist()[1:] == ["not a number", ""]
    assert not any(f.kind == "unrecognised" for f in findings)  # 'Compiled with' lacks '%' in 2.6.0


def test_stray_lines_are_counted_not_lost(tmp_path: Path) -> None:
    text = BANNER_25 + """% Usage: ./testing_dgemm_vbatched [options] [-h|--help]
% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error
%===================================================================================
         300    32    32    31      1.00 (   0.46)     ---   (  ---  )     ---
something unexpected happened here
42 43 is the answer
CUDA runtime error: out of memory (2) in magma_dgemm at x.cpp:10
         300    64    64    63      2.00 (   0.30)     ---   (  ---  )     ---"""
    rows, findings = magma.read(write(tmp_path, "stray.out", text))
    assert rows["gflops"].tolist() == [1.0, 2.0]
    kinds = {f.kind: f for f in findings}
    assert kinds["unrecognised"].line == 9 and kinds["unrecognised"].count == 1
    assert kinds["unparsed"].line == 10
    assert kinds["error-line"].line == 11
    assert "cut" in kinds  # no newline at the end of the last row


def test_rows_without_any_header_are_reported(tmp_path: Path) -> None:
    rows, findings = magma.read(write(tmp_path, "bare.out", "% MAGMA 2.8.0  32-bit magma_int_t, 64-bit pointer.\n  300 32 32 31  1.0 ( 0.1)\n"))
    assert rows.empty
    assert any(f.kind == "no-data" and "yields no rows" in f.message and "no MAGMA column header" in f.message for f in findings)


@pytest.mark.parametrize(
    ("content", "kind"),
    [(b"", "empty"), (b"   \n\n", "empty"), (b"\x7fELF\x02\x01\x00\x00binary", "binary"), (b"\x1f\x8b\x08\x00broken", "corrupt")],
)
def test_unusable_files_give_one_clear_message(tmp_path: Path, content: bytes, kind: str) -> None:
    rows, findings = magma.read(write(tmp_path, "bad.out", content))
    assert rows.empty
    assert [f.kind for f in findings] == [kind] and findings[0].severity == "error"


def test_huge_file_is_refused_with_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "huge.out", b"% MAGMA 2.8.0\n" + b"x" * 5000)
    data, findings = textfile.read_bytes(path, "huge.out", max_bytes=1000)
    assert data is None and findings[0].kind == "huge" and "KB" in findings[0].message


def test_non_utf8_is_read_with_one_warning(tmp_path: Path) -> None:
    text = BANNER_25.replace("Tesla V100-SXM2-16GB", "Tesla V100 caf\xe9").encode("latin-1") + b"""% Usage: ./testing_dgemm_vbatched [options] [-h|--help]
% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error
         300    32    32    31      1.00 (   0.46)     ---   (  ---  )     ---
"""
    rows, findings = magma.read(write(tmp_path, "latin1.out", text))
    assert len(rows) == 1
    assert [f.kind for f in findings if f.severity != "info"] == ["encoding"]


def test_gzip_results_are_read(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[2] / "examples/magma/aws/eks/gpu/size4/results/magma/magma-vbatched-1-iter-1-2123727110144.out"
    path = write(tmp_path, "run.out.gz", gzip.compress(source.read_bytes()))
    rows, _ = magma.read(path)
    assert len(rows) == 128


def test_missing_path_is_a_finding(tmp_path: Path) -> None:
    result = magma.read_tree([tmp_path / "nope"])
    assert result.rows.empty and result.findings[0].kind == "missing"


def test_run_tests_wrapper_with_two_testers(tmp_path: Path) -> None:
    """run_tests.py output: several testers one after another, each with its own header."""
    stars = "*" * 100
    text = f"""{stars}
./testing_sgetrf_gpu -n 100
{stars}
""" + BANNER_29_HIP + """% Usage: ./testing_sgetrf_gpu [options] [-h|--help]
%   M     N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   |PA-LU|/(N*|A|)
%========================================================================
  100   100     ---   (  ---  )      1.50 (   0.00)     ---
""" + f"""{stars}
./testing_dpotrf -n 200
{stars}
""" + BANNER_29_HIP + """% Usage: ./testing_dpotrf [options] [-h|--help]
%   N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   ||R_magma - R_lapack||_F / ||R_lapack||_F
%=======================================================
  200     ---   (  ---  )      9.00 (   0.01)     ---
"""
    rows, findings = magma.read(write(tmp_path, "run_tests.out", text))
    assert rows["test"].astype(str).tolist() == ["sgetrf_gpu", "dpotrf"]
    assert rows["problem_size"].astype(str).tolist() == ["100x100", "200"]
    assert rows["time_ms"].tolist() == [0.0, 10.0]
    assert not any(f.kind in ("unrecognised", "unparsed") for f in findings)


def test_an_error_naming_the_tester_source_is_an_error_not_a_tester(tmp_path: Path) -> None:
    """`failed at testing_dgemm.cpp:NN` (TESTING_CHECK) is an error line; the rows after it stay dgemm_vbatched's."""
    text = BANNER_25 + """% Usage: ./testing_dgemm_vbatched [options] [-h|--help]
% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error
%===================================================================================
         300    32    32    31      1.00 (   0.46)     ---   (  ---  )     ---
failed at testing_dgemm_vbatched.cpp:212: error -113: cannot allocate memory on GPU device
         300    64    64    63      2.00 (   0.30)     ---   (  ---  )     ---
"""
    rows, findings = magma.read(write(tmp_path, "error.out", text))
    assert rows["test"].tolist() == ["dgemm_vbatched", "dgemm_vbatched"]
    assert [f.line for f in findings if f.kind == "error-line"] == [9]
