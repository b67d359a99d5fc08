"""Many runs at once: config fields from file names, marker CSVs -> batch durations, the seed's
scaled efficiencies, and grouping real runs like the seed does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.metrics.kernels.efficiency import efficiency
from gpuscope.metrics.kernels.table import grouped
from gpuscope.parsers.profilers.markers import (
    batch_duration_s, batch_durations_ns, forward_pass_spans_ns, nvprof_batch_duration_s, parse_markers,
    pyprof_batch_duration_s, read_markers, scaled_efficiencies,
)
from gpuscope.parsers.patterns import DEFAULT_PATTERN, NamePattern, config_fields, config_frame

DATA = Path(__file__).parent.parent / "data" / "markers"
MARKERS = DATA / "markers_run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
SHARED_PYPROF = Path(__file__).resolve().parents[3] / "shared" / "data" / "pyprof" / "data" / "pcm" / "pyprof_kernels"
RUN_8 = "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.gzip"
RUN_1 = "run_0_config_1_2_ib_nvprof_2_resnet50_dali-cpu-to-gpu_32_fp32_fp32_ret_0_0.gzip"
needs_shared = pytest.mark.skipif(not (SHARED_PYPROF / RUN_8).is_file(), reason="../shared/data/pyprof is absent")


def test_config_fields_of_the_two_real_names() -> None:
    fields, findings = config_fields(SHARED_PYPROF / RUN_8)
    assert findings == []
    assert fields == {"run": 0, "nodes": 8, "gpus": 2, "network": "ib", "profiler": "nvprof", "workers": 2, "nn": "resnet50",
                      "data_loader": "dali-gpu", "batch_size": 32, "grad": "fp16", "comp": "fp32", "ret": 0, "ret_index": 0}
    fields, _ = config_fields(RUN_1)
    assert (fields["nodes"], fields["data_loader"], fields["grad"], fields["batch_size"]) == (1, "dali-cpu-to-gpu", "fp32", 32)


def test_marker_file_names_have_the_same_fields() -> None:
    assert config_fields(MARKERS.name)[0]["nodes"] == 1
    assert config_fields(MARKERS.name)[0]["data_loader"] == "dali-gpu"


def test_default_pattern_written_as_a_user_pattern_agrees() -> None:
    assert config_fields(RUN_8, DEFAULT_PATTERN)[0] == config_fields(RUN_8)[0]


def test_user_pattern_prefix_and_wildcards() -> None:
    assert config_fields(RUN_8, "run_{run}_config_{nodes}_{gpus}")[0] == {"run": 0, "nodes": 8, "gpus": 2}
    assert config_fields("exp_16n_bs64_v2.json", "exp_{nodes}n_bs{batch}*")[0] == {"nodes": 16, "batch": 64}


def test_non_matching_names_give_findings_not_errors() -> None:
    fields, findings = config_fields("results.csv")
    assert fields is None and findings[0].kind == "no-config" and "--name-pattern" in findings[0].message
    fields, findings = config_fields("results.csv", "run_{run}")
    assert fields is None and findings[0].kind == "no-config"
    fields, findings = config_fields("run_0_config_8_2_ib_ret_0_0.gzip")
    assert fields == {"run": 0, "field_1": 8, "field_2": 2, "field_3": "ib", "ret": 0, "ret_index": 0}
    assert findings[0].kind == "config-fields"


@pytest.mark.parametrize("bad", ["", "{}", "{a}{a}", "{1x}", "{open"])
def test_bad_user_patterns_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        NamePattern.compile(bad)


def test_config_frame_keeps_every_file() -> None:
    frame, findings = config_frame([RUN_8, RUN_1, "other.csv"])
    assert list(frame["file"]) == [RUN_8, RUN_1, "other.csv"]
    assert list(frame["nodes"].iloc[:2]) == [8, 1] and frame["nodes"].isna().iloc[2]
    assert len(findings) == 1


def test_marker_csv_durations() -> None:
    read = read_markers(MARKERS)
    assert read.findings == [] and len(read.table) == 34
    # End of Batch at +0, +100, +220, +520 ms: diffs 100, 120, 300 ms, median 120 ms.
    assert list(batch_durations_ns(read.table)) == [100_000_000, 120_000_000, 300_000_000]
    assert nvprof_batch_duration_s(read.table) == pytest.approx(0.12)
    # 30 Forward Pass markers; the seed drops the first 26; the last 4 are 50, 60, 70 ms apart.
    assert list(forward_pass_spans_ns(read.table)) == [50_000_000, 60_000_000, 70_000_000]
    assert pyprof_batch_duration_s(read.table) == pytest.approx(0.06)
    assert batch_duration_s(read.table) == pytest.approx(0.06)  # min(nvprof, pyprof)
    assert batch_duration_s(read.table, tau_s=0.05) == pytest.approx(0.05)  # min(tau, nvprof, pyprof)


def test_marker_csv_bad_lines_are_skipped_with_findings() -> None:
    read = read_markers(DATA / "bad_lines.csv")
    assert list(read.table["timestamp"]) == [1000, 1500, 4000]
    assert [(f.kind, f.line) for f in read.findings] == [("bad-line", 3), ("bad-line", 4), ("bad-line", 5)]
    assert all(f.file.endswith("bad_lines.csv") for f in read.findings)
    assert list(batch_durations_ns(read.table)) == [3000]


def test_marker_files_without_header_empty_or_missing() -> None:
    read = read_markers(DATA / "no_header.csv")
    assert read.table.empty and read.findings[0].kind == "no-header"
    assert parse_markers("").findings[0].kind == "empty"
    assert read_markers(DATA / "absent.csv").findings[0].kind == "unreadable"
    few = parse_markers("name_str,timestamp\nEnd of Batch,5\n").table
    assert nvprof_batch_duration_s(few) is None and pyprof_batch_duration_s(few) is None and batch_duration_s(few) is None


def test_scaled_efficiency_by_hand() -> None:
    # Seed In [23]: FLOPs.sum() / (25 * batch) * 1e-12 / 4.29 * 100 and Bytes.sum() / (25 * batch) * 1e-9 / 288 * 100.
    # batch 0.4 s -> 25 batches = 10 s; 4.29e12 FLOP / 10 s = 0.429 TFLOPS = 10 % of 4.29;
    # 576e9 B / 10 s = 57.6 GB/s = 20 % of 288.
    scaled = scaled_efficiencies(4.29e12, 576e9, 0.4, peak_tflops=4.29, peak_gbs=288)
    assert scaled.flops_efficiency_pct == pytest.approx(10)
    assert scaled.bandwidth_efficiency_pct == pytest.approx(20)


def test_scaled_efficiency_unknowns() -> None:
    assert scaled_efficiencies(1.0, 1.0, None, peak_tflops=1, peak_gbs=1).flops_efficiency_pct is None
    assert scaled_efficiencies(1.0, 1.0, 0.0, peak_tflops=1, peak_gbs=1).bandwidth_efficiency_pct is None
    only_flops = scaled_efficiencies(1e12, None, 1 / 25, peak_tflops=1, peak_gbs=None)
    assert only_flops.flops_efficiency_pct == pytest.approx(100) and only_flops.bandwidth_efficiency_pct is None


@needs_shared
def test_real_runs_grouped_like_the_seed() -> None:
    import pandas as pd

    from gpuscope.parsers.profilers import pyprof

    rows = []
    for name in (RUN_8, RUN_1):
        fields, _ = config_fields(name)
        eff = efficiency(pyprof.read_kernels(SHARED_PYPROF / name).table, peak_tflops=4.29, peak_gbs=288)
        rows.append({**fields, "compute_efficiency (%)": eff.compute_efficiency_pct, "FLOPS_efficiency (%)": eff.flops_efficiency_pct})
    out = grouped(pd.DataFrame(rows), ["batch_size", "nodes"])
    assert list(out["nodes"]) == [1, 8] and list(out["runs"]) == [1, 1]
    assert out["compute_efficiency (%)"].notna().all()


def test_marker_for_matches_the_profile_name_without_its_extension(tmp_path: Path) -> None:
    from gpuscope.parsers.profilers.markers import is_marker_file, marker_for

    stem = "run_0_config_8_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0"
    wanted = tmp_path / f"markers_{stem}.csv"
    other = tmp_path / "markers_run_0_config_8_2_ib.csv"  # a prefix of the name, but not up to a '.'
    assert is_marker_file(wanted) and not is_marker_file(tmp_path / f"{stem}.csv")
    assert marker_for(tmp_path / f"{stem}.gzip", [other, wanted]) == wanted
    assert marker_for(f"{stem}.csv", [wanted]) == wanted
    assert marker_for(tmp_path / f"{stem}_v2.gzip", [wanted, other]) is None


def test_marker_candidates_look_beside_the_profiles_folder(tmp_path: Path) -> None:
    from gpuscope.parsers.profilers.markers import marker_candidates

    kernels, markers, given = tmp_path / "pyprof_kernels", tmp_path / "nvprof_markers", tmp_path / "given"
    for folder in (kernels, markers, given):
        folder.mkdir()
    beside = markers / "markers_a.csv"
    same = kernels / "markers_b.csv"
    mine = given / "markers_a.csv"
    for path in (beside, same, mine):
        path.write_text("name_str,timestamp\n")
    found = marker_candidates([kernels / "a.gzip"], [mine])
    assert found[0] == mine  # --markers first, so it wins over the one found beside
    assert set(found) == {mine, same, beside}


def test_read_runs_uses_markers_and_warns_about_unused_ones(tmp_path: Path) -> None:
    import shutil

    from gpuscope.parsers.registry import read_profiles as read_runs

    profile = tmp_path / "run_0_config_1_2_ib_nvprof_2_resnet50_dali-gpu_32_fp16_fp32_ret_0_0.csv"
    shutil.copy(Path(__file__).parent.parent / "data" / "kernels" / profile.name, profile)
    shutil.copy(MARKERS, tmp_path / MARKERS.name)
    stray = tmp_path / "markers_someone_else.csv"
    stray.write_text("name_str,timestamp\n")
    runs = read_runs([profile, stray])
    assert runs.markers_found == 1 and runs.runs[0].batch_s == pytest.approx(0.06)
    assert [f.kind for f in runs.findings] == ["unused-markers"] and runs.findings[0].file == str(stray)
    assert runs.runs[0].fields["nodes"] == 1 and len(runs.kernels) == 40


def test_runs_table_and_grouping_of_run_rows() -> None:
    import pandas as pd

    from gpuscope.metrics.kernels.runs import grouped_table, run_efficiencies, runs_frame, runs_table

    kernels = pd.DataFrame({"kernel": ["a", "b"], "duration_ns": [1e9, 1e9], "flops": [4.29e12, 0.0], "bytes": [288e9, 0.0]})
    row = run_efficiencies(kernels, 4.29, 288, 0.08)  # 25 batches = 2 s, as long as the kernels
    assert row["compute_efficiency_pct"] == pytest.approx(50)
    assert row["flops_efficiency_pct"] == pytest.approx(50) and row["scaled_flops_efficiency_pct"] == pytest.approx(50)
    assert row["bandwidth_efficiency_pct"] == pytest.approx(50) and row["scaled_bandwidth_efficiency_pct"] == pytest.approx(50)
    frame = runs_frame([{"file": "x/r1.csv", "nodes": 1, "nn": "resnet50", **row},
                        {"file": "x/r2.csv", "nodes": 8, "nn": "resnet50", **run_efficiencies(kernels, 4.29, 288, None)}])
    table = runs_table(frame, ("nodes", "nn"))
    assert "nn" not in table.keys and "nodes" in table.keys and "Same in every run: nn=resnet50" in table.notes[0]
    assert table.rows[0][0] == "r1.csv" and runs_table(frame, ("nodes", "nn"), compact=False).rows[0][0] == "x/r1.csv"
    grouped = grouped_table(frame, ["nn"])
    assert grouped.records()[0]["runs"] == 2 and grouped.records()[0]["compute_efficiency_pct"] == pytest.approx(50)
    assert grouped.records()[0]["scaled_flops_efficiency_pct"] == pytest.approx(50)  # the mean skips the unknown
    with pytest.raises(ValueError, match="cannot group by gpus: the runs have fields nodes, nn"):
        grouped_table(frame, ["gpus"])
