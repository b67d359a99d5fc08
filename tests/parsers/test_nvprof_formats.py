"""nvprof as people keep it: GPU traces whose names carry the launching call's id (` [116]`),
`--metrics` with `%` / `GB/s` / `Mid (5)` values, the plain text summary (new and CUDA 8
layouts) and hand-made summary CSVs with units in the cells. Fixtures are one saxpy run on a
K40m, written by hand from the documented layouts (tests/data/NOTICE)."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.metrics.kernels.table import kernel_table
from gpuscope.parsers import registry
from gpuscope.parsers.profilers import nvprof
from gpuscope.parsers.profilers import nvprof_text
from gpuscope.parsers.profilers.kernel_table import KERNEL_COLUMNS
from gpuscope.parsers.profilers.csv_common import number_and_unit
from gpuscope.tui.app import GpuscopeApp
from gpuscope.tui.cli.main import main
from gpuscope.tui.model.kernels import build_model
from gpuscope.tui.screens.studies.kernels import KernelsScreen
from gpuscope.tui.widgets.result_table import ResultTableView
from loading_helpers import settled
from paths import ROOT

DATA = Path(__file__).parent.parent / "data" / "profiles"
SHARED_SQLITE = ROOT.parent / "shared" / "data" / "profiles" / "nsys_sqlite" / "pipit_saxpy_mpi_cuda_a100_nsys2022.2.sqlite"
TRACE = DATA / "nvprof_gpu_trace_launch_ids.csv"
METRICS = DATA / "nvprof_metrics_saxpy.csv"
SUMMARY_TEXT = DATA / "nvprof_gpu_summary.txt"
SUMMARY_CUDA8 = DATA / "nvprof_gpu_summary_cuda8.txt"
SUMMARY_CELLS = DATA / "nvprof_summary_units_in_cells.csv"
SAXPY = "saxpy(int, float, float*, float*)"
REDUCE = "reduce_sum(float const *, float*, int)"


def kinds(result) -> set[str]:
    return {f.kind for f in result.findings}


def problems(result) -> list:
    return [f for f in result.findings if f.severity != "info"]


# ------------------------------------------------------------------------------ GPU trace


def test_launch_ids_are_not_part_of_the_kernel_name() -> None:
    result = nvprof.read_kernels(TRACE)
    table = result.table
    assert not problems(result)
    assert list(table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)
    launches = table[table["op"] == "kernel"]
    assert list(launches["kernel"]) == [SAXPY, SAXPY, SAXPY, REDUCE]
    assert list(launches["launch_id"]) == [116, 123, 130, 139]
    ranked = kernel_table(table[table["op"] == "kernel"]).set_index("kernel")
    assert ranked.loc[SAXPY, "calls"] == 3 and ranked.loc[SAXPY, "total_ns"] == pytest.approx(98_272 + 97_984 + 98_112)
    assert len(ranked) == 2


# ------------------------------------------------------------------------------ --metrics


def test_metrics_with_units_give_the_profilers_own_efficiencies() -> None:
    result = nvprof.read_kernels(METRICS)
    assert not problems(result)
    table = result.table.set_index("kernel")
    saxpy, reduce = table.loc[SAXPY], table.loc[REDUCE]
    assert saxpy["calls"] == 3 and saxpy["flops"] == 3 * 2_097_152
    assert saxpy["bytes"] == 3 * 32 * (262_144 + 131_072)  # Kepler: transactions x 32 B
    assert (saxpy["sm_efficiency_pct"], saxpy["flop_sp_efficiency_pct"], saxpy["gld_efficiency_pct"]) == (97.85, 0.49, 100.0)
    assert saxpy["dram_read_throughput_gbs"] == pytest.approx(85.127)
    assert (saxpy["dram_utilization_level"], reduce["dram_utilization_level"]) == (5, 6)
    assert reduce["sm_efficiency_pct"] == 88.3 and reduce["flops"] == 1_048_576
    assert "achieved_occupancy" not in table.columns and "metric-unused" in kinds(result)  # plain counts: said, not kept
    assert result.meta["own_metrics"] == ("sm_efficiency_pct", "flop_sp_efficiency_pct", "gld_efficiency_pct",
                                          "dram_read_throughput_gbs", "dram_utilization_level")


def test_metric_throughput_units_are_converted_to_gbs() -> None:
    lines = ['"Device","Kernel","Invocations","Metric Name","Metric Description","Min","Max","Avg"']
    for i, value in enumerate(["512.5MB/s", "1.5TB/s", "2048B/s", "n/a"]):
        lines.append(f'"GPU (0)","k{i}()",1,"dram_write_throughput","Device Memory Write Throughput",{value},{value},{value}')
    table = nvprof.parse_csv("\n".join(lines) + "\n").table
    assert list(table["dram_write_throughput_gbs"].astype("float64").fillna(-1)) == pytest.approx([0.5125, 1500.0, 2.048e-6, -1])


def test_metrics_join_the_trace_of_the_same_run() -> None:
    trace, metrics = nvprof.read_kernels(TRACE).table, nvprof.read_kernels(METRICS).table
    joined, findings = nvprof.join_metrics(trace, metrics, "metrics.csv", "trace.csv")
    launches = joined[joined["op"] == "kernel"]
    assert list(launches["flops"]) == [2_097_152] * 3 + [1_048_576]
    assert list(launches["bytes"]) == [32 * (262_144 + 131_072)] * 3 + [32 * (131_072 + 128)]
    assert list(joined[joined["op"] != "kernel"]["bytes"]) == [4 * 1024**2] * 4  # copies keep their own bytes
    assert [f.kind for f in findings] == ["metrics-joined"] and "matched by kernel name and device" in findings[0].message


def test_a_summary_row_gets_per_call_values_times_its_calls() -> None:
    summary, metrics = nvprof.read_kernels(SUMMARY_TEXT).table, nvprof.read_kernels(METRICS).table
    joined, findings = nvprof.join_metrics(summary, metrics, "metrics.csv")
    by_name = joined.set_index("kernel")
    assert by_name.loc[SAXPY, "flops"] == 3 * 2_097_152 and by_name.loc[REDUCE, "flops"] == 1_048_576
    assert str(by_name.loc["[CUDA memset]", "flops"]) == "<NA>"
    assert "matched by kernel name)" in findings[0].message  # the summary names no device


def test_kernels_without_metrics_are_reported() -> None:
    trace = nvprof.read_kernels(TRACE).table
    metrics = nvprof.read_kernels(METRICS).table
    joined, findings = nvprof.join_metrics(trace, metrics[metrics["kernel"] == SAXPY], "metrics.csv")
    assert str(joined[joined["kernel"] == REDUCE]["flops"].iloc[0]) == "<NA>"
    assert [f.kind for f in findings] == ["metrics-joined", "metrics-missing"] and findings[1].count == 1


# ------------------------------------------------------------------------------ summaries


@pytest.mark.parametrize("path", [SUMMARY_TEXT, SUMMARY_CELLS])
def test_summary_text_and_units_in_cells(path: Path) -> None:
    assert registry.recognise(path).kind == "nvprof"
    result = registry.read(path)
    assert not problems(result)  # no "no-units": each cell says its unit
    table = result.table.set_index("kernel")
    assert list(table.index) == ["[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", SAXPY, REDUCE, "[CUDA memset]"]
    assert list(table["calls"]) == [2, 1, 3, 1, 1]
    assert list(table["duration_ns"]) == pytest.approx([1_622_600, 1_620_400, 294_370, 44_544, 1_536])
    assert table.loc[SAXPY, "avg_ns"] == pytest.approx(98_123) and table.loc[SAXPY, "min_ns"] == pytest.approx(97_984)
    assert list(table["op"]) == ["memcpy", "memcpy", "kernel", "kernel", "memset"]
    api = next(f for f in result.findings if f.kind == "api-rows")
    assert api.count == (4 if path == SUMMARY_TEXT else 1)  # host API rows left out, and said so
    ranked = kernel_table(result.table[result.table["op"] == "kernel"]).set_index("kernel")
    assert ranked.loc[SAXPY, "calls"] == 3


def test_cuda8_text_summary_without_type_column() -> None:
    result = registry.read(SUMMARY_CUDA8)
    assert not problems(result)
    table = result.table
    assert list(table["kernel"]) == ["[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "vectorAdd(float const *, float const *, float*, int)"]
    assert list(table["duration_ns"]) == pytest.approx([69_920, 33_888, 11_680])
    assert next(f for f in result.findings if f.kind == "api-rows").count == 3  # after `==1042== API calls:`


def test_summary_row_in_bad_shape_is_reported() -> None:
    text = SUMMARY_TEXT.read_text().replace("  294.37us  ", "  294.37parsecs  ")
    result = nvprof_text.parse_text(text, "x.txt")
    assert SAXPY not in set(result.table["kernel"])
    (bad,) = [f for f in result.findings if f.kind == "malformed"]
    assert bad.line == 8


def test_text_that_is_no_summary_is_an_unknown_format() -> None:
    (finding,) = nvprof.parse_csv("==1== Profiling application: ./a\nnothing here\n").findings
    assert finding.kind == "unknown-format" and "text summary" in finding.message


# ------------------------------------------------------------------------------ transfers beside the kernels


def summary(model) -> dict[str, str]:
    return dict(model.summary.rows)


def test_transfers_are_shown_beside_the_kernels() -> None:
    model = build_model([str(TRACE)], gpu="K40m")
    assert set(model.rankings["kernel"]["kernel"]) == {SAXPY, REDUCE}  # copies are not ranked as kernels...
    rows = {r["transfer"]: r for r in model.transfers.records()}  # ...but never dropped
    assert list(rows) == ["memcpy HtoD", "memcpy DtoH", "memset"]
    htod = rows["memcpy HtoD"]
    assert htod["calls"] == 2 and htod["total_ms"] == pytest.approx(1.622592) and htod["bytes"] == 8 * 1024**2
    assert htod["share_pct"] == pytest.approx(1_622_592 / 3_583_456 * 100)  # of kernels + transfers
    assert htod["gbs"] == pytest.approx(8 * 1024**2 / 1_622_592)
    lines = summary(model)
    assert lines["transfers (memcpy/memset)"] == "4" and lines["transfer share of GPU time %"] == "90.542"
    (dominant,) = [f for f in model.findings if f.kind == "transfers-dominate"]
    assert dominant.severity == "warning" and "90.5 %" in dominant.message


def test_summary_transfers_count_their_calls_and_have_no_bytes() -> None:
    model = build_model([str(SUMMARY_TEXT)], gpu="K40m")
    rows = {r["transfer"]: r for r in model.transfers.records()}
    assert rows["memcpy HtoD"]["calls"] == 2 and rows["memcpy HtoD"]["bytes"] is None  # n/a, not 0
    assert model.transfers.cell_text(0, model.transfers.keys.index("bytes")) == "n/a"
    assert summary(model)["transfer GB"].startswith("n/a")
    assert summary(model)["kernel launches"] == "4"  # saxpy's 3 calls + reduce_sum's 1


def test_a_profile_without_copies_has_no_transfer_lines() -> None:
    model = build_model([str(DATA / "nsys_cuda_gpu_kern_sum_16448.csv")], gpu="A100")
    assert model.transfers is None and "transfer ms" not in summary(model)
    assert not [f for f in model.findings if f.kind == "transfers-dominate"]


@pytest.mark.skipif(not SHARED_SQLITE.is_file(), reason="../shared/data/profiles/nsys_sqlite is absent")
def test_real_nsys_export_copies_dominate() -> None:
    model = build_model([str(SHARED_SQLITE)])
    rows = {r["transfer"]: r for r in model.transfers.records()}
    assert (rows["memcpy HtoD"]["calls"], rows["memcpy DtoH"]["calls"]) == (10, 5)
    assert rows["memcpy HtoD"]["bytes"] == 10 * 262_144_000
    transfer_ns = (rows["memcpy HtoD"]["total_ms"] + rows["memcpy DtoH"]["total_ms"]) * 1e6
    assert float(summary(model)["transfer share of GPU time %"]) == pytest.approx(transfer_ns / (transfer_ns + 88_573_480) * 100, abs=1e-3)
    assert any(f.kind == "transfers-dominate" for f in model.findings)


# ------------------------------------------------------------------------------ metrics with and without a trace


def test_trace_and_metrics_of_one_run_are_joined() -> None:
    model = build_model([str(TRACE), str(METRICS)], gpu="K40m")
    assert len(model.runs) == 1  # the metrics file is no run of its own: it has no times
    ranked = model.rankings["kernel"].set_index("kernel")
    assert ranked.loc[SAXPY, "flops"] == 3 * 2_097_152 and ranked.loc[SAXPY, "bytes"] == 3 * 32 * (262_144 + 131_072)
    assert ranked.loc[SAXPY, "flops_eff_pct"] == pytest.approx(3 * 2_097_152 / (98_272 + 97_984 + 98_112) / 4290 * 100)
    (row,) = [r for r in model.profiler_metrics.records() if r["kernel"] == SAXPY]
    assert row["sm_efficiency_pct"] == 97.85 and row["dram_read_throughput_gbs"] == pytest.approx(85.127)
    assert any(f.kind == "metrics-joined" for f in model.findings)
    assert any("joined into the launches of" in note for note in model.profiler_metrics.notes)


def test_each_metrics_file_joins_its_own_run(tmp_path: Path) -> None:
    """Two runs in one folder: each metrics file goes to the trace whose name it shares."""
    for run, flops in (("run_a", 2_097_152), ("run_b", 4_194_304)):
        shutil.copy(TRACE, tmp_path / f"{run}_trace.csv")
        (tmp_path / f"{run}_metrics.csv").write_text(METRICS.read_text().replace(",2097152,2097152,2097152", f",{flops},{flops},{flops}"))
    model = build_model([str(tmp_path)], gpu="K40m")
    assert len(model.runs) == 2
    joined = {Path(r["file"]).name: Path(r["joined_to"]).name for r in
              (dict(zip(model.profiler_metrics.keys, row)) for row in model.profiler_metrics.rows)}
    assert joined == {"run_a_metrics.csv": "run_a_trace.csv", "run_b_metrics.csv": "run_b_trace.csv"}
    assert model.rankings["kernel"].set_index("kernel").loc[SAXPY, "flops"] == 3 * (2_097_152 + 4_194_304)


def test_metrics_alone_are_shown_on_their_own(capsys: pytest.CaptureFixture[str]) -> None:
    model = build_model([str(METRICS)], gpu="K40m")
    assert not model.empty and model.rankings["kernel"].empty and len(model.runs) == 0
    assert any(f.kind == "metrics-alone" for f in model.findings)
    assert main(["kernels", str(METRICS), "--gpu", "K40m", "--format", "csv", "--table", "metrics"]) == 0
    rows = {r["kernel"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert float(rows[SAXPY]["flops"]) == 3 * 2_097_152 and float(rows[REDUCE]["sm_efficiency_pct"]) == 88.3
    assert float(rows[SAXPY]["dram_utilization_level"]) == 5 and rows[SAXPY]["calls"] == "3"


async def test_screen_shows_transfers_and_metrics_tabs() -> None:
    app = GpuscopeApp(first_screen=lambda: KernelsScreen([str(TRACE), str(METRICS)], gpu="K40m"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen: Any = await settled(app, pilot, KernelsScreen)
        transfers = screen.query_one("#kernels-transfers", ResultTableView).model
        assert [r["transfer"] for r in transfers.records()] == ["memcpy HtoD", "memcpy DtoH", "memset"]
        assert len(screen.query_one("#kernels-metrics", ResultTableView).model.rows) == 2
    app = GpuscopeApp(first_screen=lambda: KernelsScreen([str(METRICS)], gpu="K40m"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settled(app, pilot, KernelsScreen)
        assert screen.query_one("#kernels-tables").active == "tab-metrics"  # nothing timed: the metrics are what there is


# ------------------------------------------------------------------------------ properties

UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(1, 99_999), st.sampled_from(sorted(UNITS)), st.integers(1, 10**6),
                          st.sampled_from(["k", "void gemm<float, 128>(float const *, int)", "[CUDA memcpy HtoD]"])),
                min_size=1, max_size=5),
       st.booleans(), st.booleans())
def test_any_text_summary_reads_back(rows, with_type: bool, with_api: bool) -> None:
    """Rows written in nvprof's layout (any unit per cell, with or without the Type column,
    with API rows after the GPU rows) read back as written; API rows never become kernels."""
    header = ("            Type  " if with_type else "") + "Time(%)      Time     Calls       Avg       Min       Max  Name"
    lines = ["==7== Profiling result:", header]
    for i, (value, unit, calls, name) in enumerate(rows):
        time = f"{value / 1000:.3f}{unit}"
        prefix = (" GPU activities:" if i == 0 else "                ") if with_type else ""
        lines.append(f"{prefix}   10.00%  {time}  {calls:>8}  {time}  {time}  {time}  {name}{i}")
    if with_api:
        lines += ["      API calls:   90.00%  1.0000s         1  1.0000s  1.0000s  1.0000s  cudaMalloc"] if with_type else \
                 ["==7== API calls:", header, " 90.00%  1.0000s         1  1.0000s  1.0000s  1.0000s  cudaMalloc"]
    result = nvprof.parse_csv("\n".join(lines) + "\n", "generated.txt")
    assert not problems(result)
    table = result.table
    assert list(table["kernel"]) == [f"{name}{i}" for i, (_, _, _, name) in enumerate(rows)]
    assert list(table["calls"]) == [calls for _, _, calls, _ in rows]
    assert list(table["duration_ns"]) == pytest.approx([round(v / 1000, 3) * UNITS[u] for v, u, _, _ in rows])
    assert ("api-rows" in kinds(result)) == with_api


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1e6, allow_nan=False), st.sampled_from(["", "s", "ms", "us", "ns", "%", "GB/s", "MB/s", "KB"]))
def test_number_and_unit_reads_what_it_is_given(value: float, unit: str) -> None:
    parsed, got = number_and_unit(f"{value:.4f}{unit}")
    assert parsed == pytest.approx(round(value, 4)) and got == unit


FIXTURES = [TRACE, METRICS, SUMMARY_TEXT, SUMMARY_CUDA8, SUMMARY_CELLS]
CLEAN_NAMES = {path: sorted(set(nvprof.read_kernels(path).table["kernel"].astype(str))) for path in FIXTURES}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURES), st.data())
def test_a_mangled_row_costs_only_itself(path: Path, data) -> None:
    """Damage one data row (drop, cut, junk, duplicate, wrong unit): the reader never raises, and
    every kernel named on another row is still read."""
    lines = path.read_text().splitlines()
    names = CLEAN_NAMES[path]
    rows = [i for i, line in enumerate(lines) if any(n in line for n in names)]
    i = data.draw(st.sampled_from(rows))
    kept = {n for j in rows if j != i for n in names if n in lines[j]}
    action = data.draw(st.sampled_from(["drop", "cut", "junk", "dup", "unit"]))
    if action == "drop":
        lines.pop(i)
    elif action == "cut":
        lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    elif action == "junk":
        lines[i] = data.draw(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), max_size=40))
    elif action == "dup":
        lines.insert(i, lines[i])
    else:
        lines[i] = lines[i].replace("us", data.draw(st.sampled_from(["", "xs", "%", "GB/s"])), 1)
    result = nvprof.parse_csv("\n".join(lines), "mangled")
    assert list(result.table.columns[: len(KERNEL_COLUMNS)]) == list(KERNEL_COLUMNS)
    assert kept <= set(result.table["kernel"].astype(str))
