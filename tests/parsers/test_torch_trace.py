"""PyTorch profiler (Kineto) trace reader: real HTA traces (MIT) when ../shared is present,
small fixtures for edge cases, and bad files that must give one clear error finding."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from gpuscope.metrics.kernels.timeline import summarize
from gpuscope.parsers.profilers import torch_trace
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "profiles" / "pytorch_trace"
SIMPLE = SHARED / "hta_simple_add_a100.pt.trace.json.gz"
COUNTERS = SHARED / "hta_cupti_counters_a100.pt.trace.json.gz"
DATA = Path(__file__).resolve().parent.parent / "data" / "torch"
needs_shared = pytest.mark.skipif(not SIMPLE.is_file() or not COUNTERS.is_file(), reason="../shared/data/profiles/pytorch_trace is absent")


def errors(result):
    return [f for f in result.findings if f.severity == "error"]


@needs_shared
def test_simple_trace_kernels_streams_and_ops():
    result = torch_trace.read_kernels(SIMPLE)
    table = result.table
    assert list(table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)
    assert not errors(result)
    kernels = table[table["category"] == "kernel"]
    assert len(kernels) == 79
    assert sorted(kernels["stream"].unique().tolist()) == [7, 20]
    assert set(kernels["device"]) == {"0"}
    assert kernels["op"].notna().mean() > 0.9
    assert "aten::addmm" in set(kernels["op"].dropna())
    assert kernels["start_ns"].notna().all() and (kernels["duration_ns"] >= 0).all()
    assert kernels["bytes"].isna().all() and kernels["flops"].isna().all()
    copies = table[table["op"] == "memcpy"]
    assert len(copies) == 16 and set(copies["direction"]) == {"HtoD"} and copies["bytes"].notna().all()
    assert (table["op"] == "memset").sum() == 3
    # integer µs scaled exactly
    assert (table["start_ns"] % 1000 == 0).all()
    assert result.meta["gpu_name"] == "NVIDIA A100-PG509-200" and result.meta["num_sms"] == 108
    assert result.meta["total_global_mem"] == 42297524224
    assert "flops" in result.unavailable


@needs_shared
def test_simple_trace_busy_not_more_than_summed_and_streams_overlap():
    table = torch_trace.read_kernels(SIMPLE).table
    summary = summarize(table, include_copies=False).set_index("device")
    row = summary.loc["0"]
    assert row["intervals"] == 79
    assert row["busy_ns"] <= row["summed_ns"]
    assert row["overlap_ns"] > 0  # streams 7 and 20 run kernels concurrently
    assert row["busy_ns"] + row["idle_ns"] == pytest.approx(row["span_ns"])


@needs_shared
def test_cupti_counter_trace_has_measured_flops_and_ops():
    result = torch_trace.read_kernels(COUNTERS)
    table = result.table
    assert len(table) == 77
    assert (table["category"] == "cuda_profiler_range").all()
    assert table["flops"].notna().all() and (table["flops"] > 0).sum() > 50
    assert table["duration_ns"].isna().all() and table["range_ns"].notna().all()
    assert table["op"].notna().all()
    assert "aten::cudnn_convolution" in set(table["op"])
    kinds = {f.kind for f in result.findings}
    assert "counter-mode" in kinds and "missing-name" in kinds
    assert not errors(result)
    # first range: 2 * (hfma 4866048 + ffma 38731776)
    first = table.sort_values("start_ns").iloc[0]
    assert first["flops"] == 2 * (4866048 + 38731776)


def test_edge_cases_fixture():
    result = torch_trace.read_kernels(DATA / "edge_cases.json")
    table = result.table.set_index("kernel")
    assert result.meta["gpu_name"] == "Test GPU" and result.meta["num_sms"] == 10
    gemm = table.loc["gemm_kernel"]
    assert gemm["start_ns"] == 1700000000000030125  # string ts, exact to the ns
    assert gemm["duration_ns"] == 4500
    assert gemm["op"] == "aten::addmm"  # innermost op containing the launch
    assert gemm["stream"] == 7 and gemm["device"] == "0"
    orphan = table.loc["orphan_kernel"]
    assert orphan["start_ns"] == 1700000000000032001 and pd_isna(orphan["op"])
    no_args = table.loc["no_args_kernel"]
    assert no_args["device"] == "0" and no_args["stream"] == 7 and pd_isna(no_args["op"])
    bad = table.loc["bad_ts_kernel"]
    assert pd_isna(bad["start_ns"]) and pd_isna(bad["duration_ns"])
    copy = table.loc["Memcpy DtoH (Device -> Pinned)"]
    assert copy["op"] == "memcpy" and copy["direction"] == "DtoH" and copy["bytes"] == 4096
    assert copy["cpu_op"] == "aten::linear"
    memset = table.loc["Memset (Device)"]
    assert memset["op"] == "memset" and pd_isna(memset["direction"]) and memset["bytes"] == 64
    kinds = {f.kind: f.count for f in result.findings}
    assert kinds["unknown-correlation"] == 1
    assert kinds["missing-ts"] == 1 and kinds["impossible"] == 1
    assert kinds["skipped"] == 1
    assert kinds["no-op"] == 3
    assert not errors(result)
    summary = summarize(result.table)
    assert summary.loc[0, "skipped"] == 1
    assert summary.loc[0, "busy_ns"] <= summary.loc[0, "summed_ns"]


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_no_kernels_gives_empty_table_and_warning():
    result = torch_trace.read_kernels(DATA / "no_kernels.json")
    assert result.table.empty and list(result.table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)
    assert [f.kind for f in result.findings] == ["no-kernels"]
    assert summarize(result.table).empty


def test_gzip_fixture_reads_like_plain(tmp_path):
    packed = tmp_path / "edge.json.gz"
    packed.write_bytes(gzip.compress((DATA / "edge_cases.json").read_bytes()))
    plain = torch_trace.read_kernels(DATA / "edge_cases.json").table
    assert torch_trace.read_kernels(packed).table.drop(columns="source").equals(plain.drop(columns="source"))


def test_bare_event_list_is_accepted(tmp_path):
    doc = json.loads((DATA / "edge_cases.json").read_text())
    path = tmp_path / "list.json"
    path.write_text(json.dumps(doc["traceEvents"]))
    assert len(torch_trace.read_kernels(path).table) == 6


@pytest.mark.parametrize(
    ("name", "content", "kind"),
    [
        ("corrupt.json.gz", gzip.compress(b'{"traceEvents": []}' * 50, mtime=0)[:40], "corrupt"),
        ("truncated.json", b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1', "truncated"),
        ("garbage.json", b'{"traceEvents": [}]}', "corrupt"),
        ("empty.json", b"", "empty"),
        ("blank.json.gz", gzip.compress(b"  \n", mtime=0), "empty"),
        ("binary.json", bytes(range(256)) * 4, "binary"),
        ("latin1.json", b'{"traceEvents": [\xff\xfe]}', "corrupt"),
        ("number.json", b"42", "format"),
        ("object.json", b'{"foo": 1}', "format"),
        ("deep.json", b"[" * 100000 + b"]" * 100000, None),
    ],
)
def test_bad_files_give_one_error_finding(tmp_path, name, content, kind):
    path = tmp_path / name
    path.write_bytes(content)
    result = torch_trace.read_kernels(path)
    assert result.table.empty
    errs = errors(result)
    assert len(errs) == 1 and errs[0].file == str(path)
    if kind:
        assert errs[0].kind == kind


def test_absurd_numbers_become_null_not_errors(tmp_path):
    events = [
        {"ph": "X", "cat": "kernel", "name": "k1", "ts": "1e999999", "dur": 1e308, "args": {"stream": 10**30, "correlation": "x"}},
        {"ph": "X", "cat": "kernel", "name": "k2", "ts": "NaN", "dur": "Infinity", "args": {"device": True, "stream": 3.5}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy PtoP (Device -> Device)", "ts": 1, "dur": 1, "args": {"bytes": "1e400"}},
        {"ph": "X", "cat": "cuda_profiler_range", "name": "k3", "ts": 5, "dur": 1, "args": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "9e400"}},
    ]
    path = tmp_path / "absurd.json"
    path.write_text(json.dumps({"traceEvents": events}))
    result = torch_trace.read_kernels(path)
    table = result.table.set_index("kernel")
    assert len(table) == 4 and not errors(result)
    assert pd_isna(table.loc["k1", "start_ns"]) and pd_isna(table.loc["k1", "stream"])
    assert pd_isna(table.loc["k2", "start_ns"]) and pd_isna(table.loc["k2", "duration_ns"])
    assert table.loc["Memcpy PtoP (Device -> Device)", "direction"] == "PtoP"
    assert pd_isna(table.loc["Memcpy PtoP (Device -> Device)", "bytes"]) and pd_isna(table.loc["k3", "flops"])
    summarize(result.table)


def test_missing_file_and_folder(tmp_path):
    assert errors(torch_trace.read_kernels(tmp_path / "nope.json"))[0].kind == "unreadable"
    assert errors(torch_trace.read_kernels(tmp_path))[0].kind == "unreadable"
