"""Every implementation's numbers are kept under its own name,
testers (and their options) are told apart, MAGMA 1.x outputs are read, and a file that yields
no rows says why. Fixtures in tests/data/magma/ are written from the MAGMA testers' printf
formats (see tests/data/NOTICE); the property tests at the end push random rows through every
real column header and check each printed number comes back in its own column."""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.metrics.magma import stats as magma_stats
from gpuscope.parsers.magma import read as magma
from gpuscope.parsers.magma import layout as fmt

DATA = Path(__file__).resolve().parent.parent / "data" / "magma"


def read(*paths: Path) -> magma.MagmaResult:
    return magma.read_tree(list(paths))


def of(rows: pd.DataFrame, impl: str) -> pd.DataFrame:
    return rows[(rows["impl"] == impl).to_numpy(bool)].sort_values("line")


def floats(series: pd.Series) -> list[float]:
    return [float(v) for v in series.to_numpy(np.float64)]


def error_columns(rows: pd.DataFrame) -> list[str]:
    return [c for c in rows.columns if c.endswith("_error") or c.startswith("error_")]


def approx(values: list[float]):
    return pytest.approx(values, rel=1e-9, abs=0.0)


# --- point 2: every implementation's numbers, errors by name ---------------------------------

DSYMV_2X = DATA / "testing_dsymv_2x.out"
DSYMV_2X_ERRORS = [  # printf order in testing_dsymv.cpp: magma_error, dev (cuBLAS) error, atomics_error
    (1.12e-16, 2.36e-16, 3.48e-16), (1.05e-16, 2.21e-16, 3.64e-16), (1.27e-16, 2.47e-16, 3.19e-16), (1.18e-16, 2.53e-16, 3.27e-16)]


def test_dsymv_header_pairs_without_ms_are_gflops_only_in_the_layout() -> None:
    layout = fmt.parse_header("%   N   MAGMA Gflop/s (ms)    Atomics Gflop/s      cuBLAS Gflop/s       CPU Gflop/s   MAGMA error  cuBLAS")
    assert layout is not None
    assert [(impl, timed) for impl, timed, _ in layout.impls] == [("magma", True), ("atomics", False), ("cublas", False), ("cpu", False)]
    assert layout.sizes == ("n",) and layout.errors == ("magma_error", "cublas_error")


def test_dsymv_2x_keeps_all_four_implementations_with_their_own_numbers() -> None:
    rows = read(DSYMV_2X).rows
    assert len(rows) == 16
    assert rows["impl"].astype(str).tolist()[:4] == ["magma", "atomics", "cublas", "cpu"]  # a row's impls in header order
    expected = {  # (Gflop/s, ms) as printed: the rows print a time for every implementation, the header names only MAGMA's
        "magma": ([46.80, 118.42, 171.66, 203.15], [0.05, 0.08, 0.11, 0.17]),
        "atomics": ([61.35, 140.07, 190.23, 212.40], [0.04, 0.06, 0.10, 0.16]),
        "cublas": ([38.52, 85.13, 120.88, 150.31], [0.06, 0.10, 0.16, 0.23]),
        "cpu": ([9.41, 11.02, 11.87, 12.05], [0.25, 0.81, 1.66, 2.87]),
    }
    for impl, (gflops, ms) in expected.items():
        mine = of(rows, impl)
        assert mine["n"].tolist() == [1088, 2112, 3136, 4160], impl
        assert floats(mine["gflops"]) == approx(gflops), impl
        assert floats(mine["time_ms"]) == approx(ms), impl  # already ms: not multiplied
        assert floats(mine["magma_error"]) == approx([e[0] for e in DSYMV_2X_ERRORS]), impl
        assert floats(mine["cublas_error"]) == approx([e[1] for e in DSYMV_2X_ERRORS]), impl
        assert (mine["status"] == "ok").all() and (mine["test"] == "dsymv").all() and (mine["uplo"] == "Lower").all()
    for column in error_columns(rows):  # errors are ~1e-16: a Gflop/s or a time in one would be > 1
        assert (rows[column].dropna() < 1).all(), column


def test_dsymv_2x_third_error_is_the_atomics_error() -> None:
    """The 2.x header names two errors (`MAGMA error  cuBLAS`), the rows print three: magma_error,
    dev_error (cuBLAS), atomics_error, in that printf order."""
    rows = read(DSYMV_2X).rows
    assert sorted(error_columns(rows)) == ["atomics_error", "cublas_error", "magma_error"]
    for impl in ("magma", "atomics", "cublas", "cpu"):
        assert floats(of(rows, impl)["atomics_error"]) == approx([e[2] for e in DSYMV_2X_ERRORS]), impl


DSYMV_1X = DATA / "magma1_testing_dsymv.out"
DSYMV_1X_ERRORS = [(1.41e-16, 2.62e-16, 3.83e-16), (1.33e-16, 2.74e-16, 3.71e-16), (1.52e-16, 2.58e-16, 3.96e-16)]


def test_dsymv_1x_header_with_three_error_names_and_no_percent() -> None:
    result = read(DSYMV_1X)
    rows = result.rows
    assert (rows["test"] == "dsymv").all() and (rows["uplo"] == "L").all()
    assert result.runs["magma_version"].tolist() == ["1.6.1"] and result.runs["device"].tolist() == ["Tesla K40c"]
    expected = {
        "magma": ([31.40, 80.02, 121.36], [0.08, 0.11, 0.16]),
        "atomics": ([40.11, 104.57, 139.80], [0.06, 0.09, 0.14]),
        "cublas": ([19.72, 52.85, 79.04], [0.12, 0.17, 0.25]),
        "cpu": ([7.65, 9.81, 10.47], [0.31, 0.91, 1.88]),
    }
    assert sorted(rows["impl"].astype(str).unique()) == sorted(expected)
    for impl, (gflops, ms) in expected.items():
        mine = of(rows, impl)
        assert floats(mine["gflops"]) == approx(gflops), impl
        assert floats(mine["time_ms"]) == approx(ms), impl
    magma_rows = of(rows, "magma")
    assert floats(magma_rows["magma_error"]) == approx([e[0] for e in DSYMV_1X_ERRORS])
    assert set(error_columns(rows)) == {"magma_error", "atomics_error", "cublas_error"}
    for column in error_columns(rows):
        assert (rows[column].dropna() < 1).all(), column


def test_dsymv_1x_error_names_follow_the_printf_order() -> None:
    """MAGMA 1.x testing_dsymv's header says `MAGMA error  Atomics    CUBLAS`, but its printf prints
    magma_error, cublas_error, atomics_error: the names follow the printf, not the header."""
    magma_rows = of(read(DSYMV_1X).rows, "magma")
    assert floats(magma_rows["cublas_error"]) == approx([e[1] for e in DSYMV_1X_ERRORS])
    assert floats(magma_rows["atomics_error"]) == approx([e[2] for e in DSYMV_1X_ERRORS])


def test_dgemm_default_gives_magma_and_cublas_rows_not_cpu() -> None:
    rows = read(DATA / "testing_dgemm.out").rows
    assert sorted(rows["impl"].astype(str).unique()) == ["cublas", "magma"]  # CPU printed `---   (  ---  )`: not a row
    magma_rows, cublas_rows = of(rows, "magma"), of(rows, "cublas")
    assert magma_rows["line"].tolist() == cublas_rows["line"].tolist() == [14, 15, 16, 17]
    assert floats(magma_rows["gflops"]) == approx([13.81, 6056.12, 6262.40, 6480.55])
    assert floats(magma_rows["time_ms"]) == approx([186.52, 3.11, 9.85, 22.22])
    assert floats(cublas_rows["gflops"]) == approx([1324.32, 6430.65, 6901.77, 7012.93])
    assert floats(cublas_rows["time_ms"]) == approx([1.95, 2.93, 8.94, 20.53])
    assert floats(magma_rows["magma_error"]) == approx([2.12e-17, 2.04e-17, 1.98e-17, 1.91e-17])
    assert rows["cublas_error"].isna().all()  # printed `---`
    assert magma_rows["problem_size"].tolist() == ["1088x1088x1088", "2112x2112x2112", "3136x3136x3136", "4160x4160x4160"]
    assert (rows["transA"] == "No transpose").all() and (rows["status"] == "ok").all()
    # MAGMA's first call (186 ms) is a warm-up; cuBLAS's first call of the same row is not.
    assert magma_rows["warmup"].tolist() == [True, False, False, False]
    assert not cublas_rows["warmup"].any()


def test_dgemm_lapack_fills_cpu_rows() -> None:
    rows = read(DATA / "testing_dgemm_lapack.out").rows
    assert rows["impl"].astype(str).tolist() == ["magma", "cublas", "cpu"] * 3
    expected = {
        "magma": ([2205.31, 5410.77, 6018.20], [1.17, 3.48, 23.92]),
        "cublas": ([3728.02, 6102.45, 6850.09], [0.69, 3.09, 21.02]),
        "cpu": ([385.84, 412.60, 427.83], [6.68, 45.66, 336.54]),
    }
    for impl, (gflops, ms) in expected.items():
        mine = of(rows, impl)
        assert floats(mine["gflops"]) == approx(gflops), impl
        assert floats(mine["time_ms"]) == approx(ms), impl
        assert floats(mine["magma_error"]) == approx([1.13e-08, 1.15e-08, 1.17e-08]), impl
        assert floats(mine["cublas_error"]) == approx([1.14e-08, 1.16e-08, 1.18e-08]), impl
    assert set(error_columns(rows)) == {"magma_error", "cublas_error"}


def test_lapack_style_getrf_gpu_cpu_first_gpu_is_magma_seconds_become_ms() -> None:
    rows = read(DATA / "testing_dgetrf_gpu_lapack.out").rows
    assert (rows["test"] == "dgetrf_gpu").all() and (rows["precision"] == "d").all()
    assert rows["impl"].astype(str).tolist() == ["cpu", "magma"] * 5  # header order: CPU first
    gpu, cpu = of(rows, "magma"), of(rows, "cpu")
    assert gpu["m"].tolist() == gpu["n"].tolist() == [2112, 4160, 6208, 8256, 10304] and gpu["k"].isna().all()
    assert floats(gpu["gflops"]) == approx([14.62, 2986.44, 4120.38, 4811.05, 5230.77])
    assert floats(gpu["time_ms"]) == approx([430.0, 20.0, 40.0, 80.0, 140.0])  # (sec) x 1000
    assert floats(cpu["gflops"]) == approx([118.40, 301.25, 355.71, 380.92, 392.16])
    assert floats(cpu["time_ms"]) == approx([50.0, 160.0, 450.0, 980.0, 1860.0])
    assert floats(gpu["check_error"]) == approx([3.31e-18, 3.02e-18, 2.97e-18, 2.88e-18, 2.81e-18])
    assert set(error_columns(rows)) == {"check_error"}
    assert gpu["warmup"].tolist() == [True, False, False, False, False] and not cpu["warmup"].any()


# --- point 3: testers and options are told apart ---------------------------------------------

GETRF_BOTH = DATA / "testing_dgetrf_then_dgetrf_gpu.out"


def _check_getrf_then_getrf_gpu(result: magma.MagmaResult) -> None:
    rows = result.rows
    assert rows["test"].astype(str).tolist() == ["dgetrf"] * 4 + ["dgetrf_gpu"] * 4
    assert (rows["impl"] == "magma").all()  # CPU `---`: no cpu rows
    assert floats(rows["gflops"]) == approx([9.85, 2510.30, 3640.72, 4297.18, 12.07, 3015.66, 4188.90, 4890.41])
    assert floats(rows["time_ms"]) == approx([640.0, 20.0, 40.0, 90.0, 520.0, 20.0, 40.0, 80.0])
    assert rows["line"].tolist() == [11, 12, 13, 14, 25, 26, 27, 28]
    assert rows["check_error"].isna().all() and (rows["status"] == "").all()
    # Each tester's first call is its own warm-up.
    assert rows["warmup"].tolist() == [True, False, False, False] * 2
    summary = magma_stats.summarize(rows)
    assert sorted(summary["test"].unique()) == ["dgetrf", "dgetrf_gpu"]
    by = summary.set_index(["test", "problem_size"])
    assert by.loc[("dgetrf", "4160x4160"), "gflops_median"] == pytest.approx(2510.30)
    assert by.loc[("dgetrf_gpu", "4160x4160"), "gflops_median"] == pytest.approx(3015.66)
    assert by.loc[("dgetrf", "2112x2112"), "count"] == 0 and by.loc[("dgetrf", "2112x2112"), "warmup"] == 1
    assert by.loc[("dgetrf_gpu", "2112x2112"), "count"] == 0 and by.loc[("dgetrf_gpu", "2112x2112"), "warmup"] == 1
    assert (summary["count"] <= 1).all()  # never the two testers pooled into one group
    assert result.runs["test"].tolist() == ["dgetrf,dgetrf_gpu"] and result.runs["processes"].tolist() == [2]


def test_two_testers_with_identical_headers_are_two_tests(tmp_path: Path) -> None:
    # The fixture with the same option line before both testers.
    text = GETRF_BOTH.read_text().replace("% ngpu 1, version 1\n", "% version 1\n")
    path = tmp_path / GETRF_BOTH.name
    path.write_text(text)
    _check_getrf_then_getrf_gpu(read(path))


def test_two_testers_with_identical_headers_and_an_option_only_one_prints() -> None:
    """As MAGMA prints them: testing_dgetrf shows `% ngpu 1, version 1`, testing_dgetrf_gpu only `% version 1`."""
    result = read(GETRF_BOTH)
    _check_getrf_then_getrf_gpu(result)
    rows = result.rows
    assert rows["ngpu"].astype(object).tolist()[:4] == ["1"] * 4 and rows["ngpu"].iloc[4:].isna().all()


def test_mixed_testers_with_different_option_names_read_together() -> None:
    """A folder of testers whose option names differ (dgemm's transA/transB, dgetrf_gpu's version)."""
    rows = read(DATA / "testing_dgemm.out", DATA / "testing_dgetrf_gpu_echoed_command.out").rows
    assert sorted(rows["test"].unique()) == ["dgemm", "dgetrf_gpu"]
    gemm = rows[(rows["test"] == "dgemm").to_numpy(bool)]
    getrf = rows[(rows["test"] == "dgetrf_gpu").to_numpy(bool)]
    assert (gemm["transA"] == "No transpose").all() and getrf["transA"].isna().all()
    assert (getrf["version"] == "1").all() and gemm["version"].isna().all()


UPLO = DATA / "testing_dpotrf_gpu_uplo.out"
POTRF_GPU = {  # uplo -> magma (GPU) Gflop/s, sec; cpu Gflop/s, sec
    "Lower": ([35.10, 2110.62, 3402.18, 4210.57], [0.09, 0.01, 0.02, 0.04], [260.31, 330.45, 352.87, 361.09], [0.01, 0.07, 0.23, 0.52]),
    "Upper": ([31.44, 1780.25, 2890.66, 3620.13], [0.10, 0.01, 0.03, 0.05], [258.76, 327.93, 349.12, 359.40], [0.01, 0.07, 0.23, 0.52]),
}


def _check_uplo(rows: pd.DataFrame) -> None:
    assert sorted(rows["test"].unique()) == ["dpotrf_gpu uplo=Lower", "dpotrf_gpu uplo=Upper"]
    for uplo, (gpu_gflops, gpu_sec, cpu_gflops, cpu_sec) in POTRF_GPU.items():
        mine = rows[(rows["uplo"] == uplo).to_numpy(bool)]
        assert (mine["test"] == f"dpotrf_gpu uplo={uplo}").all()
        gpu, cpu = of(mine, "magma"), of(mine, "cpu")
        assert gpu["n"].tolist() == [2112, 4160, 6208, 8256] and gpu["m"].isna().all()
        assert floats(gpu["gflops"]) == approx(gpu_gflops) and floats(gpu["time_ms"]) == approx([s * 1000 for s in gpu_sec])
        assert floats(cpu["gflops"]) == approx(cpu_gflops) and floats(cpu["time_ms"]) == approx([s * 1000 for s in cpu_sec])
    for impl in ("magma", "cpu"):
        summary = magma_stats.summarize(rows, impl=impl).set_index(["test", "problem_size"])
        assert len(summary) == 8 and (summary["count"] + summary["warmup"] == 1).all()  # one row per group: never pooled
        column = 0 if impl == "magma" else 2
        for uplo, values in POTRF_GPU.items():
            assert summary.loc[(f"dpotrf_gpu uplo={uplo}", "6208"), "gflops_median"] == pytest.approx(values[column][2])


def test_uplo_lower_and_upper_in_one_file_are_not_pooled() -> None:
    _check_uplo(read(UPLO).rows)


def test_uplo_lower_and_upper_in_two_files_are_not_pooled(tmp_path: Path) -> None:
    lines = UPLO.read_text().splitlines(keepends=True)
    second = next(i for i, line in enumerate(lines) if i and line.startswith("% MAGMA "))
    (tmp_path / "lower.out").write_text("".join(lines[:second]))
    (tmp_path / "upper.out").write_text("".join(lines[second:]))
    _check_uplo(read(tmp_path).rows)


def test_echoed_command_line_names_the_tester_without_a_usage_line() -> None:
    result = read(DATA / "testing_dgetrf_gpu_echoed_command.out")
    rows = result.rows
    assert (rows["test"] == "dgetrf_gpu").all() and (rows["precision"] == "d").all()
    assert floats(rows["gflops"]) == approx([7.31, 1722.40, 2960.18, 3805.52])
    assert floats(rows["time_ms"]) == approx([100.0, 0.0, 10.0, 10.0])
    assert result.runs["test"].tolist() == ["dgetrf_gpu"]
    assert not [f for f in result.findings if f.kind == "unrecognised"]  # the command line was understood


RUN_TESTS = DATA / "run_tests_dpotrf.out"


def test_run_tests_py_output_two_commands_are_two_labelled_blocks() -> None:
    """testing/run_tests.py writes `*`*100, the command, `*`*100 before each tester's output, and a
    summary at the end; the two dpotrf runs (-U, -L) are told apart by their uplo line."""
    result = read(RUN_TESTS)
    rows = result.rows
    assert rows["test"].astype(str).tolist() == ["dpotrf uplo=Upper"] * 6 + ["dpotrf uplo=Lower"] * 6
    assert rows["line"].tolist() == [15, 15, 16, 16, 17, 17, 33, 33, 34, 34, 35, 35]
    gpu = of(rows, "magma")
    assert floats(gpu["gflops"]) == approx([38.40, 2402.75, 7105.66, 41.26, 2511.38, 7302.19])
    assert gpu["status"].astype(str).tolist() == ["ok", "ok", "failed", "ok", "ok", "ok"]
    assert gpu["excluded"].astype(str).tolist() == ["warm-up", "", "failed", "warm-up", "", ""]
    assert floats(gpu["check_error"]) == approx([3.11e-17, 3.02e-17, 2.41e-09, 3.21e-17, 3.12e-17, 2.95e-17])
    assert (rows["ngpu"] == "1").all()
    summary = magma_stats.summarize(rows).set_index(["test", "problem_size"])
    assert summary.loc[("dpotrf uplo=Lower", "4096"), "count"] == 1 and summary.loc[("dpotrf uplo=Upper", "4096"), "failed"] == 1
    assert summary.loc[("dpotrf uplo=Upper", "4096"), "count"] == 0


def test_run_tests_py_summary_lines_are_not_reported_as_unparsed_rows() -> None:
    result = read(RUN_TESTS)
    assert [f.message for f in result.findings if f.kind in ("unparsed", "no-header")] == []


def test_a_batched_header_without_tester_name_is_not_called_gemm_vbatched(tmp_path: Path) -> None:
    path = tmp_path / "batched.out"
    path.write_text("% MAGMA 2.8.0  32-bit magma_int_t, 64-bit pointer.\n"
                    "% device 0: Tesla V100-SXM2-32GB, 1530.0 MHz clock, 32501.1 MiB memory, capability 7.0\n"
                    "% BatchCount   N    CPU Gflop/s (ms)    GPU Gflop/s (ms)   ||R_magma - R_lapack||_F / ||R_lapack||_F\n"
                    "%" + "=" * 99 + "\n"
                    "      1000    32     ---   (  ---  )     45.10 (   0.24)     ---\n"
                    "      1000    64     ---   (  ---  )    180.33 (   0.48)     ---\n")
    rows = read(path).rows
    assert floats(rows["gflops"]) == approx([45.10, 180.33])
    assert "gemm_vbatched" not in set(rows["test"].astype(str))


# --- point 4: MAGMA 1.x, and files that give no rows -----------------------------------------

def test_magma_1x_getrf_without_percent_is_read() -> None:
    result = read(DATA / "magma1_testing_dgetrf.out")
    rows = result.rows
    assert (rows["test"] == "dgetrf").all() and (rows["ngpu"] == "1").all()
    assert rows["impl"].astype(str).tolist() == ["cpu", "magma"] * 5
    gpu, cpu = of(rows, "magma"), of(rows, "cpu")
    assert gpu["m"].tolist() == [1088, 2112, 3136, 4160, 5184]
    assert floats(gpu["gflops"]) == approx([17.35, 131.81, 254.44, 402.07, 488.30])
    assert floats(gpu["time_ms"]) == approx([50.0, 50.0, 80.0, 120.0, 190.0])
    assert floats(cpu["gflops"]) == approx([21.47, 45.88, 60.41, 68.12, 72.55])
    assert floats(cpu["time_ms"]) == approx([40.0, 140.0, 340.0, 700.0, 1280.0])
    assert floats(gpu["check_error"]) == approx([3.26e-18, 3.02e-18, 2.97e-18, 2.91e-18, 2.86e-18])
    assert (rows["status"] == "ok").all()
    runs = result.runs
    assert runs["magma_version"].tolist() == ["1.5.0"] and runs["device"].tolist() == ["Tesla K40c"]
    assert runs["processes"].tolist() == [1] and runs["outcome"].tolist() == ["complete"]
    assert not [f for f in result.findings if f.kind in ("unrecognised", "no-data", "unparsed", "no-header")]


@pytest.fixture
def _cli(gpuscope_cli, monkeypatch: pytest.MonkeyPatch):
    """`gpuscope magma ARGS --format csv`, in this process, at no terminal size of the caller's."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    return lambda *args: gpuscope_cli("magma", *args, "--format", "csv")


NO_ROWS = DATA / "testing_dgetrf_gpu_no_rows.out"


def test_no_rows_file_gets_a_finding_that_says_why() -> None:
    result = read(NO_ROWS)
    assert result.rows.empty
    found = [f for f in result.findings if f.kind == "no-data"]
    assert len(found) == 1 and found[0].file == NO_ROWS.name
    assert "yields no rows" in found[0].message and "a header but no rows under it" in found[0].message


def test_cli_no_rows_is_not_a_silent_empty_csv(_cli) -> None:
    out = _cli(str(NO_ROWS))
    assert out.returncode != 0
    assert NO_ROWS.name in out.stderr and "yields no rows" in out.stderr and "a header but no rows under it" in out.stderr
    assert len(out.stdout.strip().splitlines()) <= 1  # at most the CSV header line: no summary rows


def test_cli_names_the_empty_file_among_good_ones(_cli) -> None:
    good = DATA / "testing_dgetrf_gpu_echoed_command.out"
    out = _cli(str(good), str(NO_ROWS))
    assert out.returncode == 0
    assert NO_ROWS.name in out.stderr and "yields no rows" in out.stderr and good.name not in out.stderr
    assert "dgetrf_gpu" in out.stdout and len(out.stdout.strip().splitlines()) == 1 + 4  # header + 4 sizes


def test_a_header_the_reader_does_not_understand_is_named_in_the_finding() -> None:
    result = read(DATA / "testing_dgesv_gpu.out")
    if result.rows.empty:  # not read: the finding must say which header (word) was not understood
        found = [f for f in result.findings if f.kind == "no-data"]
        assert len(found) == 1 and "NRHS" in found[0].message, [f.message for f in result.findings]
    else:  # or read, NRHS as a column of its own
        assert floats(of(result.rows, "magma")["gflops"]) == approx([301.25, 1201.75, 2880.40])


def test_a_cut_first_row_does_not_spoil_other_files_with_the_same_header(tmp_path: Path) -> None:
    """The layout of a header is fitted to its rows across all files read together: a first file
    whose only row was cut short after the GPU time (a killed job) must not make every other file's
    rows under that header unreadable."""
    complete = (DATA / "testing_dgetrf_gpu_echoed_command.out").read_text()
    head = complete[: complete.index(" 1024  1024")]
    (tmp_path / "a_killed.out").write_text(head + " 1024  1024     ---   (  ---  )      7.31 (   0.10)")  # no newline: cut
    (tmp_path / "b_complete.out").write_text(complete)
    result = read(tmp_path)
    rows = result.rows
    b = rows[(rows["file"] == "b_complete.out").to_numpy(bool)]
    assert floats(b["gflops"]) == approx([7.31, 1722.40, 2960.18, 3805.52])
    assert floats(b["time_ms"]) == approx([100.0, 0.0, 10.0, 10.0])
    assert not [f for f in result.findings if f.file == "b_complete.out" and f.severity != "info"]
    assert [f.kind for f in result.findings if f.file == "a_killed.out" and f.kind == "cut"] == ["cut"]


def test_a_cut_last_line_is_the_reason_the_truncated_finding_gives(tmp_path: Path) -> None:
    complete = (DATA / "testing_dgetrf_gpu_echoed_command.out").read_text()
    path = tmp_path / "killed.out"
    path.write_text(complete.rstrip("\n ")[:-3])  # the last row loses its trailing `---` and newline
    result = read(path)
    assert floats(result.rows["gflops"]) == approx([7.31, 1722.40, 2960.18])  # the cut row does not fit: skipped
    for finding in result.findings:
        if finding.kind == "truncated":
            uneven = re.search(r"some sizes have (\d+) rows, others (\d+)", finding.message)
            assert not uneven or uneven.group(1) != uneven.group(2), finding.message


# --- property tests: random rows through every real header -----------------------------------

# Per printed column: ("size", name, width) | ("impl", impl, kind, to_ms) with kind "pair" (`%7.2f (%7.2f)`)
# or "lone" (`%7.2f`) and to_ms the factor from the printed time to ms | ("error", (column name,)).
HEADERS = {
    "gemm_vbatched": dict(
        usage="% Usage: ./testing_dgemm_vbatched [options] [-h|--help]", test="dgemm_vbatched",
        pre=["% transA = No transpose, transB = No transpose", "%              max   max   max"],
        header="% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error",
        rule="%" + "=" * 83,
        cols=[("size", "batch_count", 12), ("size", "m", 5), ("size", "n", 5), ("size", "k", 5),
              ("impl", "magma", "pair", 1.0), ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",))]),
    "gemm_cublas": dict(
        usage="% Usage: ./testing_sgemm [options] [-h|--help]", test="sgemm", pre=["% transA = No transpose, transB = Transpose"],
        header="%   M     N     K   MAGMA Gflop/s (ms)  cuBLAS Gflop/s (ms)   CPU Gflop/s (ms)  MAGMA error  cuBLAS error",
        rule="%" + "=" * 104,
        cols=[("size", "m", 5), ("size", "n", 5), ("size", "k", 5), ("impl", "magma", "pair", 1.0), ("impl", "cublas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",))]),
    "gemm_hipblas": dict(
        usage="% Usage: ./testing_zgemm [options] [-h|--help]", test="zgemm", pre=["% transA = No transpose, transB = No transpose"],
        header="%   M     N     K   MAGMA Gflop/s (ms)  HIPBLAS Gflop/s (ms)   CPU Gflop/s (ms)  MAGMA error  HIPBLAS error",
        rule="%" + "=" * 104,
        cols=[("size", "m", 5), ("size", "n", 5), ("size", "k", 5), ("impl", "magma", "pair", 1.0), ("impl", "hipblas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("hipblas_error",))]),
    "magma1_gemm": dict(
        usage="Usage: ./testing_cgemm [options] [-h|--help]", test="cgemm", pre=["transA = N, transB = N"],
        header="    M     N     K   MAGMA Gflop/s (ms)  CUBLAS Gflop/s (ms)   CPU Gflop/s (ms)  MAGMA error  CUBLAS error",
        rule="=" * 105,
        cols=[("size", "m", 5), ("size", "n", 5), ("size", "k", 5), ("impl", "magma", "pair", 1.0), ("impl", "cublas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",))]),
    "gemm_batched": dict(
        usage="% Usage: /opt/magma/testing/testing_dgemm_batched [options] [-h|--help]", test="dgemm_batched",
        pre=["% version = 1, regular batch GEMM", "% transA = No transpose, transB = No transpose"],
        header="% BatchCount     M     N     K   MAGMA Gflop/s (ms)   CUBLAS Gflop/s (ms)   CPU Gflop/s (ms)   MAGMA error   CUBLAS error",
        rule="%" + "=" * 120,
        cols=[("size", "batch_count", 12), ("size", "m", 5), ("size", "n", 5), ("size", "k", 5), ("impl", "magma", "pair", 1.0),
              ("impl", "cublas", "pair", 1.0), ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",))]),
    "getrf_gpu": dict(
        usage="% Usage: ./testing_dgetrf_gpu [options] [-h|--help]", test="dgetrf_gpu", pre=["% version 1"],
        header="%   M     N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   |PA-LU|/(N*|A|)", rule="%" + "=" * 72,
        cols=[("size", "m", 5), ("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0),
              ("error", ("check_error",))]),
    "getrf": dict(  # testing_dgetrf: the same header as testing_dgetrf_gpu, another tester
        usage="% Usage: ./testing_zgetrf [options] [-h|--help]", test="zgetrf", pre=["% ngpu 1, version 1"],
        header="%   M     N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   |PA-LU|/(N*|A|)", rule="%" + "=" * 72,
        cols=[("size", "m", 5), ("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0),
              ("error", ("check_error",))]),
    "getrf_c2": dict(
        usage="% Usage: ./testing_sgetrf [options] [-h|--help]", test="sgetrf", pre=["% ngpu 1, version 2"],
        header="%   M     N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   |Ax-b|/(N*|A|*|x|)", rule="%" + "=" * 72,
        cols=[("size", "m", 5), ("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0),
              ("error", ("check_error",))]),
    "magma1_getrf": dict(
        usage="Usage: ./testing_dgetrf [options] [-h|--help]", test="dgetrf", pre=["ngpu 1"],
        header="    M     N   CPU GFlop/s (sec)   GPU GFlop/s (sec)   |PA-LU|/(N*|A|)", rule="=" * 73,
        cols=[("size", "m", 5), ("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0),
              ("error", ("check_error",))]),
    "potrf": dict(
        usage="% Usage: ./testing_zpotrf [options] [-h|--help]", test="zpotrf", pre=["% ngpu = 1, uplo = Lower"],
        header="%   N   CPU Gflop/s (sec)   GPU Gflop/s (sec)   ||R_magma - R_lapack||_F / ||R_lapack||_F", rule="%" + "=" * 55,
        cols=[("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0), ("error", ("check_error",))]),
    "potrf_gpu": dict(
        usage="% Usage: ./testing_dpotrf_gpu [options] [-h|--help]", test="dpotrf_gpu", pre=["% uplo = Upper"],
        header="% N     CPU Gflop/s (sec)   GPU Gflop/s (sec)   ||R_magma - R_lapack||_F / ||R_lapack||_F", rule="%" + "=" * 55,
        cols=[("size", "n", 5), ("impl", "cpu", "pair", 1000.0), ("impl", "magma", "pair", 1000.0), ("error", ("check_error",))]),
    "potrf_batched": dict(
        usage="% Usage: ./testing_spotrf_batched [options] [-h|--help]", test="spotrf_batched", pre=[],
        header="% BatchCount   N    CPU Gflop/s (ms)    GPU Gflop/s (ms)   ||R_magma - R_lapack||_F / ||R_lapack||_F",
        rule="%" + "=" * 99,
        cols=[("size", "batch_count", 10), ("size", "n", 5), ("impl", "cpu", "pair", 1.0), ("impl", "magma", "pair", 1.0),
              ("error", ("check_error",))]),
    "getrf_batched": dict(
        usage="% Usage: ./testing_dgetrf_batched [options] [-h|--help]", test="dgetrf_batched", pre=[],
        header="% BatchCount   M     N    CPU Gflop/s (ms)   MAGMA Gflop/s (ms)   CUBLAS Gflop/s (ms)   ||PA-LU||/(||A||*N)",
        rule="%" + "=" * 106,
        cols=[("size", "batch_count", 10), ("size", "m", 5), ("size", "n", 5), ("impl", "cpu", "pair", 1.0), ("impl", "magma", "pair", 1.0),
              ("impl", "cublas", "pair", 1.0), ("error", ("check_error",))]),
    "dsymv_2x": dict(
        usage="% Usage: ./testing_dsymv [options] [-h|--help]", test="dsymv", pre=["% uplo = Lower"],
        header="%   N   MAGMA Gflop/s (ms)    Atomics Gflop/s      cuBLAS Gflop/s       CPU Gflop/s   MAGMA error  cuBLAS",
        rule="%" + "=" * 106,
        cols=[("size", "n", 5), ("impl", "magma", "pair", 1.0), ("impl", "atomics", "pair", 1.0), ("impl", "cublas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",)), ("error", ("atomics_error",))]),
    "dsymv_hip": dict(
        usage="% Usage: ./testing_ssymv [options] [-h|--help]", test="ssymv", pre=["% uplo = Upper"],
        header="%   N   MAGMA Gflop/s (ms)    Atomics Gflop/s      HIPBLAS Gflop/s       CPU Gflop/s   MAGMA error  HIPBLAS",
        rule="%" + "=" * 106,
        cols=[("size", "n", 5), ("impl", "magma", "pair", 1.0), ("impl", "atomics", "pair", 1.0), ("impl", "hipblas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("hipblas_error",)), ("error", ("atomics_error",))]),
    "magma1_dsymv": dict(
        usage="Usage: ./testing_dsymv [options] [-h|--help]", test="dsymv", pre=["uplo = L"],
        header="    N   MAGMA Gflop/s (ms)    Atomics Gflop/s      CUBLAS Gflop/s       CPU Gflop/s   MAGMA error  Atomics    CUBLAS",
        rule="=" * 118,
        cols=[("size", "n", 5), ("impl", "magma", "pair", 1.0), ("impl", "atomics", "pair", 1.0), ("impl", "cublas", "pair", 1.0),
              ("impl", "cpu", "pair", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",)), ("error", ("atomics_error",))]),
    # Not a MAGMA tester: the layout contract for a header column without (ms) whose rows print no time either.
    "lone_gflops": dict(
        usage="% Usage: ./testing_dsymv [options] [-h|--help]", test="dsymv", pre=[],
        header="%   N   MAGMA Gflop/s (ms)    Atomics Gflop/s      cuBLAS Gflop/s       CPU Gflop/s   MAGMA error  cuBLAS",
        rule="%" + "=" * 106,
        cols=[("size", "n", 5), ("impl", "magma", "pair", 1.0), ("impl", "atomics", "lone", 1.0), ("impl", "cublas", "lone", 1.0),
              ("impl", "cpu", "lone", 1.0), ("error", ("magma_error",)), ("error", ("cublas_error",))]),
}

GFLOPS = st.one_of(st.floats(0, 3e7, allow_nan=False), st.floats(0, 100, allow_nan=False), st.sampled_from(["inf", "nan", "-nan"]))
LONE_GFLOPS = st.one_of(st.floats(0, 3e7, allow_nan=False), st.just("inf"))
"""A lone Gflop/s printed `nan` would read as not run (no time beside it): not generated."""
TIME = st.one_of(st.floats(0, 1e5, allow_nan=False), st.floats(0, 1, allow_nan=False))
ERROR = st.one_of(st.floats(1e-20, 0.999, allow_nan=False), st.sampled_from(["---", "nan"]))


def _printed(value: float | str, spec: str) -> str:
    return value if isinstance(value, str) else spec % value


@st.composite
def tables(draw: st.DrawFn, name: str) -> list[list]:
    """Rows of printed tokens for one header: a list per row of (column spec, printed text)."""
    cols = HEADERS[name]["cols"]
    out = []
    for _ in range(draw(st.integers(1, 6))):
        row = []
        for col in cols:
            if col[0] == "size":
                row.append((col, str(draw(st.integers(0, 10**6 if col[1] == "batch_count" else 99999)))))
            elif col[0] == "impl":
                ran = draw(st.integers(0, 4)) > 0
                if not ran:
                    row.append((col, None))
                else:
                    gflops = _printed(draw(GFLOPS if col[2] == "pair" else LONE_GFLOPS), "%7.2f")
                    row.append((col, (gflops, "%7.2f" % draw(TIME)) if col[2] == "pair" else (gflops, None)))
            else:
                row.append((col, _printed(draw(ERROR), "%8.2e")))
        out.append((row, draw(st.sampled_from(["ok", "failed", ""]))))
    return out


def _row_text(row: list, status: str) -> str:
    parts = []
    for col, value in row:
        if col[0] == "size":
            parts.append(value.rjust(col[2]))
        elif col[0] == "impl":
            if value is None:
                parts.append("  ---   (  ---  )" if col[2] == "pair" else "  ---  ")
            else:
                parts.append(f"{value[0]:>7} ({value[1]:>7})" if value[1] is not None else f"{value[0]:>7}")
        else:
            parts.append(f"{value:>8}")
    return "   ".join(parts) + (f"   {status}" if status else "")


def _file(blocks: list[tuple[str, list]]) -> tuple[str, dict]:
    """A file of one tester's output per block (usage line, options, header, rule, rows) and what
    the reader must give: (line, impl) -> (header name, printed row, status, impl column, printed values)."""
    lines: list[str] = []
    expected = {}
    for name, table in blocks:
        spec = HEADERS[name]
        lines += [spec["usage"], ""] + spec["pre"] + [spec["header"], spec["rule"]]
        for row, status in table:
            lines.append(_row_text(row, status))
            for col, value in row:
                if col[0] == "impl" and value is not None:  # `---`: that implementation did not run, no row
                    expected[(len(lines), col[1])] = (name, row, status, col, value)
    return "\n".join(lines) + "\n", expected


def _value(printed: str) -> float:
    return math.nan if printed == "---" else float(printed)


def _same(got: float, printed: str, scale: float = 1.0) -> bool:
    want = _value(printed) * scale
    if math.isnan(want):
        return math.isnan(got)
    return got == pytest.approx(want, rel=1e-9, abs=0.0)


def _check_round_trip(expected: dict, result: magma.MagmaResult) -> None:
    rows = result.rows
    got_keys = list(zip(rows["line"].tolist(), rows["impl"].astype(str).tolist()))
    assert sorted(got_keys) == sorted(expected), "a `---` implementation became a row, or a run implementation is missing"
    assert len(set(got_keys)) == len(got_keys)
    names_with_rows = {name for name, *_ in expected.values()}
    every_error = {col[1][0] for name in names_with_rows for col in HEADERS[name]["cols"] if col[0] == "error"}
    assert set(error_columns(rows)) == every_error, error_columns(rows)
    for (line, impl), got in zip(got_keys, rows.itertuples(index=False)):
        name, row, status, col, value = expected[(line, impl)]
        got = got._asdict()
        test = HEADERS[name]["test"]
        assert got["test"] == test and got["precision"] == test[0], (line, got["test"], test)
        assert _same(got["gflops"], value[0]), (line, impl, "gflops", got["gflops"], value[0])
        if value[1] is None:
            assert math.isnan(got["time_ms"]), (line, impl, "time_ms")
        else:
            assert _same(got["time_ms"], value[1], col[3]), (line, impl, "time_ms", got["time_ms"], value[1])
        sizes = {}
        mine = set()
        for c, v in row:
            if c[0] == "size":
                sizes[c[1]] = int(v)
                assert got[c[1]] == int(v), (line, c[1])
            elif c[0] == "error":
                mine.add(c[1][0])
                assert _same(got[c[1][0]], v), (line, impl, c[1][0], got[c[1][0]], v)
        for column in every_error - mine:  # another tester's error column: empty on this row
            assert math.isnan(got[column]), (line, column)
        for size in ("batch_count", "m", "n", "k"):
            if size not in sizes:
                assert got[size] is pd.NA, (line, size)
        assert got["problem_size"] == "x".join(str(sizes[s]) for s in ("m", "n", "k") if s in sizes)
        assert got["status"] == status, (line, "status")
        for column in mine:
            if not math.isnan(got[column]):
                assert got[column] < 1, (line, column, got[column])  # never a Gflop/s or a time


def _read_text(text: str) -> magma.MagmaResult:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tester.out"
        path.write_text(text)
        return magma.read_tree([path])


PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PER_HEADER = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""8 examples for each of the 17 headers (136 random files, each read and judged whole as the
screens read them: about 50 ms of CPU each) and 40 files of two or three testers, which mix the
same headers again (about 100 more random tables)."""


@pytest.mark.parametrize("name", list(HEADERS))
def test_random_rows_round_trip_through_every_header(name: str) -> None:
    @PER_HEADER
    @given(tables(name))
    def check(table: list) -> None:
        text, expected = _file([(name, table)])
        _check_round_trip(expected, _read_text(text))

    check()


@st.composite
def several_testers(draw: st.DrawFn) -> list[tuple[str, list]]:
    """Two or three different testers one after another in one file (as run_tests.py or a job
    script writes them), each with its own options, header and rows."""
    real = [name for name in HEADERS if name != "lone_gflops"]
    names = draw(st.lists(st.sampled_from(real), min_size=2, max_size=3, unique_by=lambda n: HEADERS[n]["test"]))
    return [(name, draw(tables(name))) for name in names]


@PROPERTY
@given(several_testers())
def test_random_testers_in_one_file_keep_their_own_rows_and_columns(blocks: list[tuple[str, list]]) -> None:
    text, expected = _file(blocks)
    _check_round_trip(expected, _read_text(text))
