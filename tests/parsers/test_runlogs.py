"""`parsers.runlogs.read_runs` on the hand-written fixtures in tests/data/scaling (see its README):
one run per log, resources and where they came from, time, status, quality, curves, findings."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from gpuscope.parsers.runlogs.read import CURVE_COLUMNS, RUN_COLUMNS, RunsResult, benchmark_name, compile_resources_pattern, read_runs
from gpuscope.tui.model.scaling import build_model

DATA = Path(__file__).parent.parent / "data" / "scaling"


def _by_name(result: RunsResult) -> dict[str, pd.Series]:
    return {Path(str(row["source"]).split(":")[0]).name + (":" + str(row["source"]).split(":")[1] if ":" in str(row["source"]) else ""): row for _, row in result.runs.iterrows()}


def _kinds(result: RunsResult, file_part: str) -> set[str]:
    return {f.kind for f in result.findings if file_part in f.file}


def test_schema_and_types() -> None:
    result = read_runs([DATA])
    assert list(result.runs.columns[: len(RUN_COLUMNS)]) == list(RUN_COLUMNS)
    assert all(c.startswith("set_") for c in result.runs.columns[len(RUN_COLUMNS):])
    assert list(result.curves.columns) == list(CURVE_COLUMNS)
    for column in ("resources", "nodes", "gpus", "threads", "processes", "epochs"):
        assert str(result.runs[column].dtype) == "Int64", column
    assert str(result.runs["converged"].dtype) == "boolean"
    assert result.runs["time_s"].dtype == float
    assert set(result.runs["status"]) <= {"ok", "aborted", "failed", "cancelled", "timeout", "no-timing"}
    assert set(result.runs["format"]) <= {"seed002", "seed004", "mlperf", "reframe", "sacct", "table"}
    known = result.runs["resources"].dropna()
    assert (known >= 1).all()
    assert not (result.runs["time_s"] == 0).any(), "a time the log does not give is NaN, never 0"
    assert not [f for f in result.findings if f.kind == "reader-bug"]


def test_seed002_logs_one_run_per_log_with_ranks_counted_once() -> None:
    result = read_runs([DATA / "seed002"])
    runs = _by_name(result)
    one, four, eight = runs["slurm-4123455.out"], runs["slurm-4123456.out"], runs["slurm-4123457.out"]
    assert (one["gpus"], four["gpus"], eight["gpus"]) == (1, 4, 8)
    assert (one["nodes"], four["nodes"], eight["nodes"]) == (1, 1, 2)
    assert four["processes"] == 4 and eight["processes"] == 8
    assert one["series"] == four["series"] == eight["series"] == "spiral_mlp (gpus)"
    assert one["resource_kind"] == "gpus" and one["resources"] == 1
    assert "Number of GPUs: 1" in one["resources_from"]
    assert "Total GPUs: 8" in eight["resources_from"]
    assert one["time_s"] == pytest.approx(362.45) and eight["time_s"] == pytest.approx(57.14)
    assert four["time_s"] == pytest.approx(95.23)  # four ranks printed it: the slowest
    assert "Total training time" in four["time_from"]
    assert one["quality_name"] == "val_loss" and one["quality"] == pytest.approx(0.1187) and not one["quality_higher_is_better"]
    assert one["epochs"] == 50 and one["set_local_batch_size"] == 32 and one["set_global_batch_size"] == 32
    assert one["set_code_version"] == "PyTorch 2.5.1"
    assert pd.isna(one["converged"])
    ranks = [f for f in result.findings if f.kind == "ranks"]
    assert len(ranks) == 1 and ranks[0].count == 4 and "4123456" in ranks[0].file


def test_seed002_summary_table() -> None:
    result = read_runs([DATA / "seed002" / "summary.txt"])
    runs = result.runs.sort_values("resources")
    assert list(runs["resources"]) == [1, 4, 8]
    assert list(runs["nodes"]) == [1, 1, 2]
    assert list(runs["time_s"]) == pytest.approx([362.45, 95.23, 57.14])
    assert list(runs["epochs"]) == [50, 50, 50]
    assert list(runs["label"]) == ["Single GPU", "4 GPUs (1 node)", "8 GPUs (2 nodes)"]
    assert list(runs["epoch_time_s"]) == pytest.approx([7.25, 1.9, 1.14], abs=0.01)
    assert not [c for c in runs.columns if c.startswith("set_")]  # a name and a result are not settings
    assert runs["source"].str.contains(r"summary.txt:\d+$").all()


def test_seed004_threads_from_job_script_and_folder_name() -> None:
    result = read_runs([DATA / "seed004"])
    runs = {Path(s).name: row for s, row in zip(result.runs["source"], (r for _, r in result.runs.iterrows()))}
    c1, c2, t4 = runs["log.mnist-1001"], runs["log.mnist-1002"], runs["log.mnist-1003"]
    assert (c1["threads"], c2["threads"], t4["threads"]) == (1, 2, 4)
    assert c1["resources_from"] == "#SBATCH -c 1 in submit_mnist.sh"
    assert "folder name 'threads-4'" in t4["resources_from"]
    assert c1["resource_kind"] == "threads" and c1["series"] == c2["series"] == t4["series"]
    assert c1["time_s"] == pytest.approx(84.31276512)
    assert c1["epochs"] == 2 and c1["samples"] == 120000
    assert c1["quality_name"] == "accuracy" and c1["quality"] == pytest.approx(0.985) and c1["quality_higher_is_better"]
    curve = result.curves[result.curves["source"].str.endswith("log.mnist-1001")]
    assert set(curve["metric"]) == {"loss", "val_loss", "accuracy"}
    acc = curve[curve["metric"] == "accuracy"].set_index("epoch")["value"]
    assert acc.to_dict() == pytest.approx({1: 0.9712, 2: 0.985})
    assert (curve["resources"] == 1).all()
    assert not [f for f in result.findings if f.severity != "info"]


def test_no_timing_line_gives_nan_a_status_and_keeps_the_curve() -> None:
    result = read_runs([DATA / "bad" / "no_timing-threads-2.out"])
    run = result.runs.iloc[0]
    assert math.isnan(run["time_s"]) and run["time_from"] == ""
    assert run["status"] == "timeout"  # the slurmstepd time-limit line
    assert run["threads"] == 2 and "SLURM_CPUS_PER_TASK=2" in run["resources_from"]
    assert len(result.curves) == 4
    assert any(f.kind == "timeout" and f.line == 9 for f in result.findings)


def test_mixed_and_unknown_units() -> None:
    result = read_runs([DATA / "bad" / "mixed_units-4gpu.out", DATA / "bad" / "weird_unit-2gpu.out"])
    runs = _by_name(result)
    assert runs["mixed_units-4gpu.out"]["time_s"] == pytest.approx(95.23)
    assert "mixed-units" in _kinds(result, "mixed_units")
    weird = runs["weird_unit-2gpu.out"]
    assert math.isnan(weird["time_s"]) and weird["status"] == "no-timing"
    assert {"mixed-units", "no-timing"} <= _kinds(result, "weird_unit")


def test_sacct_rows_and_lookup_by_job_id() -> None:
    alone = read_runs([DATA / "other" / "sacct.txt"])
    runs = alone.runs.set_index(alone.runs["source"].str.extract(r":(\d+)$")[0])
    assert len(alone.runs) == 3  # the pending job is left out, steps are not runs
    first = runs.loc["2"]
    assert (first["gpus"], first["nodes"], first["threads"], first["time_s"]) == (4, 1, 72, 161.0)
    assert first["benchmark"] == "mlp_multi_gpu" and first["status"] == "ok"
    assert "gres/gpu=4" in first["resources_from"]
    assert runs.loc["7"]["status"] == "timeout" and runs.loc["7"]["time_s"] == 86412.0
    assert "unfinished" in _kinds(alone, "sacct")
    # with the log of job 4123456: one run, not two; the log's own lines win
    both = read_runs([DATA / "other" / "sacct.txt", DATA / "seed002" / "slurm-4123456.out"])
    assert len(both.runs) == 3
    assert any(s.endswith("slurm-4123456.out") for s in both.runs["source"])


def test_reframe_perflogs() -> None:
    result = read_runs([DATA / "other" / "osu_test.log", DATA / "other" / "StreamTest.log"])
    osu = result.runs[result.runs["benchmark"] == "osu_test"].sort_values("resources")
    assert list(osu["resources"]) == [2, 4, 8] and set(osu["resource_kind"]) == {"processes"}
    assert list(osu["time_s"]) == pytest.approx([8.5, 4.6, 9.1])  # 9100 ms
    assert list(osu["status"]) == ["ok", "ok", "failed"]
    stream = result.runs[result.runs["benchmark"] == "StreamWithRefTest"].iloc[0]
    assert stream["threads"] == 4 and stream["time_s"] == 12.5 and stream["quality_name"] == "Copy"


def test_table_mixed_units_and_missing_time() -> None:
    result = read_runs([DATA / "other" / "table.csv"])
    runs = result.runs.sort_values("resources")
    assert list(runs["time_s"])[:3] == pytest.approx([12.0, 6.5, 3.5])
    assert math.isnan(list(runs["time_s"])[3]) and list(runs["status"])[3] == "no-timing"
    assert {"mixed-units", "no-timing"} <= _kinds(result, "table.csv")
    assert set(runs["series"]) == {"stencil (threads)"}


def test_mlperf_log_cut_short() -> None:
    result = read_runs([DATA / "other" / "resnet_cut.txt"])
    run = result.runs.iloc[0]
    assert run["status"] == "no-timing" and math.isnan(run["time_s"])
    assert run["nodes"] == 2 and "submission_platform" in run["resources_from"]
    assert run["quality"] == pytest.approx(0.2) and run["epochs"] == 2
    assert {"bad-line", "no-timing"} <= _kinds(result, "resnet_cut")


def test_single_configuration_and_single_runs_are_findings() -> None:
    result = read_runs([DATA / "seed002" / "slurm-4123455.out"])
    # one configuration is said once, by the analysis; the reader does not judge scaling
    assert not any("configuration" in f.message for f in result.findings)
    said = [f.message for f in build_model(result).findings if "one configuration" in f.message or "configurations" in f.message]
    assert said == ["spiral_mlp (gpus): one configuration (1 GPU): no scaling to compute"]
    result = read_runs([DATA / "seed004"])
    assert any(f.kind == "single-run" for f in result.findings)


def test_resources_option_wins_and_says_so(tmp_path: Path) -> None:
    for n in (3, 6):
        folder = tmp_path / f"run-w{n}"
        folder.mkdir()
        (folder / "out.log").write_text((DATA / "seed004" / "c1" / "log.mnist-1001").read_text())
    result = read_runs([tmp_path], resources_pattern="run-w{processes}/*")
    assert sorted(result.runs["resources"]) == [3, 6]
    assert set(result.runs["resource_kind"]) == {"processes"}
    assert result.runs["resources_from"].str.startswith("--resources").all()
    with pytest.raises(ValueError):
        compile_resources_pattern("run-{cores}")
    bad = read_runs([tmp_path], resources_pattern="{bogus}")
    assert any(f.kind == "bad-pattern" for f in bad.findings)


def test_per_rank_files_of_one_job_count_once(tmp_path: Path) -> None:
    text = "SLURM_JOB_ID=77\nSLURM_NTASKS=2\n\nTotal Training Time: {} s\nNumber of epochs: 1\nTotal epochs/s: 0.1\n"
    (tmp_path / "rank0.out").write_text(text.format(10.0))
    (tmp_path / "rank1.out").write_text(text.format(10.5))
    result = read_runs([tmp_path])
    assert len(result.runs) == 1 and result.runs.iloc[0]["time_s"] == 10.5
    assert any(f.kind == "ranks" and f.count == 2 for f in result.findings)


def test_unreadable_and_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "empty.out").write_text("")
    (tmp_path / "notes.txt").write_text("nothing to see here\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    result = read_runs([tmp_path / "empty.out", tmp_path / "notes.txt", tmp_path / "blob.bin", tmp_path / "missing.log"])
    assert result.runs.empty and list(result.runs.columns) == list(RUN_COLUMNS)
    kinds = {f.kind for f in result.findings}
    assert {"empty", "not-a-run-log", "binary", "missing"} <= kinds
    walked = read_runs([tmp_path])
    assert walked.runs.empty and [f.kind for f in walked.findings] == ["not-a-run-log"]


def test_benchmark_name_strips_resource_tokens() -> None:
    assert benchmark_name("spiral_mlp_4gpus_1node") == "spiral_mlp"
    assert benchmark_name("spiral_mlp_2nodes_8gpus") == "spiral_mlp"
    assert benchmark_name("mnist") == "mnist"
    assert benchmark_name("") is None
