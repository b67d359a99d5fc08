"""MAGMA reader on the real study outputs: every kind of run checked by row counts and values."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuscope.parsers.magma import read as magma
from paths import EXAMPLES, SHARED_MAGMA, needs_shared

EKS4 = "aws/eks/gpu/size4/results/magma/"
VBATCHED = EXAMPLES / EKS4 / "magma-vbatched-1-iter-1-2123727110144.out"
GEMM = EXAMPLES / EKS4 / "magma-1-iter-1-1190293143552.out"
AKS_FAILED = EXAMPLES / "azure/aks/gpu/size4/results/magma/magma-1-iter-1-1189303287808.out"
CYCLECLOUD = EXAMPLES / "azure/cyclecloud/gpu/size4/results/magma/magma-4n-53-iter-1.out"
CANCELLED = EXAMPLES / "google/gke/gpu/size8/results/attempt-1/magma/magma-vbatched-1-iter-1-3404264898560.out"
ASSERT_ONLY = EXAMPLES / "google/gke/gpu/size8/results/final/magma/magma-vbatched-node-test-iter-1-7949095272448.out"


@pytest.fixture(scope="module")
def examples() -> magma.MagmaResult:
    return magma.read_tree([EXAMPLES])


def test_vbatched_flux_file_rows_and_values() -> None:
    rows, findings = magma.read(VBATCHED)
    assert len(rows) == 128  # 8 Flux tasks x 16 sizes
    assert rows["test"].unique().tolist() == ["dgemm_vbatched"]
    assert set(rows["precision"]) == {"d"}
    assert rows["problem_size"].nunique() == 16
    first = rows.iloc[0]
    assert (first["batch_count"], first["m"], first["n"], first["k"]) == (300, 32, 32, 31)
    assert first["problem_size"] == "32x32x31" and first["line"] == 15
    assert first["gflops"] == 0.0 and first["time_ms"] == pytest.approx(793.59)
    assert set(rows["impl"]) == {"magma"}  # CPU printed '---': it did not run, so it has no rows
    assert math.isnan(first["magma_error"])  # '---'
    last = rows.iloc[-1]
    assert (last["problem_size"], last["gflops"], last["time_ms"], last["line"]) == ("512x512x511", 3612.11, 3.00, 240)
    assert str(first["device"]) == "Tesla V100-SXM2-32GB"
    # Each of the 8 processes' first call (size 32) is the warm-up, nothing else is.
    assert rows["warmup"].sum() == 8
    assert set(rows.loc[rows["warmup"], "problem_size"]) == {"32x32x31"}
    assert not rows["impossible"].any() and (rows["status"] == "").all()
    assert any(f.kind == "warmup" and f.count == 8 for f in findings)


def test_gemm_file_keeps_magma_and_cublas_rows_with_their_errors() -> None:
    rows, _ = magma.read(GEMM)
    assert rows["impl"].value_counts().to_dict() == {"magma": 80, "cublas": 80}  # 8 tasks x 10 sizes each; CPU '---'
    magma_rows, cublas = rows[rows["impl"] == "magma"], rows[rows["impl"] == "cublas"]
    first, ref = magma_rows.iloc[0], cublas.iloc[0]
    assert first["test"] == "dgemm" and first["problem_size"] == "1088x1088x1088" and first["line"] == ref["line"]
    assert pd.isna(first["batch_count"])
    assert (first["gflops"], first["time_ms"], ref["gflops"], ref["time_ms"]) == (13.81, 186.51, 1324.32, 1.95)
    assert first["magma_error"] == pytest.approx(2.12e-17) and math.isnan(first["cublas_error"])  # cuBLAS error '---'
    assert (rows["status"] == "ok").all()
    assert magma_rows["warmup"].sum() == 8  # MAGMA's first call of each task: ~186 ms against ~2 ms
    assert cublas["warmup"].sum() == 0  # cuBLAS ran second in the same row: no warm-up of its own


def test_failed_rows_are_kept_flagged_and_excluded(examples: magma.MagmaResult) -> None:
    rows, findings = magma.read(AKS_FAILED)
    assert len(rows) == 640 and (rows["status"] == "failed").all()  # magma and cublas, 320 each
    assert (rows["excluded"] == "failed").all()
    assert rows["gflops"].max() > 1e6  # absurd values of kernels that did not run
    run = examples.runs.set_index("file").loc["azure/aks/gpu/size4/results/magma/magma-1-iter-1-1189303287808.out"]
    assert run["outcome"] == "failed checks" and run["exit_code"] == 10
    assert any(f.kind == "failed" and f.count == 320 for f in findings)


def test_interleaved_ranks_and_start_end_time(examples: magma.MagmaResult) -> None:
    rows, findings = magma.read(CYCLECLOUD)
    assert len(rows) == 512  # 32 ranks x 16 sizes, banners interleaved line by line
    assert rows.iloc[-1]["gflops"] == 30668.75 and rows.iloc[-1]["line"] == 1185
    run = examples.runs.set_index("file").loc["azure/cyclecloud/gpu/size4/results/magma/magma-4n-53-iter-1.out"]
    assert run["processes"] == 32 and run["visible_devices"] == 8
    assert run["duration_s"] == 15.0  # End time - Start time
    # V100 FP64 peak is 7.8 TFLOPS; this run reports up to 52 TFLOPS.
    impossible = rows[rows["impossible"]]
    assert len(impossible) == 207 and impossible["gflops"].min() > 7800
    message = next(f.message for f in findings if f.kind == "impossible")
    assert "PHYSICALLY IMPOSSIBLE" in message and "6.7x peak" in message
    assert any(f.kind == "shared-device" for f in findings)


def test_cancelled_run_is_partial_and_reported(examples: magma.MagmaResult) -> None:
    rows, findings = magma.read(CANCELLED)
    assert len(rows) == 96  # 12 of 16 sizes before ctrl-C
    assert not any(f.kind == "unparsed" for f in findings)  # '8.411s: job.exception' is no row
    run = examples.runs.set_index("file").loc["google/gke/gpu/size8/results/attempt-1/magma/magma-vbatched-1-iter-1-3404264898560.out"]
    assert run["outcome"] == "cancelled" and run["exit_code"] == 143 and run["cancelled"]
    assert run["duration_s"] == pytest.approx(8.83, abs=0.01)
    assert any(f.kind == "cancelled" and "384x382x383" in f.message for f in findings)


def test_assert_only_run_is_reported_not_dropped(examples: magma.MagmaResult) -> None:
    rows, findings = magma.read(ASSERT_ONLY)
    assert rows.empty
    found = [f for f in findings if f.kind == "assert-only"]
    assert found and found[0].count == 64 and "--ngpu 8 exceeds" in found[0].message


def test_path_context_and_folder_walk(examples: magma.MagmaResult) -> None:
    envs = set(examples.rows["environment"].astype(str))
    assert envs == {"aws/eks/gpu", "azure/aks/gpu", "azure/cyclecloud/gpu", "google/gke/gpu", "google/compute-engine/gpu"}
    assert set(examples.rows["nodes"].dropna().astype(int)) == {4, 8, 16}
    assert any(f.kind == "skipped" for f in examples.findings)  # the .err file: module chatter
    assert examples.files_read == 11


def test_exclude_and_path_pattern() -> None:
    result = magma.read_tree([EXAMPLES], exclude=["attempt-1"])
    assert not result.rows["file"].astype(str).str.contains("attempt-1").any()
    patterned = magma.read_tree([EXAMPLES], path_pattern="{cloud}/{platform}/gpu/size{nodes}/**", exclude=["attempt-1", "final"])
    assert {"cloud", "platform"} <= set(patterned.rows.columns)
    assert set(patterned.rows["cloud"].astype(str)) == {"aws", "azure", "google"}
    assert set(patterned.rows["environment"].astype(str)) == {"."}


@needs_shared
def test_whole_shared_study_counts() -> None:
    result = magma.read_tree([SHARED_MAGMA])
    assert result.files_read == 14
    assert result.rows["impl"].value_counts().to_dict() == {"magma": 9984, "cublas": 416}
    by_outcome = result.runs["outcome"].value_counts().to_dict()
    assert by_outcome == {"complete": 10, "cancelled": 2, "failed checks": 1, "assert-only": 1}
    big = result.runs.set_index("file").loc["experiments/azure/cyclecloud/gpu/size32/results/magma/magma-32n-323-iter-1.out"]
    assert big["rows"] == 4096 and big["processes"] == 256 and big["impossible"] == 1636
    assert (result.rows.groupby("file", observed=True)["warmup"].sum() > 0).all()
